package scriptlock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardRenewalNoScript: guarded renewals of holds of every kind in one
// round meet NOSCRIPT (the primary's scripts flushed): the renewals are sent
// again as EVAL with their WAIT, each reply read for its own hold, and the
// holds live on.
func TestGuardRenewalNoScript(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	const lease, every = 1500 * time.Millisecond, 250 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 500*time.Millisecond), WithWatchdog(lease, every))
	ctx := testCtx(t, 30*time.Second)
	holds := lockAll(t, ctx, guardKinds(t, c, "guard-renew-noscript"), lease)
	end := time.Now().Add(3 * lease)
	for time.Now().Before(end) {
		if err := primary.Do(t, "SCRIPT", "FLUSH").Error(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(every / 2)
	}
	for k, h := range holds {
		if err := context.Cause(h.lctx); err != nil {
			t.Errorf("%s: hold ended (%v) although its renewals were sent again after NOSCRIPT", k, err)
		}
	}
}

// TestGuardRenewalErrorReply: a guarded renewal answered with an error (the
// key now of another type) is neither a renewal nor a loss the server
// confirmed: the hold's deadline stays, and its context ends with
// ErrLockLost by the deadline of its grant, while the other holds of the
// round, renewed and acknowledged, live on.
func TestGuardRenewalErrorReply(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	const lease, every = 1500 * time.Millisecond, 250 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 500*time.Millisecond), WithWatchdog(lease, every))
	ctx := testCtx(t, 30*time.Second)
	holds := lockAll(t, ctx, guardKinds(t, c, "guard-renew-wrongtype"), lease)
	// Renewals acknowledged until the key changes kind may move the
	// deadline on, up to now + lease.
	key := holds["Mutex"].l.(*Mutex).Key()
	if err := primary.Do(t, "SET", key, "x").Error(); err != nil {
		t.Fatal(err)
	}
	broken := pausedNow(holds, lease)["Mutex"]
	checkEndsBy(t, "Mutex", broken, "a renewal answered with an error")
	time.Sleep(time.Until(latest(holds).Add(guardLate)))
	for k, h := range holds {
		if k == "Mutex" {
			continue
		}
		if err := context.Cause(h.lctx); err != nil {
			t.Errorf("%s: hold ended (%v) although its renewals were acknowledged", k, err)
		}
	}
}

// TestGuardRenewalNoScriptCluster: on a Cluster, guarded renewals sent per
// hash slot that meet NOSCRIPT (every primary's scripts flushed) are sent
// again as EVAL with their WAIT: the holds live on.
func TestGuardRenewalNoScriptCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	const lease, every = 1500 * time.Millisecond, 250 * time.Millisecond
	c := newTestClient(t, cl.Client(t), WithFailoverGuard(true, 500*time.Millisecond), WithWatchdog(lease, every))
	ctx := testCtx(t, 60*time.Second)
	ls := guardKinds(t, c, "guard-renew-noscript-cluster")
	for i := range 8 {
		name := "guard-renew-noscript-cluster-" + strconv.Itoa(i)
		ls[name] = mustMutex(t, c, name)
	}
	holds := lockAll(t, ctx, ls, lease)
	end := time.Now().Add(3 * lease)
	for time.Now().Before(end) {
		for _, p := range cl.Primaries(t) {
			if err := p.Do(t, "SCRIPT", "FLUSH").Error(); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(every / 2)
	}
	for k, h := range holds {
		if err := context.Cause(h.lctx); err != nil {
			t.Errorf("%s: hold ended (%v) although its renewals were sent again after NOSCRIPT", k, err)
		}
	}
}
