package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// noScriptDeadline is the context deadline of each Lock in the NOSCRIPT
// tests, noScriptBound how soon it must be decided: the EVAL that follows
// a NOSCRIPT costs one round trip to the primary.
const noScriptDeadline, noScriptBound = 5 * time.Second, time.Second

// lockAfterFlush takes and releases every lock of ls, each Lock right
// after SCRIPT FLUSH on primary and under its own noScriptDeadline, and
// fails the test unless each is granted within noScriptBound.
func lockAfterFlush(t *testing.T, ctx context.Context, primary *redistest.Node, ls map[string]Locker, what string) {
	t.Helper()
	for k, l := range ls {
		if err := primary.Do(t, "SCRIPT", "FLUSH").Error(); err != nil {
			t.Fatal(err)
		}
		lockCtx, cancel := context.WithTimeout(ctx, noScriptDeadline)
		start := time.Now()
		lctx, err := l.Lock(lockCtx)
		took := time.Since(start)
		cancel()
		if err != nil {
			t.Errorf("%s: Lock %s: %v after %s (deadline %s)", k, what, err, took.Round(time.Millisecond), noScriptDeadline)
			continue
		}
		t.Logf("%s: Lock %s took %s", k, what, took.Round(time.Millisecond))
		if took > noScriptBound {
			t.Errorf("%s: Lock %s took %s, more than %s (deadline %s)", k, what, took.Round(time.Millisecond), noScriptBound, noScriptDeadline)
		}
		if err := l.Unlock(lctx); err != nil {
			t.Errorf("%s: Unlock %s: %v", k, what, err)
		}
	}
}

// TestGuardNoScriptStalledReplica: a guarded acquisition that meets
// NOSCRIPT (the primary's script cache flushed) is sent again as EVAL to
// that primary alone. Loading every script on every node of the client, as
// it was, waited for a stopped replica until the caller's context ended.
// The client lists the replicas (as one that reads from them does); the
// guard waits for one of the two, the one running.
func TestGuardNoScriptStalledReplica(t *testing.T) {
	t.Parallel()
	primary, replicas := redistest.ReplicatedN(t, 2)
	rc := primary.Client(t, func(o *rueidis.ClientOption) {
		o.Standalone.ReplicaAddress = []string{replicas[0].Addr, replicas[1].Addr}
		o.SendToReplicas = func(rueidis.Completed) bool { return false } // only Nodes matters here
	})
	if n := len(rc.Nodes()); n != 3 {
		t.Fatalf("the client knows %d nodes, want the primary and both replicas", n)
	}
	c := newTestClient(t, rc)
	ctx := testCtx(t, 60*time.Second)
	ls := guardKinds(t, c, "guard-noscript")
	lockUnlockAll(t, ctx, ls, "with both replicas running") // the replicas counted
	replicas[0].Pause()
	defer replicas[0].Resume()
	lockAfterFlush(t, ctx, primary, ls, "with one of two replicas stopped, the primary's scripts flushed")
}

// TestGuardNoScriptStalledReplicaCluster is TestGuardNoScriptStalledReplica
// on a Cluster, whose client lists every node: the primary serving the locks
// had its scripts flushed, one of its two replicas is stopped.
func TestGuardNoScriptStalledReplicaCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(2))
	waitSlotsListReplicas(t, cl)
	rc := cl.Client(t)
	if n := len(rc.Nodes()); n != len(cl.Nodes) {
		t.Fatalf("the client knows %d nodes, want all %d", n, len(cl.Nodes))
	}
	c := newTestClient(t, rc)
	ctx := testCtx(t, 60*time.Second)
	p := cl.Primaries(t)[0]
	ls := guardKinds(t, c, tagOn(t, cl, p, "noscript")+"lock")
	lockUnlockAll(t, ctx, ls, "with every replica running")
	stopped := replicaOf(t, cl, p)
	stopped.Pause()
	defer stopped.Resume()
	lockAfterFlush(t, ctx, p, ls, "with one of its primary's two replicas stopped, the primary's scripts flushed")
}

// TestGuardNoScriptShortWait: a guarded attempt that meets NOSCRIPT on a
// connection whose earlier write no replica acknowledged (the WAIT sent with
// the refused script waits its full timeout for that write) waits no longer
// than the guard timeout in all, so a TryAcquire or TryLock whose wait is
// shorter than that timeout still fails with ErrNotReplicated, its grant
// undone at once. The EVAL that followed waited a whole timeout again: the
// attempt ran past its wait's end and was cut off as a wait that ran out.
// Either way the call returns within the wait's bound: the wait, then
// waitOverrun and the guard timeout for its attempt.
func TestGuardNoScriptShortWait(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	// The attempt takes the guard timeout (the first WAIT's) and two round
	// trips, and is cut off at the wait, waitOverrun and the guard timeout:
	// the wait and waitOverrun are the slack for the round trips, a WAIT
	// answered a server tick late and a loaded machine's scheduling (a
	// 300 ms wait, as it was, was not always enough beside other work).
	// Waiting a whole timeout again takes 0.9 s past the cut.
	const guardTimeout, wait = 2 * time.Second, time.Second
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, guardTimeout))
	ctx := testCtx(t, 30*time.Second)
	s := mustSem(t, c, "noscript-short-sem")
	p := mustPermits(t, c, "noscript-short-permits")
	m := mustMutex(t, c, "noscript-short-lock")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The replicas counted, the scripts loaded.
	if err := s.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	replica.Pause()
	defer replica.Resume()
	// The wait's bound, and what a loaded machine may add to it.
	const bound, late = wait + waitOverrun + guardTimeout, time.Second
	for _, tc := range []struct {
		name string
		f    func() error
	}{
		{"Semaphore.TryAcquire", func() error { return s.TryAcquire(ctx, 1, wait) }},
		{"PermitSemaphore.TryAcquire", func() error { _, err := p.TryAcquire(ctx, time.Minute, wait); return err }},
		{"Mutex.TryLock", func() error {
			lctx, err := m.TryLock(ctx, wait)
			if err == nil {
				_ = m.Unlock(lctx)
			}
			return err
		}},
	} {
		// A write no replica acknowledged on the guard's connection.
		if err := s.Acquire(ctx, 1); !errors.Is(err, ErrNotReplicated) {
			t.Fatalf("Acquire with the replica stopped: %v, want ErrNotReplicated", err)
		}
		if err := primary.Do(t, "SCRIPT", "FLUSH").Error(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := tc.f()
		took := time.Since(start)
		if !errors.Is(err, ErrNotReplicated) {
			t.Errorf("%s with a %s wait after SCRIPT FLUSH, the replica stopped: %v after %s, want ErrNotReplicated", tc.name, wait, err, took.Round(time.Millisecond))
		}
		if took > bound+late {
			t.Errorf("%s with a %s wait after SCRIPT FLUSH, the replica stopped, returned after %s, past its bound %s by more than %s", tc.name, wait, took.Round(time.Millisecond), bound, late)
		}
	}
	if n := countAt(t, primary, s.Key()); n != 1 {
		t.Errorf("Semaphore: %d permits after the undone acquisitions, want 1", n)
	}
	if st, err := p.State(ctx); err != nil || st.Available != 1 || st.Held != 0 {
		t.Errorf("PermitSemaphore: %+v, %v after the undone acquisition; want 1 available, none held", st, err)
	}
}
