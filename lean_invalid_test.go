package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A LeanMutex's bad input is reported as every lock's is: the package, the
// operation and the lock's name, then ErrInvalidArgument. Its nil context and
// negative wait said only "invalid argument: ...".
func TestLeanMutexInvalidNamesLock(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	l := mustLean(t, newTestClient(t, node.Client(t)), "lean")
	var nilCtx context.Context
	ctx := testCtx(t, 5*time.Second)
	for what, call := range map[string]func() (context.Context, error){
		"Lock(nil)":                func() (context.Context, error) { return l.Lock(nilCtx) },
		"TryLock(nil)":             func() (context.Context, error) { return l.TryLock(nilCtx, 0) },
		"TryLock(-1)":              func() (context.Context, error) { return l.TryLock(ctx, -1) },
		"LockWithLease(nil)":       func() (context.Context, error) { return l.LockWithLease(nilCtx, time.Second) },
		"TryLockWithLease(-1)":     func() (context.Context, error) { return l.TryLockWithLease(ctx, -1, time.Second) },
		"TryLockWithLease(nil, 0)": func() (context.Context, error) { return l.TryLockWithLease(nilCtx, 0, time.Second) },
	} {
		_, err := call()
		if !errors.Is(err, ErrInvalidArgument) || !strings.HasPrefix(err.Error(), `scriptlock: lock "lean": `) {
			t.Errorf("%s: %v, want ErrInvalidArgument naming the lock", what, err)
		}
	}
	if n := dbsize(t, node); n != 0 {
		t.Errorf("%d keys written", n)
	}
}
