package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An owner (WithOwner) holds a RedLock twice, and its more recent hold is
// lost (its validity, shorter, ran out) while the earlier one lives. Unlock
// given a context that only names the owner stands for that most recent
// hold: it answers ErrNotHeld and releases nothing, as the lost hold's own
// context does, and the next one gives back the earlier hold. It found the
// earlier hold (a lost one left the owner's holds) and gave it back,
// answering nil: the owner's live hold ended under it.
func TestRedLockOwnerUnlockLatestLostKeepsEarlier(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	for _, how := range []string{"ByOwner", "ByContext"} {
		t.Run(how, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			name := "owner-latest-lost-" + how
			long := mustRedLock(t, name, cs, WithNodeTimeout(5*time.Second)) // renewed by the watchdog; every node takes it
			short := mustRedLock(t, name, cs, WithLease(1500*time.Millisecond), WithNodeTimeout(time.Second))
			octx := WithOwner(ctx, "job")
			outer, err := long.Lock(octx)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := short.Lock(octx) // re-enters every node
			if err != nil {
				t.Fatal(err)
			}
			waitRedLost(t, inner)
			if err := outer.Err(); err != nil {
				t.Fatalf("the earlier hold ended with the later one's loss: %v", context.Cause(outer))
			}
			if how == "ByOwner" {
				if err := long.Unlock(WithOwner(ctx, "job")); !errors.Is(err, ErrNotHeld) {
					t.Errorf("Unlock naming only the owner, its most recent hold lost: %v, want ErrNotHeld", err)
				}
			} else if err := short.Unlock(inner); !errors.Is(err, ErrNotHeld) {
				t.Errorf("Unlock of the lost hold with its context: %v, want ErrNotHeld", err)
			}
			if err := outer.Err(); err != nil {
				t.Fatalf("the owner's earlier, live hold ended with the Unlock of its lost later one: %v", context.Cause(outer))
			}
			for i, h := range heldOn(t, long, nodes, 0, 1, 2) {
				if !h {
					t.Errorf("node %d no longer holds the lock, the owner's earlier hold live", i)
				}
			}
			// The lost hold is answered for: the next Unlock by owner is the
			// earlier hold's.
			if err := long.Unlock(WithOwner(ctx, "job")); err != nil {
				t.Fatalf("Unlock naming only the owner, for its earlier hold: %v", err)
			}
			if cause := context.Cause(outer); cause != context.Canceled {
				t.Errorf("the earlier hold's context after Unlock by owner: %v, want context.Canceled", cause)
			}
			for i, h := range heldOn(t, long, nodes, 0, 1, 2) {
				if h {
					t.Errorf("node %d still holds the lock after the owner's last Unlock", i)
				}
			}
			if n := ownedCount(&redOwned, ownedKey[redKey]{long.id, "job"}); n != 0 {
				t.Errorf("%d entries kept for the owner once its holds ended", n)
			}
		})
	}
}

// The reverse: the owner's earlier hold is lost and its later one lives.
// Unlock by owner gives back the later one, and markers of lost holds are
// not kept once no earlier hold of the owner lives: neither the lost
// earlier one, nor a later one lost above a live hold that then ends.
func TestRedLockOwnerUnlockEarlierLostGivesBackLatest(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	name := "owner-earlier-lost"
	long := mustRedLock(t, name, cs, WithNodeTimeout(5*time.Second)) // renewed by the watchdog; every node takes it
	short := mustRedLock(t, name, cs, WithLease(1500*time.Millisecond), WithNodeTimeout(time.Second))
	octx := WithOwner(ctx, "job")
	key := ownedKey[redKey]{long.id, "job"}
	outer, err := short.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := long.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	waitRedLost(t, outer)
	if n := ownedCount(&redOwned, key); n != 1 {
		t.Errorf("%d entries kept for the owner with one live hold and an earlier one lost, want 1", n)
	}
	if err := long.Unlock(WithOwner(ctx, "job")); err != nil {
		t.Fatalf("Unlock naming only the owner, its earlier hold lost: %v", err)
	}
	if cause := context.Cause(inner); cause != context.Canceled {
		t.Errorf("the later hold's context after Unlock by owner: %v, want context.Canceled", cause)
	}
	// A live hold, then one lost above it, then the live one unlocked with
	// its context: nothing is kept.
	outer, err = long.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	inner, err = short.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	waitRedLost(t, inner)
	if err := long.Unlock(outer); err != nil {
		t.Fatal(err)
	}
	if n := ownedCount(&redOwned, key); n != 0 {
		t.Errorf("%d entries kept for the owner once its holds ended", n)
	}
	if err := long.Unlock(WithOwner(ctx, "job")); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock naming only the owner once its holds ended: %v, want ErrNotHeld", err)
	}
}

// waitRedLost waits for the RedLock hold of lctx to be lost and given back.
func waitRedLost(t *testing.T, lctx context.Context) {
	t.Helper()
	select {
	case <-lctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the RedLock hold with the shorter lease was not lost within 10s")
	}
	if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
		t.Fatalf("the shorter hold's context: %v, want ErrLockLost", cause)
	}
	h := lctx.(*redCtx).h
	select {
	case <-h.givenBack:
	case <-time.After(10 * time.Second):
		t.Fatal("the lost RedLock hold was not given back within 10s")
	}
}

// ownedCount is how many entries o keeps under k.
func ownedCount[K comparable, H ownedHold[K]](o *ownedHolds[K, H], k ownedKey[K]) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.m[k])
}
