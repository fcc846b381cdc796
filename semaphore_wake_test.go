package scriptlock

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// acquireCalls counts the acquisition attempts a server ran: SemaphoreAcquire
// and PermitAcquire both look up their record with EXISTS, and no release
// script runs it.
func acquireCalls(t testing.TB, node *redistest.Node) int64 {
	return commandCalls(t, node)["exists"]
}

// waitersOn is the number of this Client's waiters on channel.
func waitersOn(c *Client, channel string) int {
	c.subs.mu.Lock()
	defer c.subs.mu.Unlock()
	if cs := c.subs.chans[channel]; cs != nil {
		return len(cs.waiters)
	}
	return 0
}

// settleWaiters waits until n waiters are registered on channel and the
// server ran want acquisition attempts since base (each waiter makes two
// before it sleeps: before subscribing and right after).
func settleWaiters(t *testing.T, node *redistest.Node, c *Client, channel string, n int, base, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := acquireCalls(t, node) - base
		if waitersOn(c, channel) == n && got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiters did not settle: %d registered (want %d), %d attempts (want %d)", waitersOn(c, channel), n, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// semKind abstracts Semaphore and PermitSemaphore for the wake-up tests:
// one permit at a time; a permit is whatever release needs.
type semKind struct {
	name    string
	setup   func(t *testing.T) (channel string, first string)
	acquire func(ctx context.Context) (string, error)
	release func(ctx context.Context, permit string) error
}

func semKinds(t *testing.T, c *Client) []semKind {
	s := mustSem(t, c, "herd")
	p := mustPermits(t, c, "herd-permits")
	return []semKind{{
		name: "Semaphore",
		setup: func(t *testing.T) (string, string) {
			ctx := testCtx(t, 10*time.Second)
			if _, err := s.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Acquire(ctx, 1); err != nil {
				t.Fatal(err)
			}
			return s.channel, ""
		},
		acquire: func(ctx context.Context) (string, error) { return "", s.Acquire(ctx, 1) },
		release: func(ctx context.Context, _ string) error { return s.Release(ctx, 1) },
	}, {
		name: "PermitSemaphore",
		setup: func(t *testing.T) (string, string) {
			ctx := testCtx(t, 10*time.Second)
			if _, err := p.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			id, err := p.Acquire(ctx, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			return p.channel, id
		},
		acquire: func(ctx context.Context) (string, error) { return p.Acquire(ctx, time.Minute) },
		release: func(ctx context.Context, id string) error { return p.Release(ctx, id) },
	}}
}

// 16 goroutines of one Client each wait for one permit, and permits come
// back one at a time: each release wakes about one of them, as Redisson's
// SemaphorePubSub does (min(waiters, permits)), not all 16, each of which
// would call Redis again to be refused.
func TestSemaphoreReleaseWakesAsManyAsReleased(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, k := range semKinds(t, c) {
		t.Run(k.name, func(t *testing.T) {
			const waiters = 16
			ctx := testCtx(t, time.Minute)
			channel, permit := k.setup(t)
			base := acquireCalls(t, node)
			got := make(chan string, waiters)
			for range waiters {
				go func() {
					id, err := k.acquire(ctx)
					if err != nil && ctx.Err() == nil {
						t.Error(err)
					}
					got <- id
				}()
			}
			settleWaiters(t, node, c, channel, waiters, base, 2*waiters)
			start := acquireCalls(t, node)
			perRelease := make([]int64, 0, waiters)
			for range waiters {
				before := acquireCalls(t, node)
				if err := k.release(ctx, permit); err != nil {
					t.Fatal(err)
				}
				select {
				case permit = <-got:
				case <-time.After(notifyFallback / 2):
					t.Fatalf("no waiter acquired within %s of a release: woken by the fallback poll, if at all", notifyFallback/2)
				}
				// Let the refused attempts the release caused, if any, land.
				time.Sleep(20 * time.Millisecond)
				perRelease = append(perRelease, acquireCalls(t, node)-before)
			}
			total := acquireCalls(t, node) - start
			t.Logf("acquisition attempts per release of one permit to %d local waiters: %v (%.1f on average)", waiters, perRelease, float64(total)/waiters)
			// A release and the one waiter it wakes make two. The median
			// release must cause no more: on a loaded machine the waiters'
			// fallback polls (every notifyFallback) land in some releases'
			// windows and between them, but a release waking more waiters
			// than it released permits adds attempts to every window.
			if med := slices.Sorted(slices.Values(perRelease))[waiters/2]; med > 2 {
				t.Errorf("a release of one permit caused %d acquisition attempts at the median, want 2 (%v): a release wakes more local waiters than it released permits", med, perRelease)
			}
		})
	}
}

// Waiters wanting 3 permits queued before waiters wanting 1, on one Client:
// a release too small for the waiter it woke is passed on to the next one,
// so a waiter that fits what is free acquires at once rather than at its
// fallback poll, and the big waiters get theirs once 3 are free.
func TestSemaphoreMixedWaitersNotStranded(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, time.Minute)
	s := mustSem(t, c, "mixed")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	const big, small = 3, 3
	got := make(chan int64, big+small)
	base := acquireCalls(t, node)
	start := func(i int, n int64) {
		go func() {
			if err := s.Acquire(ctx, n); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			got <- n
		}()
		// One at a time, so the big ones are first in line.
		settleWaiters(t, node, c, s.channel, i+1, base, int64(2*(i+1)))
	}
	for i := range big {
		start(i, 3)
	}
	for i := range small {
		start(big+i, 1)
	}
	// Well under the fallback poll: a waiter stranded until then fails.
	const bound = notifyFallback / 4
	expect := func(release, want int64) {
		t.Helper()
		at := time.Now()
		if err := s.Release(ctx, release); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-got:
			if n != want {
				t.Fatalf("after releasing %d, a waiter wanting %d acquired, want one wanting %d", release, n, want)
			}
			t.Logf("released %d: a waiter wanting %d acquired after %s", release, n, time.Since(at).Round(time.Millisecond))
		case <-time.After(bound):
			t.Fatalf("released %d permits; no waiter wanting %d acquired within %s (available: %d)", release, want, bound, countAt(t, node, s.Key()))
		}
	}
	for range small {
		expect(1, 1)
	}
	for range big {
		expect(3, 3)
	}
	select {
	case n := <-got:
		t.Fatalf("a waiter wanting %d acquired with no permits left", n)
	default:
	}
	if v := countAt(t, node, s.Key()); v != 0 {
		t.Fatalf("%d permits left, want 0", v)
	}
}

// A message on a semaphore's channel wakes as many waiters without a signal
// pending as the number it carries, longest waiting first; a wake passed on
// moves down the line only; a waiter leaving with a wake hands it over.
func TestCountedWakeDispatch(t *testing.T) {
	t.Parallel()
	s := newSubscriptions(context.Background(), nil, "id", func() bool { return false }, func() bool { return false })
	cs := &channelSub{name: "ch", mode: wakeCounted}
	ws := make([]*waiter, 4)
	s.mu.Lock()
	for i := range ws {
		ws[i] = s.addLocked(cs, "", nil)
	}
	s.mu.Unlock()
	pending := func() []int {
		var p []int
		for i, w := range ws {
			if len(w.wake) > 0 {
				p = append(p, i)
			}
		}
		return p
	}
	drain := func(is ...int) {
		for _, i := range is {
			select {
			case <-ws[i].wake:
			default:
			}
		}
	}
	check := func(step string, want ...int) {
		t.Helper()
		if got := pending(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: waiters with a wake pending %v, want %v", step, got, want)
		}
	}
	msg := func(m string) { s.dispatch(cs, rueidis.PubSubMessage{Channel: "ch", Message: m}) }

	msg("2")
	check(`"2"`, 0, 1)
	msg("1") // skips the waiters already woken
	check(`then "1"`, 0, 1, 2)
	drain(0, 1, 2)
	msg("0")
	msg("-3")
	check(`"0" and "-3"`)
	msg("x")
	check(`a message that is no number`, 0, 1, 2, 3)
	drain(0, 1, 2, 3)
	msg("1")
	check(`"1"`, 0)
	drain(0) // waiter 0 attempts, and is refused with permits left
	s.passAfter(ws[0])
	check("waiter 0 passes the wake on", 1)
	s.passAfter(ws[3])
	check("the last waiter has nobody behind it", 1)
	drain(1)
	s.passAfter(ws[1])
	check("waiter 1 passes the wake on", 2)
	s.leave(ws[2]) // gives up holding it
	drain(2)       // gone: its own signal does not count
	check("waiter 2 leaves with it", 0)
}
