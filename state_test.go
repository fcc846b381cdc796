package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// State answers the three questions of Redisson's isLocked, getHoldCount and
// remainTimeToLive at once, for every lock kind.
func TestStateEveryLock(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 30*time.Second)
	const lease = 5 * time.Second
	for _, kind := range []string{"Mutex", "FairMutex"} {
		t.Run(kind, func(t *testing.T) {
			var (
				state func(context.Context) (LockState, error)
				lockL func(context.Context, time.Duration) (context.Context, error)
			)
			if kind == "Mutex" {
				m := mustMutex(t, c, "state-"+kind)
				state, lockL = m.State, m.LockWithLease
			} else {
				f := mustFair(t, c, "state-"+kind)
				state, lockL = f.State, f.LockWithLease
			}
			if st, err := state(ctx); err != nil || st != (LockState{}) {
				t.Fatalf("free: State = %+v, %v; want zero", st, err)
			}
			lctx, err := lockL(ctx, lease)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lockL(lctx, lease); err != nil {
				t.Fatal(err)
			}
			st, err := state(lctx)
			if err != nil || !st.Locked || st.HoldCount != 2 || st.Lease <= 0 || st.Lease > lease {
				t.Fatalf("held twice with lease %s: State = %+v, %v", lease, st, err)
			}
			if st, err := state(WithOwner(ctx, "other")); err != nil || !st.Locked || st.HoldCount != 0 {
				t.Fatalf("asked by another owner: State = %+v, %v", st, err)
			}
		})
	}
	t.Run("RWMutex", func(t *testing.T) {
		rw := mustRW(t, c, "state-rw")
		if st, err := rw.State(ctx); err != nil || st != (RWState{}) {
			t.Fatalf("free: State = %+v, %v; want zero", st, err)
		}
		rctx, err := rw.RLockWithLease(ctx, lease)
		if err != nil {
			t.Fatal(err)
		}
		st, err := rw.State(rctx)
		if err != nil || st.Mode != "read" || st.Reads != 1 || st.Writes != 0 || st.Lease <= 0 || st.Lease > lease {
			t.Fatalf("read-held: State = %+v, %v", st, err)
		}
		if err := rw.RUnlock(rctx); err != nil {
			t.Fatal(err)
		}
		wctx, err := rw.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err = rw.State(wctx)
		if err != nil || st.Mode != "write" || st.Writes != 1 || st.Lease <= 0 {
			t.Fatalf("write-held: State = %+v, %v", st, err)
		}
		if locked, err := rw.IsLocked(ctx); err != nil || !locked {
			t.Fatalf("IsLocked = %v, %v", locked, err)
		}
	})
}

func TestPermitSemaphoreState(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "permit-state")
	if st, err := p.State(ctx); err != nil || st != (PermitState{}) {
		t.Fatalf("never set: State = %+v, %v", st, err)
	}
	if _, err := p.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	const short = 200 * time.Millisecond
	if _, err := p.Acquire(ctx, short); err != nil {
		t.Fatal(err)
	}
	if st, err := p.State(ctx); err != nil || st != (PermitState{Available: 1, Held: 2}) {
		t.Fatalf("two held: State = %+v, %v; want 1 available, 2 held", st, err)
	}
	// Once the short lease ends its permit counts as free, though State
	// changes nothing: it is still in the held set until the next call.
	if !eventually(5*time.Second, func() bool {
		st, err := p.State(ctx)
		return err == nil && st == PermitState{Available: 2, Held: 1}
	}) {
		st, err := p.State(ctx)
		t.Fatalf("after a lease ended: State = %+v, %v; want 2 available, 1 held", st, err)
	}
	if n, err := node.Do(t, "ZCARD", "{"+p.Key()+"}:timeout").AsInt64(); err != nil || n != 2 {
		t.Fatalf("State changed the held set: ZCARD = %d, %v", n, err)
	}
}
