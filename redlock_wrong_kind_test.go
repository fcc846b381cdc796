package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A RedLock whose name another kind of lock holds on so many nodes that the
// others cannot make a majority fails at once with ErrWrongKind, as a Mutex
// does on such a name. Lock and TryLock with a wait tried again until their
// context or wait ended (without a deadline, for good), writing the lock on
// the other nodes and giving it back at each attempt. With one such node of
// three, the others still make a majority.
func TestRedLockWrongKindOnMajority(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	if _, err := mustRW(t, cs[0], "job").Lock(ctx); err != nil {
		t.Fatal(err)
	}
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock with one node of 3 held as a read-write lock: %v", err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mustRW(t, cs[1], "job").Lock(ctx); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		name string
		f    func(context.Context) (context.Context, error)
	}{
		{"Lock", r.Lock},
		{"TryLock(5s)", func(ctx context.Context) (context.Context, error) { return r.TryLock(ctx, 5*time.Second) }},
	} {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		start := time.Now()
		_, err := call.f(cctx)
		cancel()
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s with 2 nodes of 3 held as a read-write lock took %s", call.name, d)
		}
		if !errors.Is(err, ErrWrongKind) || !errors.Is(err, ErrQuorum) {
			t.Errorf("%s with 2 nodes of 3 held as a read-write lock: %v, want ErrWrongKind and ErrQuorum", call.name, err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s waited for its context: %v", call.name, err)
		}
	}
	if heldOn(t, r, nodes, 2)[2] {
		t.Error("node 2 holds the lock after the failed calls")
	}
}

// The same for nodes whose ACL refuses the lock scripts (NOPERM), on which a
// Mutex's Lock fails at once too.
func TestRedLockRefusedByACLOnMajority(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	for i := range 2 {
		if err := nodes[i].Do(t, "ACL", "SETUSER", "default", "-evalsha", "-eval", "-evalsha_ro", "-eval_ro").Error(); err != nil {
			t.Fatal(err)
		}
	}
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := r.Lock(cctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Lock with 2 nodes of 3 refusing the scripts took %s", d)
	}
	if !errors.Is(err, ErrQuorum) || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("Lock with 2 nodes of 3 refusing the scripts: %v, want the QuorumError naming NOPERM", err)
	}
	if heldOn(t, r, nodes, 2)[2] {
		t.Error("node 2 holds the lock after the failed Lock")
	}
}

// A node whose Client is closed refuses for good too: one such node and one
// held as another kind of lock, of three, leave no majority, and Lock fails
// at once. Neither alone left no majority, and Lock tried again until its
// context ended (without a deadline, for good).
func TestRedLockWrongKindAndClosedLeaveNoMajority(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	if _, err := mustRW(t, cs[1], "job").Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// Node 2's connection made and scripts loaded before: its answer is
	// what decides the outcome, and a first call on a new connection can
	// take longer than a node timeout on a loaded machine (then it counts
	// as not answering, and the late grant is given back later).
	warm(t, mustMutex(t, cs[2], "warm"))
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	cs[0].Close()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := r.Lock(cctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Lock with 1 node of 3 closed and 1 held as a read-write lock took %s", d)
	}
	if !errors.Is(err, ErrQuorum) || !errors.Is(err, ErrWrongKind) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock with 1 node of 3 closed and 1 held as a read-write lock: %v, want the QuorumError naming ErrWrongKind", err)
	}
	if heldOn(t, r, nodes, 2)[2] {
		t.Error("node 2 holds the lock after the failed Lock")
	}
}
