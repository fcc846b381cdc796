package grpclock_test

import (
	"testing"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestClientIdempotentMethodNotFullName: the client interceptor given a
// WithIdempotentMethods name no call has ("Orders/Pay") attached no key to
// the method meant, silently, so the client's retries of it ran again on a
// server that does not require keys. Its constructor refuses the name, as
// the server interceptor's does.
func TestClientIdempotentMethodNotFullName(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"Pay", "grpclocktest.Orders/Pay", "/grpclocktest.Orders/", ""} {
		if p := panics(func() { grpclock.IdempotencyUnaryClientInterceptor(grpclock.WithIdempotentMethods(m)) }); p == nil {
			t.Errorf("client interceptor with WithIdempotentMethods(%q): built", m)
		}
	}
	if p := panics(func() { grpclock.IdempotencyUnaryClientInterceptor(grpclock.WithIdempotentMethods(svc + "Pay")) }); p != nil {
		t.Errorf("WithIdempotentMethods(%q) refused: %v", svc+"Pay", p)
	}
	if p := panics(func() { grpclock.IdempotencyUnaryClientInterceptor() }); p != nil {
		t.Errorf("no options refused: %v", p)
	}
}
