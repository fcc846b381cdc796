//go:build linux

package chaos_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/chaos"
)

// The Mutex workers' waiter timeout, and what a wake lost to a dead waiter
// costs the live waiters behind it.
//
// A refused Mutex waiter sleeps until a release wakes it by name or, at the
// latest, for the holder's remaining lease capped at a third of the waiter
// timeout, then calls again. With the timeout at three leases the cap is
// the lease itself, so the fallback is the remaining lease alone: between
// lease-renewEvery (the watchdog renewed just before) and the lease. A live
// waiter whose wake went to a dead one is granted the lock no sooner than
// its next fallback call. The nemesis releases the lock right after such a
// call, so without the skip of dead waiters the live one waits out its
// fallback, at least deadWaiterFallback (1.5 s), less the nemesis's own
// delay (a 5 ms poll, then the holder's read, 10 ms of work and commit:
// four HTTP calls), which leaves it about 1.5 s after the release.
//
// wakeBound, half that fallback, is what a woken waiter may take from the
// holder's "leave" report just before its release to its own "acquired"
// report: the release script, one PUBLISH, the waiter's acquisition and two
// HTTP reports, a few milliseconds; the rest is room for a loaded 2-core
// machine, where a process may wait a few hundred milliseconds for a CPU
// (with three busy loops beside the suite on 2 cores the grant came within
// 20 ms), while a lost wake still misses the bound by about 0.7 s.
const (
	waiterTimeout      = 3 * lease
	deadWaiterFallback = min(lease-renewEvery, waiterTimeout/3)
	wakeBound          = deadWaiterFallback / 2
)

// waitersKilled is the outcome of one kill-waiters fault.
type waitersKilled struct {
	granted bool          // the live waiter was granted the lock after the release
	gap     time.Duration // from the holder's "leave" before its release to that grant
	// slow: the live waiter was not granted the lock within wakeBound of
	// the release; left: the killed waiters' entries outlived it.
	slow, left error
}

// killWaiters holds the next worker granted the Mutex where it reports the
// grant (it keeps the lock: its watchdog renews it) until every other worker
// is registered in the waiter set, kills with SIGKILL the waiting workers
// but the last in wake order, waits until the server has dropped their
// connections and for the live waiter's next call, then lets the holder go
// on to its release. It keeps the holder from locking again (held at its
// "unlock" report) until the live waiter is granted the lock, so that only
// the release can hand it over, and checks after the release that the
// killed waiters' entries left the set. Then it restarts the killed workers.
func (n *nemesis) killWaiters(t *testing.T) waitersKilled {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hg := n.setGate("acquired", -1)
	openHolder := sync.OnceFunc(func() { close(hg.open) })
	defer openHolder()
	var held chaos.Event
	select {
	case held = <-hg.caught:
	case <-time.After(healWithin):
		t.Fatalf("no worker acquired the lock within %v", healWithin)
	}
	holder := held.Worker

	// Every other worker registers as a waiter; their entries in wake
	// order name the victims: all but the last.
	var (
		entries []string
		order   []int
		fields  map[int][]string
	)
	for deadline := time.Now().Add(healWithin); ; {
		var err error
		entries, err = n.rc.Do(ctx, n.rc.B().Zrange().Key(n.keys.LockWaiters).Min("0").Max("-1").Build()).AsStrSlice()
		if err == nil {
			order, fields = n.waiting(entries, holder)
			if len(order) == workers-1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workers but holder %d did not all register in %s within %v: waiting %v (%d entries), %v", holder, n.keys.LockWaiters, healWithin, order, len(entries), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	victims, live := order[:len(order)-1], order[len(order)-1]
	var dead []string // the victims' entries
	for _, v := range victims {
		dead = append(dead, fields[v]...)
		n.kill(t, v)
	}
	// A PUBLISH counts the victims as listening until the server has seen
	// their connections close.
	var channels []string
	for _, f := range dead {
		channels = append(channels, n.keys.LockWake+":"+strings.SplitN(f, ":", 2)[0])
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		subs, err := n.rc.Do(ctx, n.rc.B().PubsubNumsub().Channel(channels...).Build()).AsIntMap()
		total := int64(0)
		for _, c := range subs {
			total += c
		}
		if err == nil && total == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("killed waiters %v still subscribed 10 s after SIGKILL: %v, %v", victims, subs, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Only the live waiter calls the script that registers waiters now, and
	// each call sets the set's expiry to the waiter timeout: a rise of its
	// PTTL is that call. Releasing right after it leaves the live waiter a
	// whole fallback from its next call.
	pttl := func() int64 {
		v, _ := n.rc.Do(ctx, n.rc.B().Pttl().Key(n.keys.LockWaiters).Build()).AsInt64()
		return v
	}
	prev := pttl()
	for deadline := time.Now().Add(waiterTimeout/3 + time.Second); ; {
		time.Sleep(5 * time.Millisecond)
		p := pttl()
		if p > prev {
			break
		}
		prev = p
		if time.Now().After(deadline) {
			t.Fatalf("live waiter %d did not call again within %v (the expiry of %s was not renewed)", live, waiterTimeout/3+time.Second, n.keys.LockWaiters)
		}
	}

	ug := n.setGate("unlock", holder)
	openUnlock := sync.OnceFunc(func() { close(ug.open) })
	defer openUnlock()
	openHolder()
	var unlocked chaos.Event
	select {
	case unlocked = <-ug.caught:
	case <-time.After(healWithin):
		t.Fatalf("holder %d did not unlock within %v", holder, healWithin)
	}
	if unlocked.Detail != "ok" {
		t.Fatalf("holder %d's Unlock, held while waiters were killed: %s", holder, unlocked.Detail)
	}
	var out waitersKilled
	var left []string
	for _, f := range dead {
		if err := n.rc.Do(ctx, n.rc.B().Zscore().Key(n.keys.LockWaiters).Member(f).Build()).Error(); err == nil {
			left = append(left, f)
		}
	}
	out.left = errIf(len(left) > 0, "%d of the %d entries of killed waiters %v still in %s after holder %d's release: %q",
		len(left), len(dead), victims, n.keys.LockWaiters, holder, left)

	var leave, grant time.Time
	for deadline := time.Now().Add(waiterTimeout + lease); grant.IsZero() && time.Now().Before(deadline); {
		for _, ev := range n.store.Events() {
			switch {
			case leave.IsZero() && ev.Worker == holder && ev.Kind == "leave" && ev.At.After(held.At):
				leave = ev.At
			case !leave.IsZero() && ev.Worker == live && ev.Kind == "acquired" && ev.At.After(leave):
				grant = ev.At
			}
			if !grant.IsZero() {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	what := fmt.Sprintf("worker %d, waiting behind killed workers %v (wake order %v)", live, victims, order)
	switch {
	case grant.IsZero():
		out.slow = fmt.Errorf("%s, was not granted the lock within %v of holder %d's release", what, waiterTimeout+lease, holder)
	default:
		out.granted, out.gap = true, grant.Sub(leave)
		out.slow = errIf(out.gap > wakeBound, "%s, was granted the lock %v after holder %d's release, want under %v (a wake lost to a dead waiter costs %v to %v)",
			what, out.gap.Round(time.Millisecond), holder, wakeBound, deadWaiterFallback, min(lease, waiterTimeout/3))
	}
	openUnlock()
	for _, v := range victims {
		n.start(v)
	}
	return out
}

// waiting returns the workers other than holder with an entry in the waiter
// set, whose fields in wake order are entries, in wake order (a worker
// once, at its first entry), and their entries. Entries of clients that are
// not a running worker's are left out.
func (n *nemesis) waiting(entries []string, holder int) ([]int, map[int][]string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var order []int
	fields := map[int][]string{}
	for _, f := range entries {
		w, ok := n.clients[strings.SplitN(f, ":", 2)[0]]
		if !ok || w == holder {
			continue
		}
		if len(fields[w]) == 0 {
			order = append(order, w)
		}
		fields[w] = append(fields[w], f)
	}
	return order, fields
}
