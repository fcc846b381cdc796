package grpclock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// A LockFunc that refuses the key's lock name answers InvalidArgument, even
// with fail-open; invalid lock options panic at setup, as invalid
// interceptor options do.
func TestLockFuncErrors(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	badName := func(key string) (scriptlock.Locker, error) {
		return nil, fmt.Errorf("scriptlock: mutex %q: %w", key, scriptlock.ErrInvalidName)
	}
	opts := append(lockOpts(env), grpclock.WithFailOpen(true))
	s := &server{unary: fenceReply}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(badName, opts...))})
	if _, err := call(context.Background(), conn, "Pay", order("42", "", 0, "")); status.Code(err) != codes.InvalidArgument {
		t.Errorf("invalid lock name: %v, want InvalidArgument", err)
	}
	for name, mk := range map[string]func(){
		"Mutexes":     func() { grpclock.Mutexes(env.Locks, scriptlock.WithLease(-time.Second)) },
		"FairMutexes": func() { grpclock.FairMutexes(env.Locks, scriptlock.WithWaiterTimeout(time.Nanosecond)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with an invalid option did not panic", name)
				}
			}()
			mk()
		}()
	}
}
