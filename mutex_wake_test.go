package scriptlock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// commandCalls reads INFO commandstats: calls per command, as Redis names
// them ("evalsha", "zpopmin"), counting those run inside scripts too.
func commandCalls(t testing.TB, node *redistest.Node) map[string]int64 {
	t.Helper()
	info, err := node.Do(t, "INFO", "commandstats").ToString()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	calls := map[string]int64{}
	for line := range strings.SplitSeq(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for field := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("commandstats line %q: %v", line, err)
				}
				calls[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return calls
}

// subscribers is PUBSUB NUMSUB (SHARDNUMSUB when sharded) of one channel.
func subscribers(t testing.TB, node *redistest.Node, sharded bool, channel string) int64 {
	t.Helper()
	cmd := "NUMSUB"
	if sharded {
		cmd = "SHARDNUMSUB"
	}
	v, err := node.Do(t, "PUBSUB", cmd, channel).ToArray()
	if err != nil || len(v) != 2 {
		t.Fatalf("PUBSUB %s %s: %v %v", cmd, channel, v, err)
	}
	n, _ := v[1].AsInt64()
	return n
}

// lockCommands is the delta of commands between two samples, leaving out
// the test's own probes and the clients' housekeeping.
func lockCommands(before, after map[string]int64) (map[string]int64, int64) {
	d := map[string]int64{}
	var total int64
	for name, n := range after {
		switch {
		case name == "info", name == "ping", name == "hello", strings.HasPrefix(name, "client"):
			continue
		}
		if n -= before[name]; n > 0 {
			d[name] = n
			total += n
		}
	}
	return d, total
}

// 32 waiters, each on its own client as separate processes would be, take
// turns on one lock: every release wakes one waiter rather than every
// client, so the server runs about 20 commands per acquisition (one message
// to every waiting client, each retrying, cost about 140), and nobody starves
// or takes the lock over.
func TestMutexContendedWakesOne(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	const (
		waiters = 32
		total   = waiters * 8
	)
	ctx := testCtx(t, 2*time.Minute)
	locks := make([]*Mutex, waiters)
	for i := range locks {
		c := newTestClient(t, node.Client(t), prefix)
		locks[i] = mustMutex(t, c, "herd")
		l, err := locks[i].Lock(ctx) // connections open, scripts loaded
		if err != nil {
			t.Fatal(err)
		}
		if err := locks[i].Unlock(l); err != nil {
			t.Fatal(err)
		}
	}
	before := commandCalls(t, node)
	var (
		remaining atomic.Int64
		holding   atomic.Int32
		counts    = make([]int, waiters)
		wg        sync.WaitGroup
		errs      = make(chan error, waiters)
	)
	remaining.Store(total)
	for i, m := range locks {
		wg.Go(func() {
			for remaining.Add(-1) >= 0 {
				l, err := m.Lock(ctx)
				if err != nil {
					errs <- err
					return
				}
				if holding.Add(1) != 1 {
					errs <- errors.New("two holders at once")
				}
				counts[i]++
				time.Sleep(time.Millisecond)
				holding.Add(-1)
				if err := m.Unlock(l); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	delta, cmds := lockCommands(before, commandCalls(t, node))
	perAcq := float64(cmds) / total
	scripts := float64(delta["evalsha"]+delta["eval"]) / total
	t.Logf("per acquisition: %.1f server commands, %.2f scripts; acquisitions per waiter %v; commands %v", perAcq, scripts, counts, delta)
	// Wake one: a failed attempt, the winning one and the release, about 20
	// commands; the bounds leave room for the fallback paths a loaded
	// machine takes now and then (a wake arriving late re-runs an attempt).
	if perAcq > 40 || scripts > 6 {
		t.Errorf("%.1f server commands and %.2f scripts per acquisition (delta %v): releases wake more than one waiter", perAcq, scripts, delta)
	}
	// Woken in registration order, with newcomers queueing behind a
	// hand-off, every waiter gets about its share (8); the bounds leave room
	// for a hand-off a loaded machine lets a newcomer overtake now and then.
	for i, n := range counts {
		if n < 2 || n > 32 {
			t.Errorf("waiter %d acquired the lock %d times, want 2..32 (its share is %d): %v", i, n, total/waiters, counts)
		}
	}
	if n, err := node.Do(t, "EXISTS", locks[0].waiters).AsInt64(); err != nil || n != 0 {
		t.Errorf("waiter set left behind after every waiter got the lock: EXISTS = %d, %v", n, err)
	}
}

// An uncontended Lock runs no waiter-set or holder lookup, and its Unlock
// one HDEL, Redisson's "0" and one PTTL that finds nobody to wake.
func TestMutexUncontendedReleaseCommands(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "quiet")
	// Warm-up: scripts loaded, the fencing counter started.
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	before := commandCalls(t, node)
	if l, err = m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	mid := commandCalls(t, node)
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	after := commandCalls(t, node)
	acq, _ := lockCommands(before, mid)
	rel, relTotal := lockCommands(mid, after)
	for name := range acq {
		if strings.HasPrefix(name, "z") || name == "time" || name == "hkeys" || name == "hexists" {
			t.Errorf("an uncontended Lock ran %s: %v", name, acq)
		}
	}
	// EVALSHA, HDEL (which deletes the emptied hash), PUBLISH, and PTTL of
	// the waiter set (no Go waiter to wake): no latch, one message.
	if rel["publish"] != 1 || rel["hdel"] != 1 || rel["pttl"] != 1 || relTotal != 4 {
		t.Errorf("release ran %d commands %v, want 4: EVALSHA, HDEL, PUBLISH, PTTL", relTotal, rel)
	}
	if n, err := node.Client(t).Do(ctx, node.Client(t).B().Dbsize().Build()).AsInt64(); err != nil || n != 1 {
		t.Errorf("keys after the release: %d (%v), want 1 (the fencing counter)", n, err)
	}
}

// scriptCalls is how many scripts (EVALSHA and EVAL) node has run.
func scriptCalls(t testing.TB, node *redistest.Node) int64 {
	t.Helper()
	c := commandCalls(t, node)
	return c["evalsha"] + c["eval"]
}

// waitQuiet waits until the node has run no script for quiet: every client
// has had the replies to its attempts and is waiting.
func waitQuiet(t testing.TB, node *redistest.Node, quiet time.Duration) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for last := scriptCalls(t, node); ; {
		time.Sleep(quiet)
		n := scriptCalls(t, node)
		if n == last {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("scripts still running after 10s (%d calls in the last %s)", n-last, quiet)
		}
		last = n
	}
}

// A waiter chosen by a release whose context then ends passes the wake on:
// the next waiter gets the lock at once, not after its fallback timer.
func TestMutexChosenWaiterGivesUp(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	// A fallback far beyond the bound below: only a passed-on wake is this fast.
	opt := WithWaiterTimeout(time.Minute)
	holder := mustMutex(t, newTestClient(t, node.Client(t), prefix, opt), "chosen")
	px := netproxy.New(t, node.Addr)
	chosenRC := rawClient(t, px.Addr)
	chosenClient := newTestClient(t, chosenRC, prefix, opt)
	chosen := mustMutex(t, chosenClient, "chosen")
	nextClient := newTestClient(t, node.Client(t), prefix, opt)
	next := mustMutex(t, nextClient, "chosen")
	ctx := testCtx(t, 30*time.Second)

	hold, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A wait that gives up loads the scripts of the path under test on the
	// server, so none needs a reply to be sent below.
	if _, err := chosen.TryLock(ctx, 10*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock while held: %v", err)
	}
	registered := func(field string) bool {
		err := node.Do(t, "ZSCORE", holder.waiters, field).Error()
		return err == nil
	}
	chosenField := chosenClient.id + ":chosen-owner"
	cctx, cancel := context.WithCancel(WithOwner(ctx, "chosen-owner"))
	defer cancel()
	chosenDone := make(chan error, 1)
	go func() {
		_, err := chosen.Lock(cctx)
		chosenDone <- err
	}()
	waitFor(t, 5*time.Second, "the first waiter to register", func() bool { return registered(chosenField) })
	nextDone := lockedAt(t, ctx, next)
	waitFor(t, 5*time.Second, "the second waiter to register", func() bool {
		n, _ := node.Do(t, "ZCARD", holder.waiters).AsInt64()
		return n == 2
	})
	// Both must be waiting, not still in the attempt after subscribing, when
	// replies stop: an attempt whose reply never comes is a different case
	// (its outcome unknown, its connection stalled).
	waitFor(t, 5*time.Second, "both waiters to listen", func() bool {
		return subscribers(t, node, false, holder.wake+":"+chosenClient.id) == 1 &&
			subscribers(t, node, false, holder.wake+":"+nextClient.id) == 1
	})
	waitQuiet(t, node, 200*time.Millisecond)
	// rueidis spreads keyed commands over several connections and dials each
	// on first use; a handshake after the freeze would never finish. Keyed
	// commands on random connections dial them all now.
	for i := range 64 {
		if err := chosenRC.Do(ctx, chosenRC.B().Exists().Key("warm:"+strconv.Itoa(i)).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	// The first waiter never hears its wake: the server's messages to it are
	// held back, while what it sends still gets through.
	px.FreezeReplies()
	defer px.Thaw()
	if err := holder.Unlock(hold); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the release to take the first waiter out of the set", func() bool { return !registered(chosenField) })
	cancel()
	gaveUp := time.Now()
	if err := <-chosenDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("chosen waiter: %v, want context.Canceled", err)
	}
	select {
	case got := <-nextDone:
		if !got.IsZero() {
			t.Logf("next waiter got the lock %s after the chosen one gave up", got.Sub(gaveUp))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the next waiter did not get the lock within 5s of the chosen waiter giving up (its fallback is 20s)")
	}
}

// A waiter whose process died after registering costs the others at most
// one fallback period (a third of the waiter timeout): the fallback is 3 s,
// and the bound (3 s plus 2 s for a loaded machine) is below two. (Where a
// release can tell nobody listens, it costs nothing: see
// TestMutexDeadWaitersSkipped.)
func TestMutexDeadWaiterBounded(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	const waiterTimeout = 9 * time.Second
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(waiterTimeout))
	other := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix), WithWaiterTimeout(waiterTimeout))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "dead")
	hold, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What a waiter leaves when its process is killed: its registration.
	registerDeadWaiter(t, ctx, m, "0badc0de-0000-4000-8000-000000000000:dead")
	w := mustMutex(t, other, "dead")
	got := lockedAt(t, ctx, w)
	waitFor(t, 5*time.Second, "the live waiter to register", func() bool {
		n, _ := node.Do(t, "ZCARD", m.waiters).AsInt64()
		return n == 2
	})
	if err := m.Unlock(hold); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	select {
	case at := <-got:
		if at.IsZero() {
			return
		}
		// The contract: at most a third of the waiter timeout (the live
		// waiter's fallback), plus slack for a loaded machine. The holder's
		// lease is 30 s.
		if d, bound := at.Sub(released), waiterTimeout/3+2*time.Second; d > bound {
			t.Errorf("the live waiter got the lock %s after a release that woke a dead waiter; bound %s (fallback %s)", d, bound, waiterTimeout/3)
		}
	case <-time.After(waiterTimeout/3 + 5*time.Second):
		t.Fatalf("the live waiter did not get the lock within %s of a release that woke a dead waiter", waiterTimeout/3+5*time.Second)
	}
}

// registerDeadWaiter leaves in m's waiter set what a waiter whose process
// was killed leaves: the registration its refused attempt made.
func registerDeadWaiter(t *testing.T, ctx context.Context, m *Mutex, field string) {
	t.Helper()
	if res, err := generated.MutexAcquire(ctx, m.c.rc, m.key, m.fence, m.waiters,
		field, "60000", acquireCtl(false, false, DefaultFenceIdle, time.Minute, 0)); err != nil || res >= 0 {
		t.Fatalf("registering the dead waiter %s: %d, %v", field, res, err)
	}
}

// Redisson interop, both ways, with Go waiters registered: a Go release
// still says "0" to Redisson's waiters (before naming the Go waiter it
// wakes, on that waiter's client's channel), and a Redisson release, which
// says only "0", wakes Go waiters. Go waiters listen on Redisson's channel
// only while a Redisson client holds the lock, so a Go release's "0" reaches
// no Go process.
func TestMutexWakeRedissonInterop(t *testing.T) {
	t.Parallel()
	for _, sharded := range []bool{false, true} {
		t.Run(fmt.Sprintf("sharded=%v", sharded), func(t *testing.T) {
			node := redistest.Server(t)
			prefix := sharedPrefix(t)
			opts := []Option{prefix, WithWaiterTimeout(time.Minute)}
			if sharded {
				opts = append(opts, WithShardedPubSub(true))
			}
			holder := newTestClient(t, node.Client(t), opts...)
			m := mustMutex(t, holder, "mixed")
			ctx := testCtx(t, 30*time.Second)
			java := javaClient{rc: node.Client(t), field: "7f1c0a52-3c1e-4b9e-9d5e-0e4c2f2b9a11:57"}
			publish := "publish"
			if sharded {
				publish = "spublish"
			}
			numsub := func(channel string) int64 { return subscribers(t, node, sharded, channel) }
			waiter := mustMutex(t, newTestClient(t, node.Client(t), opts...), "mixed")
			ownWake := m.wake + ":" + waiter.c.id
			var log *channelLog
			if !sharded {
				log = listen(t, node, m.channel, ownWake)
			}

			// Go holds; a Go waiter registers; the Go release says "0" on
			// Redisson's channel, then names the Go waiter.
			hold, err := m.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			done := within(t, 5*time.Second, "Go waiter after a Go release", func() error {
				l, err := waiter.Lock(ctx)
				if err != nil {
					return err
				}
				return waiter.Unlock(l)
			})
			goListeners := int64(0)
			if log != nil {
				goListeners = 1 // the test's own listener
			}
			waitFor(t, 5*time.Second, "the Go waiter to register and listen on its wake channel", func() bool {
				n, _ := node.Do(t, "ZCARD", m.waiters).AsInt64()
				return n == 1 && numsub(ownWake) == 1+goListeners
			})
			if n := numsub(m.channel); n != goListeners {
				t.Fatalf("%d clients listen on Redisson's channel while a Go owner holds the lock, want %d", n, goListeners)
			}
			if err := m.Unlock(hold); err != nil {
				t.Fatal(err)
			}
			done()
			if log != nil {
				if got := log.next(t, 3*time.Second); got != m.channel+" 0" {
					t.Fatalf("first message %q, want Redisson's \"0\" on %s", got, m.channel)
				}
				if got := log.next(t, 3*time.Second); !strings.HasPrefix(got, ownWake+" ") || !strings.Contains(got, ":"+waiter.c.id+":") {
					t.Fatalf("second message %q, want the Go waiter named on %s", got, ownWake)
				}
				_ = log.next(t, 3*time.Second) // the waiter's own release: "0", nobody named
				log.quiet(t, 200*time.Millisecond)
			}

			// Java holds; Go waiters on their own clients register; Java's
			// release says only "0" (Redisson's script) and one of them gets
			// the lock at once (Java's lease is 30 s, the Go fallback 20 s).
			if held, err := java.acquire(ctx, m.Key()); err != nil || !held {
				t.Fatalf("Java acquire: held=%v err=%v", held, err)
			}
			const goWaiters = 3
			var acquired atomic.Int32
			var dones []func()
			for range goWaiters {
				w := mustMutex(t, newTestClient(t, node.Client(t), opts...), "mixed")
				dones = append(dones, within(t, 10*time.Second, "Go waiter after a Redisson release", func() error {
					l, err := w.Lock(ctx)
					if err != nil {
						return err
					}
					acquired.Add(1)
					time.Sleep(10 * time.Millisecond)
					return w.Unlock(l)
				}))
			}
			waitFor(t, 5*time.Second, "the Go waiters to register and listen for Redisson's \"0\"", func() bool {
				n, _ := node.Do(t, "ZCARD", m.waiters).AsInt64()
				return n == goWaiters && numsub(m.channel) == goWaiters+goListeners
			})
			ch := redissonName("redisson_lock__channel", m.Key())
			r := java.rc.Do(ctx, java.rc.B().Eval().Script(javaReleaseWith(publish)).Numkeys(2).Key(m.Key(), ch).Arg("0", "30000", java.field).Build())
			if n, err := r.AsInt64(); err != nil || n != 1 {
				t.Fatalf("Java release = %d, %v", n, err)
			}
			for _, d := range dones {
				d()
			}
			if n := acquired.Load(); n != goWaiters {
				t.Fatalf("%d of %d Go waiters got the lock", n, goWaiters)
			}
		})
	}
}

// javaReleaseWith is Redisson's unlock (see javaRelease) publishing with
// cmd, as Redisson does with sharded pub/sub on a cluster.
func javaReleaseWith(cmd string) string {
	return strings.Replace(javaRelease, "redis.call('publish'", "redis.call('"+cmd+"'", 1)
}

// On a Cluster the waiter set and both channels live in the lock's slot: a
// release wakes the longest-registered Go waiter by name, so three waiters on
// their own clients get the lock in the order they registered, each within a
// bound only a message meets (their fallback is 10 s). With sharded pub/sub
// (the default there) the messages stay on the slot's node; with classic
// pub/sub (WithShardedPubSub(false)) the cluster bus carries them to whichever
// node a client subscribed on.
func TestMutexWakeOneCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	for _, sharded := range []bool{true, false} {
		t.Run(fmt.Sprintf("sharded=%v", sharded), func(t *testing.T) {
			testMutexWakeOneCluster(t, cl, sharded)
		})
	}
}

func testMutexWakeOneCluster(t *testing.T, cl *redistest.ClusterT, sharded bool) {
	opts := []Option{sharedPrefix(t), WithWaiterTimeout(30 * time.Second), WithShardedPubSub(sharded)}
	ctx := testCtx(t, 60*time.Second)
	for _, name := range []string{"order:1", "user:{42}:wallet"} {
		holder := mustMutex(t, newTestClient(t, cl.Client(t), opts...), name)
		node := cl.NodeFor(t, holder.waiters)
		l, err := holder.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: Lock: %v", name, err)
		}
		// Each waiter runs two scripts before it waits: the refused attempt
		// that registers it and one more right after subscribing. Until the
		// second has run, a release's free lock is open to it, so the test
		// releases only once every waiter is waiting.
		before := scriptCalls(t, node)
		got := make(chan int, 3)
		var waits []func()
		for i := range 3 {
			m := mustMutex(t, newTestClient(t, cl.Client(t), opts...), name)
			waits = append(waits, within(t, 20*time.Second, name, func() error {
				l, err := m.Lock(ctx)
				if err != nil {
					return err
				}
				got <- i
				return m.Unlock(l)
			}))
			waitFor(t, 5*time.Second, name+" registered and waiting", func() bool {
				n, _ := node.Do(t, "ZCARD", holder.waiters).AsInt64()
				return n == int64(i+1) && scriptCalls(t, node)-before == int64(2*(i+1))
			})
		}
		start := time.Now()
		if err := holder.Unlock(l); err != nil {
			t.Fatalf("%s: Unlock: %v", name, err)
		}
		for _, w := range waits {
			w()
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s: hand-offs took %s: waiters not woken on their own channels", name, d)
		}
		if a, b, c := <-got, <-got, <-got; a != 0 || b != 1 || c != 2 {
			t.Fatalf("%s: waiters got the lock in order %d, %d, %d; want registration order", name, a, b, c)
		}
		if n, err := node.Do(t, "EXISTS", holder.waiters).AsInt64(); err != nil || n != 0 {
			t.Fatalf("%s: waiter set left behind: %d, %v", name, n, err)
		}
	}
}

// The dispatcher's rules for targeted waiting, message by message: a named
// wake on the client's own wake channel wakes only the waiter named, with its
// place, and makes a newcomer polite for handoffGrace; a waiter that also
// listens for Redisson's "0" (its lock held by a Redisson client) is woken by
// it, one per message.
func TestTargetedDispatch(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 10*time.Second)
	const channel, prefix = "dispatch:channel", "dispatch:wake"
	a, err := c.subs.joinTargeted(ctx, prefix, "c:a")
	if err != nil {
		t.Fatal(err)
	}
	defer c.subs.leave(a)
	b, err := c.subs.joinTargeted(ctx, prefix, "c:b")
	if err != nil {
		t.Fatal(err)
	}
	defer c.subs.leave(b)
	if a.sub.name != prefix+":"+c.ID() {
		t.Fatalf("targeted waiters listen on %q, want the client's own channel %q", a.sub.name, prefix+":"+c.ID())
	}
	woken := func(w *waiter, within time.Duration) bool {
		select {
		case <-w.wake:
			return true
		case <-time.After(within):
			return false
		}
	}
	const quiet = 100 * time.Millisecond

	if c.subs.handingOff(prefix) {
		t.Fatal("a newcomer is polite before any hand-off")
	}
	// A Go release naming b: b wakes with its place, a does not.
	c.subs.dispatch(a.sub, rueidis.PubSubMessage{Channel: a.sub.name, Message: "1700000000123:c:b"})
	polite := c.subs.handingOff(prefix) // asked at once: politeness lasts handoffGrace
	if !woken(b, time.Second) {
		t.Fatal("the named waiter was not woken")
	}
	if got := b.takeSince(); got != 1700000000123 {
		t.Fatalf("woken waiter's place = %d, want the score from the wake", got)
	}
	if woken(a, quiet) {
		t.Fatal("a named wake also woke another waiter")
	}
	if !polite {
		t.Fatal("right after a named wake, a newcomer is not polite")
	}
	if c.subs.handingOff(prefix) {
		t.Fatalf("a newcomer is still polite %s after the hand-off", quiet)
	}

	// Held by a Redisson client: both listen for "0" too; one "0" wakes one.
	za, err := c.subs.joinZero(ctx, channel, a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.subs.leave(za)
	zb, err := c.subs.joinZero(ctx, channel, b)
	if err != nil {
		t.Fatal(err)
	}
	defer c.subs.leave(zb)
	c.subs.dispatch(za.sub, rueidis.PubSubMessage{Channel: channel, Message: "0"})
	if !woken(a, time.Second) {
		t.Fatal("Redisson's \"0\" did not wake the longest waiter listening for it")
	}
	if woken(b, quiet) {
		t.Fatal("one \"0\" woke two waiters")
	}
	if c.subs.handingOff(prefix) {
		t.Fatal("a \"0\" made a newcomer polite")
	}
}

// An owner's last local Unlock gives up every hold it has on the server,
// including re-entries whose replies were lost (here added behind the
// Client's back): the lock is free afterwards, for Mutex (one HDEL) and
// FairMutex (release, then undo of the rest) alike.
func TestLastUnlockReleasesUnknownHolds(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	ctx := testCtx(t, 10*time.Second)
	for _, l := range []interface {
		Locker
		Key() string
	}{mustMutex(t, c, "unknown-holds"), mustFair(t, c, "unknown-holds-fair")} {
		lctx, err := l.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fields, err := rc.Do(ctx, rc.B().Hkeys().Key(l.Key()).Build()).AsStrSlice()
		if err != nil || len(fields) != 1 {
			t.Fatalf("%s: lock hash fields %v (%v), want one", l.Key(), fields, err)
		}
		if err := rc.Do(ctx, rc.B().Hincrby().Key(l.Key()).Field(fields[0]).Increment(2).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(lctx); err != nil {
			t.Fatalf("%s: Unlock: %v", l.Key(), err)
		}
		if exists(t, node, l.Key()) {
			t.Fatalf("%s: still held after the owner's last Unlock", l.Key())
		}
	}
}

// FairMutex's usual release with nobody queued is four server commands:
// EVALSHA, HDEL (the emptied hash goes with it), LINDEX on the queue and on
// Redisson's RFairLock queue. No latch, no clock, no deadline reads.
func TestFairUncontendedReleaseCommands(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	f := mustFair(t, c, "quiet-fair")
	l, err := f.Lock(ctx) // warm-up: scripts loaded, the fencing counter started
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if l, err = f.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	before := commandCalls(t, node)
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
	rel, total := lockCommands(before, commandCalls(t, node))
	if rel["hdel"] != 1 || rel["lindex"] != 2 || total != 4 {
		t.Errorf("release ran %d commands %v, want 4: EVALSHA, HDEL, LINDEX twice", total, rel)
	}
	if exists(t, node, f.m.key) {
		t.Error("the lock is still held after Unlock")
	}
}

// A newcomer that queues politely behind a hand-off, with other waiters
// registered ahead of it, waits for its turn instead of calling again within
// politeFallback: releases reach it in turn.
func TestPoliteBehindOthersWaitsItsTurn(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 20*time.Second)
	c := newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(30*time.Second))
	m := mustMutex(t, c, "polite")
	other := mustMutex(t, newTestClient(t, node.Client(t), prefix), "polite")
	warm(t, m) // scripts loaded
	// Someone else is in line, and this client is handing the lock over
	// (for the whole test: a loaded machine may take longer than
	// handoffGrace to start the Lock).
	node.Do(t, "ZADD", m.waiters, "1", "00000000-0000-8000-8000-000000000000:ahead")
	c.subs.noteHandoff(m.wake)
	c.subs.mu.Lock()
	c.subs.handoffs[c.subs.ownWake(m.wake)] = time.Now().Add(time.Hour)
	c.subs.mu.Unlock()
	before := commandCalls(t, node)
	got := make(chan error, 1)
	go func() {
		l, err := m.Lock(ctx)
		if err == nil {
			err = m.Unlock(l)
		}
		got <- err
	}()
	waitFor(t, 5*time.Second, "the newcomer to register behind the other waiter", func() bool {
		n, _ := node.Do(t, "ZCARD", m.waiters).AsInt64()
		return n == 2
	})
	time.Sleep(10 * politeFallback)
	// Its attempt, and one more right after subscribing (a wake sent in
	// between is not missed).
	after := commandCalls(t, node)
	if calls := after["evalsha"] - before["evalsha"]; calls != 2 {
		t.Fatalf("the polite newcomer ran %d scripts in %s, want 2: it called again instead of waiting its turn", calls, 10*politeFallback)
	}
	// Declining a free lock needs no look at the holders: there are none.
	if n := after["hkeys"] - before["hkeys"]; n != 0 {
		t.Fatalf("the polite newcomer's attempts on a free lock ran HKEYS %d times, want 0", n)
	}
	// Its turn: the waiter ahead leaves, a release wakes it.
	node.Do(t, "ZREM", m.waiters, "00000000-0000-8000-8000-000000000000:ahead")
	l, err := other.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Unlock(l); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the polite newcomer was not woken in its turn")
	}
}

// A polite caller declines a free lock only while it may be another waiter's
// hand-off. One that registered earlier in this wait (leave) and has since
// been taken out of the set was the waiter that hand-off woke (its wake can
// go out before its subscription is confirmed): it takes the lock. Were it
// to decline, the lock would stay free while every waiter, itself included,
// sleeps until its fallback timer (a third of the waiter timeout).
func TestPoliteTakesItsOwnHandOff(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	m := mustMutex(t, c, "own-handoff")
	ctx := testCtx(t, 10*time.Second)
	field := c.ID() + ":w"
	ctl := acquireCtl(true, true, DefaultFenceIdle, 30*time.Second, 0)
	acquire := func() int64 {
		t.Helper()
		r, err := generated.MutexAcquire(ctx, c.rc, m.key, m.fence, m.waiters, field, "60000", ctl)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Still in the set (someone else's hand-off may be under way): declines.
	node.Do(t, "ZADD", m.waiters, "1", "00000000-0000-8000-8000-000000000000:ahead")
	node.Do(t, "ZADD", m.waiters, "2", field)
	if r := acquire(); r >= 0 {
		t.Fatalf("a polite caller still in the set took a free lock (reply %d)", r)
	}
	if n, _ := node.Do(t, "EXISTS", m.key).AsInt64(); n != 0 {
		t.Fatal("the declined lock exists")
	}
	// Taken out by a release: the hand-off was its own.
	node.Do(t, "ZREM", m.waiters, field)
	if r := acquire(); r <= 0 {
		t.Fatalf("a polite caller taken out of the set by a release declined the free lock (reply %d)", r)
	}
	if owners, _ := node.Do(t, "HKEYS", m.key).AsStrSlice(); len(owners) != 1 || owners[0] != field {
		t.Fatalf("lock held by %v, want %s", owners, field)
	}
}

// A waiter can be registered twice over: a release takes it out of the set
// and names it, and before the wake arrives another attempt of its (its
// fallback timer, or the one right after subscribing) is refused and
// registers it again. When the woken attempt then gets the lock, the second
// place must go too: left behind, a later release would take it and name a
// waiter that is no longer waiting, and every waiter would sleep until its
// fallback timer while the lock stays free.
func TestWokenWaiterLeavesSecondPlace(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t), WithWaiterTimeout(600*time.Millisecond)) // fallback 200 ms
	m := mustMutex(t, c, "second-place")
	ctx := testCtx(t, 20*time.Second)
	field := c.ID() + ":w"
	ownWake := m.wake + ":" + c.ID()
	// Held by another scriptlock client, with no Client behind it: only the
	// test releases it.
	node.Do(t, "HSET", m.key, "00000000-0000-8000-8000-000000000000:x", "1")
	node.Do(t, "PEXPIRE", m.key, "60000")
	type held struct {
		l   context.Context
		err error
	}
	got := make(chan held, 1)
	go func() {
		l, err := m.Lock(WithOwner(ctx, "w"))
		got <- held{l, err}
	}()
	var first string
	waitFor(t, 5*time.Second, "the waiter to register and listen", func() bool {
		first, _ = node.Do(t, "ZSCORE", m.waiters, field).ToString()
		return first != "" && subscribers(t, node, false, ownWake) == 1
	})
	// A release takes it out of the set; its wake is still on the way.
	node.Do(t, "ZREM", m.waiters, field)
	// Its fallback timer fires first: refused, it registers again.
	waitFor(t, 5*time.Second, "the waiter to register again", func() bool {
		s, _ := node.Do(t, "ZSCORE", m.waiters, field).ToString()
		return s != ""
	})
	// The lock comes free (the holder's lease ran out) and the wake arrives.
	node.Do(t, "DEL", m.key)
	node.Do(t, "PUBLISH", ownWake, first+":"+field)
	var h held
	select {
	case h = <-got:
		if h.err != nil {
			t.Fatal(h.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the woken waiter did not get the lock")
	}
	if s, _ := node.Do(t, "ZSCORE", m.waiters, field).ToString(); s != "" {
		t.Fatalf("the waiter holds the lock and still has a place in the waiter set (score %s)", s)
	}
	if err := m.Unlock(h.l); err != nil {
		t.Fatal(err)
	}
}

// A waiter with a short waiter timeout comes and goes while one with a long
// timeout sleeps on its fallback (a third of its timeout): the short one's
// registration must not cut the waiter set's expiry to its own timeout, or
// the set expires with the long waiter in it and the release wakes nobody,
// leaving the lock free while the long waiter sleeps on.
func TestMutexShortWaiterTimeoutKeepsLongerWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 60*time.Second)
	holder := mustMutex(t, newTestClient(t, node.Client(t), prefix), "mixed-ttl")
	long := mustMutex(t, newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(30*time.Second)), "mixed-ttl") // fallback 10 s
	short := mustMutex(t, newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(300*time.Millisecond)), "mixed-ttl")

	hold, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		l, err := long.Lock(ctx)
		if err != nil {
			t.Error(err)
			close(got)
			return
		}
		got <- time.Now()
		_ = long.Unlock(l)
	}()
	waitFor(t, 5*time.Second, "the long waiter to register", func() bool {
		n, _ := node.Do(t, "ZCARD", holder.waiters).AsInt64()
		return n == 1
	})
	waitQuiet(t, node, 200*time.Millisecond) // asleep on its fallback
	if _, err := short.TryLock(ctx, 50*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("short TryLock: %v, want ErrNotAcquired", err)
	}
	time.Sleep(500 * time.Millisecond) // past the short waiter's timeout
	if n, _ := node.Do(t, "ZCARD", holder.waiters).AsInt64(); n != 1 {
		t.Errorf("waiters registered after the short waiter left: %d, want the long waiter's 1", n)
	}
	if err := holder.Unlock(hold); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-got:
		if !ok {
			t.Fatal("the long waiter failed")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the long waiter did not get the lock within 3 s of the release (its fallback is 10 s)")
	}
}

// Two waiters of one Client listen for Redisson's "0" (a Redisson client
// holds the lock). Its release sends "0", the Client wakes one of them, and
// that one gives up at that moment: it must pass the wake on to the other,
// which would otherwise sleep on its fallback with the lock free (no release
// named that wake, so the server's MutexWaitCancel passes nothing on).
func TestMutexZeroWakePassedOnByWaiterThatLeaves(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(time.Minute)) // fallback 20 s
	m := mustMutex(t, c, "zero-leave")
	ctx := testCtx(t, 60*time.Second)
	node.Do(t, "HSET", m.key, "7f1c0a52-3c1e-4b9e-9d5e-0e4c2f2b9a11:57", "1") // a Redisson holder
	node.Do(t, "PEXPIRE", m.key, "60000")
	zeroListeners := func() int {
		c.subs.mu.Lock()
		defer c.subs.mu.Unlock()
		if cs := c.subs.chans[m.channel]; cs != nil {
			return len(cs.waiters)
		}
		return 0
	}
	ctx1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	done1 := make(chan error, 1)
	go func() {
		l, err := m.Lock(WithOwner(ctx1, "w1"))
		if err == nil {
			_ = m.Unlock(l)
		}
		done1 <- err
	}()
	waitFor(t, 5*time.Second, `w1 listening for "0"`, func() bool { return zeroListeners() == 1 })
	got2 := make(chan error, 1)
	go func() {
		l, err := m.Lock(WithOwner(ctx, "w2"))
		if err == nil {
			err = m.Unlock(l)
		}
		got2 <- err
	}()
	waitFor(t, 5*time.Second, `w2 listening for "0"`, func() bool { return zeroListeners() == 2 })
	waitQuiet(t, node, 200*time.Millisecond)

	// The Redisson holder releases; its "0" reaches this Client and wakes
	// w1 (the longest listening), whose context ends at that moment.
	node.Do(t, "DEL", m.key)
	c.subs.mu.Lock()
	cs := c.subs.chans[m.channel]
	c.subs.mu.Unlock()
	c.subs.dispatch(cs, rueidis.PubSubMessage{Channel: m.channel, Message: "0"})
	cancel1()
	if err := <-done1; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("w1: %v", err)
	}
	select {
	case err := <-got2:
		if err != nil {
			t.Fatalf("w2: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal(`w2 did not get the free lock within 3 s of the Redisson release (its fallback is 20 s): the "0" w1 was woken by was lost with it`)
	}
}

// A polite waiter's short fallback timer fires just as a release names it:
// the timer branch re-arms the wait (a hand-off went out since), the next
// pass reads the pending wake, and the attempt it causes must carry that
// wake's score, so that if a newcomer took the lock first the waiter gets
// its place back instead of going to the back of the line.
//
// The release and the newcomer come when the fallback timer fires (the
// Client's testHookFallback), not after a sleep meant to outlast it: on a
// loaded machine the timer ran out first, P took the free lock with its
// third call as it should, and was never seen registered again.
func TestMutexPoliteWaiterKeepsWokenPlace(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(30*time.Second))
	m := mustMutex(t, c, "polite-place")
	ctx := testCtx(t, 20*time.Second)
	warm(t, m)
	// This Client is handing the lock over (for the whole test), so the
	// waiter below is polite.
	c.subs.noteHandoff(m.wake)
	c.subs.mu.Lock()
	c.subs.handoffs[c.subs.ownWake(m.wake)] = time.Now().Add(time.Hour)
	c.subs.mu.Unlock()
	field := c.ID() + ":p"
	// The first fallback timer to fire holds P in its timer branch until
	// the release below has named it, or the test ends: Close waits for
	// P's Lock, so a check that fails before the release must not leave
	// it parked here (the test would hang to the binary's timeout, its
	// failure unreported).
	fired, named := make(chan struct{}), make(chan struct{})
	var once, nameOnce sync.Once
	name := func() { nameOnce.Do(func() { close(named) }) }
	defer name()
	c.testHookFallback = func(context.Context) {
		once.Do(func() {
			close(fired)
			<-named
		})
	}
	before := scriptCalls(t, node)
	go func() {
		l, err := m.Lock(WithOwner(ctx, "p"))
		if err == nil {
			_ = m.Unlock(l)
		}
	}()
	// Its first attempt and the one after subscribing both decline the
	// free lock: it now sleeps its short polite fallback, which fires.
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("P's polite fallback timer did not fire within 5s")
	}
	if n := scriptCalls(t, node) - before; n < 2 {
		t.Fatalf("%d script calls before P's fallback timer fired, want two polite attempts", n)
	}
	// A release took P out of the set with its score (here 1) and names it;
	// a newcomer holds the lock by the time P's attempt runs.
	node.Do(t, "HSET", m.key, "00000000-0000-8000-8000-000000000000:x", "1")
	node.Do(t, "PEXPIRE", m.key, "60000")
	node.Do(t, "ZREM", m.waiters, field)
	c.subs.mu.Lock()
	cs := c.subs.chans[c.subs.ownWake(m.wake)]
	c.subs.wakeNamedLocked(cs, "1:"+field)
	c.subs.mu.Unlock()
	name() // the timer branch goes on and finds the hand-off that named P
	waitFor(t, 5*time.Second, "the woken attempt", func() bool { return scriptCalls(t, node)-before >= 3 })
	waitFor(t, 5*time.Second, "P registered again", func() bool {
		return node.Do(t, "ZSCORE", m.waiters, field).Error() == nil
	})
	if score, err := node.Do(t, "ZSCORE", m.waiters, field).ToString(); score != "1" {
		t.Fatalf("the woken waiter's place after its refused attempt: score %q (%v), want 1 (the wake's, its place back)", score, err)
	}
	node.Do(t, "DEL", m.key)
}

// A Cluster whose nodes have no sharded pub/sub (SPUBLISH and SSUBSCRIBE
// renamed away here; a server older than 7.0 has none either), reached by
// a user whose ACL refuses COMMAND, so the Client cannot ask and starts with
// sharded publishing. Its first release's script fails at the SPUBLISH,
// after its writes ("Unknown Redis command called from script"): the
// release must be made again and succeed, and the Client publish plainly
// from then on, so the next release wakes a waiter (whose SSUBSCRIBE was
// refused, so it listens plainly) at once.
func TestShardedPublishRefusedCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--rename-command", "SPUBLISH", "", "--rename-command", "SSUBSCRIBE", "", "--rename-command", "SUNSUBSCRIBE", ""))
	for _, n := range cl.Nodes {
		if err := n.Do(t, "ACL", "SETUSER", "default", "-command").Error(); err != nil {
			t.Fatal(err)
		}
	}
	opts := []Option{sharedPrefix(t), WithWaiterTimeout(30 * time.Second)}
	h := newTestClient(t, cl.Client(t), opts...)
	w := newTestClient(t, cl.Client(t), opts...)
	ctx := testCtx(t, 30*time.Second)
	holder, waiter := mustMutex(t, h, "refused"), mustMutex(t, w, "refused")
	held, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Unlock(held); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if held, err = holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	waited := within(t, 20*time.Second, "the waiter's Lock", func() error {
		l, err := waiter.Lock(ctx)
		if err != nil {
			return err
		}
		got <- time.Now()
		return waiter.Unlock(l)
	})
	node := cl.NodeFor(t, holder.waiters)
	waitFor(t, 5*time.Second, "the waiter registered", func() bool {
		n, _ := node.Do(t, "ZCARD", holder.waiters).AsInt64()
		return n == 1
	})
	time.Sleep(200 * time.Millisecond) // subscribed (plainly) and waiting
	released := time.Now()
	if err := holder.Unlock(held); err != nil {
		t.Fatalf("second Unlock: %v", err)
	}
	waited()
	// The waiter times out after 30 s, so it calls again every 10 s: a
	// release it did not hear of would keep it that long.
	if d := (<-got).Sub(released); d > 2*time.Second {
		t.Fatalf("the waiter got the lock %s after the release: the release woke nobody", d)
	}
}

// TestShardedPublishRefusedConcurrently: releases sent together, before the
// first refusal of SPUBLISH came back and switched the Client to PUBLISH,
// are each made again with PUBLISH, not failed with the refusal.
func TestShardedPublishRefusedConcurrently(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--rename-command", "SPUBLISH", "", "--rename-command", "SSUBSCRIBE", "", "--rename-command", "SUNSUBSCRIBE", ""))
	for _, n := range cl.Nodes {
		if err := n.Do(t, "ACL", "SETUSER", "default", "-command").Error(); err != nil {
			t.Fatal(err)
		}
	}
	c := newTestClient(t, cl.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 30*time.Second)
	const n = 32
	locks := make([]*Mutex, n)
	held := make([]context.Context, n)
	for i := range locks {
		locks[i] = mustMutex(t, c, "concurrent"+strconv.Itoa(i))
		var err error
		if held[i], err = locks[i].Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	start := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range locks {
		wg.Go(func() {
			<-start
			errs <- locks[i].Unlock(held[i])
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	failed := 0
	var first error
	for err := range errs {
		if err != nil {
			failed++
			first = cmp.Or(first, err)
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d concurrent Unlocks failed, the first with: %v", failed, n, first)
	}
	for i, m := range locks {
		if n, err := cl.NodeFor(t, m.key).Do(t, "EXISTS", m.key).AsInt64(); err != nil || n != 0 {
			t.Fatalf("lock %d still on the server after its Unlock (EXISTS %d, %v)", i, n, err)
		}
	}
}

// Waiters whose processes died are dropped by the release that would have
// woken them: a wake no client hears goes on to the next waiter, so a live
// waiter behind three dead ones is woken by that release, not by its
// fallback (a third of the waiter timeout: 3 s here).
func TestMutexDeadWaitersSkipped(t *testing.T) {
	t.Parallel()
	for _, sharded := range []bool{false, true} {
		t.Run(fmt.Sprintf("sharded=%v", sharded), func(t *testing.T) {
			node := redistest.Server(t)
			const waiterTimeout = 9 * time.Second
			opts := []Option{WithWaiterTimeout(waiterTimeout), WithShardedPubSub(sharded)}
			c := newTestClient(t, node.Client(t), opts...)
			other := newTestClient(t, node.Client(t), append(opts, WithKeyPrefix(c.cfg.prefix))...)
			ctx := testCtx(t, 30*time.Second)
			m := mustMutex(t, c, "dead")
			hold, err := m.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// What waiters leave when their processes are killed: their
			// registrations, two of one process and one of another.
			for _, field := range []string{"0badc0de-0000-4000-8000-000000000000:1", "0badc0de-0000-4000-8000-000000000000:2", "0badc0de-0000-4000-8000-000000000001:1"} {
				registerDeadWaiter(t, ctx, m, field)
			}
			w := mustMutex(t, other, "dead")
			got := lockedAt(t, ctx, w)
			waitFor(t, 5*time.Second, "the live waiter to register and listen", func() bool {
				n, _ := node.Do(t, "ZCARD", m.waiters).AsInt64()
				return n == 4 && subscribers(t, node, sharded, m.wake+":"+other.id) == 1
			})
			if err := m.Unlock(hold); err != nil {
				t.Fatal(err)
			}
			released := time.Now()
			select {
			case at := <-got:
				if at.IsZero() {
					return
				}
				// Woken by the release: a round trip or two, and slack for a
				// loaded machine, far below the 3 s fallback.
				if d := at.Sub(released); d > time.Second {
					t.Fatalf("the live waiter got the lock %s after a release with three dead waiters ahead of it, want it woken by that release (under 1s; its fallback is %s)", d, waiterTimeout/3)
				}
			case <-time.After(waiterTimeout/3 + 5*time.Second):
				t.Fatalf("the live waiter did not get the lock within %s of the release", waiterTimeout/3+5*time.Second)
			}
			if n, _ := node.Do(t, "ZCARD", m.waiters).AsInt64(); n != 0 {
				t.Fatalf("%d waiters left registered, want 0: the dead ones are dropped", n)
			}
		})
	}
}

// The other calls that wake a Mutex's next Go waiter skip dead ones too: a
// waiter that gives up after its wake passes it on, and a forced unlock wakes
// the next waiter, each to the first waiter whose client listens, dropping
// the ones before it.
func TestMutexPassedWakeSkipsDeadWaiters(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "passed")
	ctx := testCtx(t, 10*time.Second)
	const live = "11111111-0000-4000-8000-000000000000"
	log := listen(t, node, m.wake+":"+live)
	register := func() {
		for i, field := range []string{"0badc0de-0000-4000-8000-000000000000:1", "0badc0de-0000-4000-8000-000000000001:1", live + ":1"} {
			if err := node.Do(t, "ZADD", m.waiters, strconv.Itoa(1000+i), field).Error(); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(what string, passed bool, err error) {
		t.Helper()
		if err != nil || !passed {
			t.Fatalf("%s: %v, %v; want the wake passed on", what, passed, err)
		}
		if got := log.next(t, 2*time.Second); got != m.wake+":"+live+" 1002:"+live+":1" {
			t.Fatalf("%s: message %q, want the live waiter named on its client's channel", what, got)
		}
		if n, _ := node.Do(t, "ZCARD", m.waiters).AsInt64(); n != 0 {
			t.Fatalf("%s: %d waiters left registered, want 0: the dead ones are dropped", what, n)
		}
	}

	register()
	passed, err := generated.MutexWaitCancel(ctx, c.rc, m.key, m.waiters, m.wake, m.latch+":leave", "gone:1", "publish", time.Minute)
	check("a woken waiter giving up", passed, err)

	register()
	if err := node.Do(t, "HSET", m.key, "22222222-0000-4000-8000-000000000000:1", "1").Error(); err != nil {
		t.Fatal(err)
	}
	// A ForceUnlock's record is reserved before its deletion runs.
	if _, err := generated.RecordReserve(ctx, c.rc, m.key+":record", time.Minute); err != nil {
		t.Fatal(err)
	}
	deleted, err := generated.MutexForceUnlock(ctx, c.rc, m.key, m.channel, m.waiters, m.wake, m.key+":record", "publish", time.Minute, 0, false)
	check("a forced unlock", deleted, err)
}
