package failover_test

import (
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSentinelFailoverWaitersWoken: waiters of every kind wait, each
// subscribed on the primary, for what a holder on another Client holds,
// when the sentinels hand over to a replica (SENTINEL FAILOVER, which
// loses no write; then the primary killed). The holder gives back on the new
// primary at once, before the old one (demoted only at the sentinels' next
// round, up to 10 s later) replicates from it. Each waiter takes what was given
// back within a few seconds, woken by the release message on the new primary,
// not by its fallback timer (the lease and waiter timeout: two minutes).
func TestSentinelFailoverWaitersWoken(t *testing.T) {
	t.Parallel()
	for _, kill := range []bool{false, true} {
		t.Run(fmt.Sprintf("kill=%v", kill), func(t *testing.T) {
			t.Parallel()
			failoverWaitersWoken(t, kill)
		})
	}
}

func failoverWaitersWoken(t *testing.T, kill bool) {
	s := redistest.Sentinel(t)
	prefix := redistest.Prefix(t)
	const lease = 2 * time.Minute
	opts := []scriptlock.Option{guardOpt(true), scriptlock.WithWaiterTimeout(lease), scriptlock.WithWatchdog(lease, 5*time.Second)}
	hc, hrc := sentinelLocksRC(t, s, prefix, opts...)
	wc, wrc := sentinelLocksRC(t, s, prefix, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()

	waiters := holdEveryKind(t, ctx, hc, wc, lease)

	old := s.Primary(t)
	if n, err := old.Do(t, "WAIT", "2", "5000").AsInt64(); err != nil || n != 2 {
		t.Fatalf("WAIT 2: %d, %v", n, err)
	}
	type result struct {
		at  time.Time
		err error
	}
	results := make([]chan result, len(waiters))
	for i, w := range waiters {
		results[i] = make(chan result, 1)
		go func() {
			err := w.wait(ctx)
			results[i] <- result{time.Now(), err}
		}()
	}
	time.Sleep(2 * time.Second) // every waiter is asleep on its subscription
	var primary *redistest.Node
	var took time.Duration
	if kill {
		old, primary, took = s.KillPrimary(t)
	} else {
		old, primary, took = s.Failover(t)
	}
	t.Logf("failover from %s to %s in %v", old.Addr, primary.Addr, took)
	// Both Clients follow the failover before the holder gives back: after
	// SENTINEL FAILOVER the old primary, not yet a replica of the new one,
	// stays writable, and a Client told of the switch only when the leading
	// sentinel ends the failover (a second or more after the others agree)
	// would give back there, or take there what was given back on the new one.
	t.Logf("both Clients on the new primary %v later", s.AwaitFollowed(t, primary, hrc, wrc).Round(time.Millisecond))
	time.Sleep(time.Second)
	for i, w := range waiters {
		select {
		case r := <-results[i]:
			t.Fatalf("%s: the waiter returned before the release: %v", w.name, r.err)
		default:
		}
	}
	released := make([]time.Time, len(waiters))
	for i, w := range waiters {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			err := w.release()
			if err == nil {
				released[i] = time.Now()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: holder's release on the new primary: %v", w.name, err)
			}
		}
	}
	for i, w := range waiters {
		select {
		case r := <-results[i]:
			if r.err != nil {
				t.Errorf("%s: waiter failed through the failover: %v", w.name, r.err)
			} else if d := r.at.Sub(released[i]); d > 6*time.Second {
				t.Errorf("%s: the waiter took it %v after its release: not woken by the release message", w.name, d.Round(time.Millisecond))
			}
		case <-time.After(30 * time.Second):
			var stacks strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Errorf("%s: the waiter still waits 30 s after the release; goroutines:\n%s", w.name, stacks.String())
		}
	}
}
