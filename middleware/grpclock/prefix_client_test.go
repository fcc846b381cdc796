package grpclock_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestKeyPrefixAfterClientPrefix: Mutexes and FairMutexes hand the
// interceptor's key to a Client that puts its own key prefix first. A
// WithKeyPrefix that, after the Client's ("redisson_" and "sc:", a
// semaphore's channel; "orders:rwlock_" and "timeout:", a read hold's lease
// key with an integer key) names another lock's companion keys would make
// the Client refuse every lock name (or every integer key's), answering the
// calls InvalidArgument as if their keys were bad. The interceptor
// constructors refuse such a prefix, as they refuse one naming companion keys
// alone; prefixes that leave lock names valid are accepted and lock.
func TestKeyPrefixAfterClientPrefix(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	for _, tc := range []struct{ client, prefix, key string }{
		{"redisson_", "sc:", "abc"},
		{"orders:rwlock_", "timeout:", "42"},
	} {
		c, err := scriptlock.New(env.Node.Client(t), scriptlock.WithKeyPrefix(tc.client))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		for name, locks := range map[string]grpclock.LockFunc{"Mutexes": grpclock.Mutexes(c), "FairMutexes": grpclock.FairMutexes(c)} {
			opts := []grpclock.Option{grpclock.WithKeyPrefix(tc.prefix), grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id"))}
			if p := panics(func() { grpclock.StreamServerInterceptor(locks, opts...) }); p == nil {
				t.Errorf("%s of a Client with key prefix %q: stream interceptor with WithKeyPrefix(%q) built", name, tc.client, tc.prefix)
			}
			var icpt grpc.UnaryServerInterceptor
			if p := panics(func() { icpt = grpclock.UnaryServerInterceptor(locks, opts...) }); p != nil {
				t.Logf("%s, %q after %q: %v", name, tc.prefix, tc.client, p)
				continue
			}
			conn := start(t, &server{unary: fenceReply}, []grpc.ServerOption{grpc.ChainUnaryInterceptor(icpt)})
			_, err := call(context.Background(), conn, "Pay", order(tc.key, "", 0, ""))
			t.Errorf("%s of a Client with key prefix %q: unary interceptor with WithKeyPrefix(%q) built; key %q answered %v (code %s)",
				name, tc.client, tc.prefix, tc.key, err, status.Code(err))
		}
		// One letter more and the names are no companion keys: accepted,
		// and the call is locked.
		locks := grpclock.Mutexes(c)
		var icpt grpc.UnaryServerInterceptor
		if p := panics(func() {
			icpt = grpclock.UnaryServerInterceptor(locks, grpclock.WithKeyPrefix(tc.prefix[:len(tc.prefix)-1]+"s:"), grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id")))
		}); p != nil {
			t.Errorf("WithKeyPrefix(%q) after the Client's key prefix %q refused: %v", tc.prefix[:len(tc.prefix)-1]+"s:", tc.client, p)
			continue
		}
		conn := start(t, &server{unary: fenceReply}, []grpc.ServerOption{grpc.ChainUnaryInterceptor(icpt)})
		if _, err := call(context.Background(), conn, "Pay", order(tc.key, "", 0, "")); err != nil || status.Code(err) != codes.OK {
			t.Errorf("key %q under WithKeyPrefix(%q) after %q: %v", tc.key, tc.prefix[:len(tc.prefix)-1]+"s:", tc.client, err)
		}
	}
}
