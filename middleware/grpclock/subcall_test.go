package grpclock_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestInProcessSubCallsDoNotShareOwner: calls a locked handler makes in
// process with its own context (an in-process channel that passes context
// values, as grpchan's inprocgrpc does) are calls of their own: two of them
// on one order exclude each other. The owner kept for two lock
// interceptors in one call's chain was taken by both, so they re-entered
// one lock and ran at once.
func TestInProcessSubCallsDoNotShareOwner(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	ic := grpclock.UnaryServerInterceptor(env.LockFunc(), grpclock.WithKeyPrefix(env.Prefix),
		grpclock.WithWait(5*time.Second), grpclock.WithAllMethods(grpclock.Func(func(_ context.Context, _ string, req any) (string, error) {
			return req.(string), nil
		})))
	var running, most atomic.Int64
	order := func(ctx context.Context, req any) (any, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(150 * time.Millisecond)
		return "ok", nil
	}
	batch := func(ctx context.Context, req any) (any, error) {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = ic(ctx, "order-7", &grpc.UnaryServerInfo{FullMethod: svc + "Pay"}, order)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return "ok", nil
	}
	if _, err := ic(context.Background(), "batch-1", &grpc.UnaryServerInfo{FullMethod: svc + "Batch"}, batch); err != nil {
		t.Fatal(err)
	}
	if n := most.Load(); n != 1 {
		t.Errorf("%d calls on order 7 ran at once under its lock, want 1", n)
	}
}
