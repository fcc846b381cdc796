package failover_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSentinelFrozenPrimaryWaiters freezes the primary (SIGSTOP: a hung
// host, a partition) while waiters of every kind wait for what a holder on
// another Client holds. Their next attempts hang on the frozen primary until
// the sentinels promote a replica and rueidis's Sentinel client, switching to
// it, closes the old connection under them (rueidis.ErrClosing), or rueidis
// drops it as dead (ConnWriteTimeout: an i/o timeout). With the failover
// guard on, the attempt and its WAIT are a blocking call on a pooled
// connection that neither cuts: the Client cuts it off itself, 10 s after
// the WAIT's timeout. Such an attempt may have run before the freeze, like
// one whose connection broke: a waiting Lock or Acquire settles it and waits
// on, on the new primary, and takes what the holder gives back there, rather
// than fail or wait until its deadline.
func TestSentinelFrozenPrimaryWaiters(t *testing.T) {
	t.Parallel()
	for _, guard := range []bool{false, true} {
		t.Run(fmt.Sprintf("guard=%v", guard), func(t *testing.T) {
			t.Parallel() // a deployment of its own
			frozenPrimaryWaiters(t, guard)
		})
	}
}

func frozenPrimaryWaiters(t *testing.T, guard bool) {
	s := redistest.Sentinel(t)
	prefix := redistest.Prefix(t)
	hc := sentinelLocks(t, s, prefix, guardOpt(guard))
	wc := sentinelLocks(t, s, prefix, guardOpt(guard))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const lease = 30 * time.Second

	waiters := holdEveryKind(t, ctx, hc, wc, lease)

	// Let the holds reach both replicas before the freeze.
	old := s.Primary(t)
	if n, err := old.Do(t, "WAIT", "2", "5000").AsInt64(); err != nil || n != 2 {
		t.Fatalf("WAIT 2: %d, %v", n, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(waiters))
	for i, w := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.wait(ctx)
		}()
	}
	time.Sleep(500 * time.Millisecond) // every waiter waits
	old.Pause()
	defer old.Resume()
	primary, took := s.WaitFailover(t, old, 1)
	t.Logf("failover from %s to %s in %v", old.Addr, primary.Addr, took)
	// Every waiter's attempt hung on the frozen primary until rueidis left
	// it (a waiter polls at least every 2 s).
	time.Sleep(3 * time.Second)
	for _, w := range waiters {
		if err := w.release(); err != nil {
			t.Errorf("%s: holder's release on the new primary: %v", w.name, err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("waiters still waiting 30 s after the release")
	}
	for i, w := range waiters {
		if errs[i] != nil {
			t.Errorf("%s: waiter failed through the failover: %v", w.name, errs[i])
		}
	}
}
