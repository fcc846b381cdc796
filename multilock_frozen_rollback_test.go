package scriptlock

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMultiLockRollbackFrozenMemberSparesOthers: a MultiLock attempt that
// fails gives back the members it took. It gave them back one after
// another, so a member on a frozen node, whose release waits out the release
// timeout, kept the members given back after it held for that long, though
// their nodes answer: a waiter for one of them waited with it.
func TestMultiLockRollbackFrozenMemberSparesOthers(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	rc := cl.Client(t)
	prefix := sharedPrefix(t)
	c, err := New(rc, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c2, err := New(rc, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	prims := cl.Primaries(t)
	healthy, frozen := prims[0], prims[1]
	find := func(node *redistest.Node, prefix string) string {
		for i := range 10000 {
			name := prefix + strconv.Itoa(i)
			if cl.NodeFor(t, mustMutex(t, c, name).Key()) == node {
				return name
			}
		}
		t.Fatalf("no name for node %s", node.Addr)
		return ""
	}
	// Taken in name order: a, then b (on the frozen node), then c, which
	// another owner holds; given back in reverse.
	a, b, cn := find(healthy, "a-"), find(frozen, "b-"), find(healthy, "c-")
	ctx := testCtx(t, 60*time.Second)
	other, err := mustMutex(t, c2, cn).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mustMutex(t, c2, cn).Unlock(other) }()
	ml, err := NewMultiLock([]Locker{mustMutex(t, c, a), mustMutex(t, c, b), mustMutex(t, c, cn)})
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	go func() {
		_, err := ml.TryLock(ctx, 2*time.Second)
		failed <- err
	}()
	// b taken: freeze its node while the attempt waits for c.
	for deadline := time.Now().Add(5 * time.Second); ; {
		if held, err := mustMutex(t, c2, b).IsLocked(ctx); err == nil && held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the MultiLock never took its member on the node to freeze")
		}
		time.Sleep(10 * time.Millisecond)
	}
	frozen.Pause()
	defer frozen.Resume()
	if err := <-failed; !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("MultiLock.TryLock with a member held by another owner: %v, want ErrNotAcquired", err)
	}
	// a, on a healthy node, is given back at once.
	start := time.Now()
	la, err := mustMutex(t, c2, a).TryLock(ctx, 10*time.Second)
	if err != nil {
		t.Fatalf("a waiter for a member on a healthy node: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a member on a healthy node was given back %v after the MultiLock attempt failed (its member on the frozen node held it back)", d)
	}
	_ = mustMutex(t, c2, a).Unlock(la)
}
