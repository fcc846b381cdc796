package grpclock_test

import (
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestKeyPrefixCompanion: a key prefix that makes every lock name the name
// of another lock's companion key ("redisson_lock_token:", the fencing
// counters' prefix) would answer every call InvalidArgument, blaming the
// client's key: the interceptors refuse it when built, as they refuse a
// prefix with a broken hash tag.
func TestKeyPrefixCompanion(t *testing.T) {
	t.Parallel()
	lock := grpclock.LockFunc(func(string) (scriptlock.Locker, error) { return nil, errors.New("unused") })
	for _, p := range []string{"redisson_lock_token:", "scriptlock_fair_queue:app:"} {
		opts := []grpclock.Option{grpclock.WithKeyPrefix(p), grpclock.WithAllMethods(grpclock.Metadata("x-order-id"))}
		if panics(func() { grpclock.UnaryServerInterceptor(lock, opts...) }) == nil {
			t.Errorf("unary interceptor with key prefix %q built; every call would answer InvalidArgument", p)
		}
		if panics(func() { grpclock.StreamServerInterceptor(lock, opts...) }) == nil {
			t.Errorf("stream interceptor with key prefix %q built; every call would answer InvalidArgument", p)
		}
	}
}
