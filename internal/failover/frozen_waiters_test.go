package failover_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
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

	type leased interface {
		scriptlock.Locker
		LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error)
	}
	must := func(l leased, err error) leased {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	type waiter struct {
		name    string
		wait    func(ctx context.Context) error
		release func() error // the holder gives back, on the new primary
	}
	var waiters []waiter
	for _, k := range []struct {
		name string
		make func(c *scriptlock.Client) (leased, error)
	}{
		{"Mutex", func(c *scriptlock.Client) (leased, error) { return c.Mutex("m") }},
		{"FairMutex", func(c *scriptlock.Client) (leased, error) { return c.FairMutex("f") }},
		{"RWMutex", func(c *scriptlock.Client) (leased, error) { return c.RWMutex("rw") }},
		{"LeanMutex", func(c *scriptlock.Client) (leased, error) { return c.LeanMutex("lean") }},
	} {
		h, w := must(k.make(hc)), must(k.make(wc))
		hctx, err := h.LockWithLease(ctx, lease)
		if err != nil {
			t.Fatalf("%s: holder: %v", k.name, err)
		}
		waiters = append(waiters, waiter{k.name,
			func(ctx context.Context) error {
				lctx, err := w.Lock(ctx)
				if err != nil {
					return err
				}
				return w.Unlock(lctx)
			},
			func() error { return h.Unlock(hctx) }})
	}
	hs, err := hc.Semaphore("sem")
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := wc.Semaphore("sem")
	if _, err := hs.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := hs.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waiters = append(waiters, waiter{"Semaphore",
		func(ctx context.Context) error {
			if err := ws.Acquire(ctx, 1); err != nil {
				return err
			}
			return ws.Release(ctx, 1)
		},
		func() error { return hs.Release(ctx, 1) }})
	hp, err := hc.PermitSemaphore("permits")
	if err != nil {
		t.Fatal(err)
	}
	wp, _ := wc.PermitSemaphore("permits")
	if _, err := hp.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id, err := hp.Acquire(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	waiters = append(waiters, waiter{"PermitSemaphore",
		func(ctx context.Context) error {
			id, err := wp.Acquire(ctx, lease)
			if err != nil {
				return err
			}
			return wp.Release(ctx, id)
		},
		func() error { return hp.Release(ctx, id) }})

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
