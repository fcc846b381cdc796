package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// valueCtx is a context passed by value whose type cannot be compared (it
// has a func field), as a caller's own context type may be.
type valueCtx struct {
	context.Context
	trace func() string
}

// TestLockUncomparableContext: Lock and TryLock take any context. A
// context whose dynamic type cannot be compared made them panic
// ("comparing uncomparable type") once an attempt was made, as the wait
// compared it with its own.
func TestLockUncomparableContext(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := valueCtx{Context: testCtx(t, 30*time.Second), trace: func() string { return "t" }}
	for name, l := range map[string]interface {
		Lock(context.Context) (context.Context, error)
		TryLock(context.Context, time.Duration) (context.Context, error)
		Unlock(context.Context) error
	}{
		"Mutex":     mustMutex(t, c, "uncomparable-ctx-mutex"),
		"FairMutex": mustFair(t, c, "uncomparable-ctx-fair"),
		"LeanMutex": mustLean(t, c, "uncomparable-ctx-lean"),
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panicked with a context of an uncomparable type: %v", name, r)
				}
			}()
			lctx, err := l.Lock(ctx)
			if err != nil {
				t.Fatalf("%s: Lock: %v", name, err)
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatalf("%s: Unlock: %v", name, err)
			}
			lctx, err = l.TryLock(ctx, time.Second)
			if err != nil {
				t.Fatalf("%s: TryLock: %v", name, err)
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatalf("%s: Unlock: %v", name, err)
			}
		}()
	}
}
