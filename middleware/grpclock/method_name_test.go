package grpclock_test

import (
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestMethodNotFullName: WithMethod given a name that no call can have
// (gRPC hands interceptors "/package.Service/Method") left the method it
// meant unlocked, silently unless Validate was called. The interceptor
// constructors refuse it, as they refuse a key source that names nothing.
func TestMethodNotFullName(t *testing.T) {
	t.Parallel()
	lock := grpclock.LockFunc(func(string) (scriptlock.Locker, error) { return nil, errors.New("unused") })
	for _, m := range []string{"Pay", "grpclocktest.Orders/Pay", "/grpclocktest.Orders/", "/Pay", "//Pay", ""} {
		opt := grpclock.WithMethod(m, grpclock.Field("order_id"))
		if p := panics(func() { grpclock.UnaryServerInterceptor(lock, opt) }); p == nil {
			t.Errorf("unary interceptor with WithMethod(%q): built", m)
		}
		if p := panics(func() { grpclock.StreamServerInterceptor(lock, opt) }); p == nil {
			t.Errorf("stream interceptor with WithMethod(%q): built", m)
		}
	}
	if p := panics(func() {
		grpclock.UnaryServerInterceptor(lock, grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id")))
	}); p != nil {
		t.Errorf("WithMethod(%q) refused: %v", svc+"Pay", p)
	}
}

// TestIdempotentMethodNotFullName: WithIdempotentMethods given a name no
// call has left the method meant without Idempotency-Key handling (a retry
// ran it again), silently unless ValidateIdempotency was called. The
// interceptor constructor refuses it.
func TestIdempotentMethodNotFullName(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	for _, m := range []string{"Pay", "grpclocktest.Orders/Pay", "/grpclocktest.Orders/"} {
		if p := panics(func() { grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(m)) }); p == nil {
			t.Errorf("idempotency interceptor with WithIdempotentMethods(%q): built", m)
		}
	}
	if p := panics(func() { grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(svc+"Pay")) }); p != nil {
		t.Errorf("WithIdempotentMethods(%q) refused: %v", svc+"Pay", p)
	}
}
