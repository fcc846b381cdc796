package scriptlock

import (
	"testing"
	"time"
)

// TestRedLockRecheckedWhenKeptRunIDsRunOut: a RedLock whose check read
// run_ids its nodes' Clients had kept for a while (another RedLock over them
// asked them first) checks its nodes again once those run out, not a whole
// keeping time after its own check: a node's server replaced meanwhile
// (its name now resolving to the server another node reaches) counted that
// server twice toward the quorum until then.
func TestRedLockRecheckedWhenKeptRunIDsRunOut(t *testing.T) {
	t.Parallel()
	const keep = 3 * time.Second
	n := newReplaceableNodes(t, keep)
	ctx := testCtx(t, 30*time.Second)
	// The run_ids are asked, and kept, by the first RedLock.
	first := mustRedLock(t, "kept-first", n.cs)
	asked := time.Now()
	lctx, err := first.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(keep / 2)
	// The second checks its nodes with the run_ids kept.
	r := mustRedLock(t, "kept-second", n.cs)
	lctx, err = r.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	n.replaceNodeTwo(ctx, t, r)
	// The run_ids read have run out; the second RedLock's own check is
	// not a keeping time old yet.
	time.Sleep(time.Until(asked.Add(keep + keep/6)))
	lockRefusedOnOneServer(ctx, t, r, "RedLock took the lock on nodes 0 and 2, which now reach one server, with the run_ids it read run out")
}
