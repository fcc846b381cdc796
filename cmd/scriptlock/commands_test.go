package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestList(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			prefix := redistest.Prefix(t)
			c := newClient(t, d.rc, prefix)
			var want []string
			for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
				if _, err := mustMutex(t, c, "order:"+n).Lock(ctx); err != nil {
					t.Fatal(err)
				}
				want = append(want, prefix+"order:"+n)
			}
			if _, err := mustRW(t, c, "doc:1").RLock(ctx); err != nil {
				t.Fatal(err)
			}
			want = append(want, prefix+"doc:1")
			redissonAcquire(t, ctx, d.rc, prefix+"java:1", "5a1d2c3e-0000-4000-8000-00000000beef:1")
			want = append(want, prefix+"java:1")
			// Not locks: a counter, a hash of another shape, a released lock.
			if _, err := mustSem(t, c, "sem").TrySetPermits(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if _, err := mustLatch(t, c, "latch").TrySetCount(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if err := mustSem(t, c, "sem").Release(ctx, 1); err != nil {
				t.Fatal(err)
			}
			d.rc.Do(ctx, d.rc.B().Hset().Key(prefix+"profile").FieldValue().FieldValue("name", "x").Build())
			free := mustMutex(t, c, "order:free")
			l, err := free.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := free.Unlock(l); err != nil {
				t.Fatal(err)
			}
			slices.Sort(want)

			// Pages of at most 2 SCAN calls each, followed by cursor until done.
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatal("list did not finish within 100 pages")
				}
				args := []string{"list", "--json", "--key-prefix", prefix, "--limit", "2", "--max-scans", "2"}
				if cursor != "" {
					args = append(args, "--cursor", cursor)
				}
				r := cli(ctx, d, "", args...)
				if r.code != exitOK {
					t.Fatalf("list: exit %d\n%s", r.code, r.errOut)
				}
				var l listing
				if err := json.Unmarshal([]byte(r.out), &l); err != nil {
					t.Fatalf("%v\n%s", err, r.out)
				}
				for _, rep := range l.Locks {
					got = append(got, rep.Key)
				}
				if l.Cursor == "" {
					break
				}
				cursor = l.Cursor
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("listed %v\nwant     %v", got, want)
			}

			// --prefix narrows; the table names the locks without the key prefix.
			r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--prefix", "order:")
			if r.code != exitOK {
				t.Fatalf("list: exit %d\n%s", r.code, r.errOut)
			}
			lines := strings.Split(strings.TrimSpace(r.out), "\n")
			if len(lines) != 8 || !strings.HasPrefix(lines[0], "KEY") {
				t.Fatalf("want a header and 7 order locks:\n%s", r.out)
			}
			for _, line := range lines[1:] {
				if !strings.HasPrefix(line, "order:") || !strings.Contains(line, "mutex") {
					t.Errorf("line %q", line)
				}
			}
			// The records a Semaphore or latch call leaves beside its key
			// (redisson_sc_latch:{name}:..., one holding a client id and a
			// number) are not locks, listed without a key prefix too.
			for _, aux := range []string{"redisson_sc_latch:{" + prefix, "redisson_countdownlatch_latch:{" + prefix} {
				r := cli(ctx, d, "", "list", "--json", "--prefix", aux)
				if r.code != exitOK {
					t.Fatalf("list: exit %d\n%s", r.code, r.errOut)
				}
				var l listing
				if err := json.Unmarshal([]byte(r.out), &l); err != nil {
					t.Fatalf("%v\n%s", err, r.out)
				}
				if len(l.Locks) != 0 {
					t.Errorf("list --prefix %s: %d locks, want none:\n%s", aux, len(l.Locks), r.out)
				}
			}
			if r := cli(ctx, d, "", "list", "--cursor", "x"); r.code != exitUsage {
				t.Errorf("bad cursor: exit %d", r.code)
			}
		})
	}
}

func TestForceUnlock(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 90*time.Second)
			prefix := redistest.Prefix(t)
			// Waiters' fallback timers are long (30 s lease, 1 min waiter
			// timeout): only the release message can wake them in time.
			holder := newClient(t, d.rc, prefix)
			waiter := newClient(t, d.rc, prefix, scriptlock.WithWaiterTimeout(time.Minute))
			const wakeBound = 5 * time.Second

			check := func(name string, lock func(context.Context) (context.Context, error),
				wait func(context.Context) (context.Context, error)) {
				t.Helper()
				hctx, err := lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got := make(chan time.Time, 1)
				wctx, cancel := context.WithCancel(ctx)
				defer cancel()
				go func() {
					if _, err := wait(wctx); err == nil {
						got <- time.Now()
					}
				}()
				waitFor(t, ctx, func() bool {
					r := inspectJSON(t, ctx, d, prefix, name)
					return r.QueueLength+r.WriterCount > 0 || r.Kind == kindMutex // a Mutex waiter leaves no trace
				})
				time.Sleep(100 * time.Millisecond) // the Mutex waiter subscribed

				// Declined: nothing changes.
				r := cli(ctx, d, "n\n", "force-unlock", "--key-prefix", prefix, name)
				if r.code != exitNotConfirmed {
					t.Fatalf("%s declined: exit %d\n%s", name, r.code, r.errOut)
				}
				if !strings.Contains(r.errOut, "[y/N]") {
					t.Errorf("no prompt:\n%s", r.errOut)
				}
				if rep := inspectJSON(t, ctx, d, prefix, name); rep.HolderCount != 1 {
					t.Fatalf("%s after a declined force-unlock: %+v", name, rep)
				}
				// Confirmed: the lock goes, the waiter gets it promptly.
				start := time.Now()
				r = cli(ctx, d, "y\n", "force-unlock", "--key-prefix", prefix, name)
				if r.code != exitOK {
					t.Fatalf("%s: exit %d\n%s%s", name, r.code, r.out, r.errOut)
				}
				select {
				case at := <-got:
					if at.Sub(start) > wakeBound {
						t.Errorf("%s: waiter took the lock %s after force-unlock, want < %s", name, at.Sub(start), wakeBound)
					}
				case <-time.After(wakeBound):
					t.Errorf("%s: waiter not woken within %s", name, wakeBound)
				}
				_ = hctx
			}

			check("m", mustMutex(t, holder, "m").Lock, mustMutex(t, waiter, "m").Lock)
			check("fair", mustFair(t, holder, "fair").Lock, mustFair(t, waiter, "fair").Lock)
			redissonQueue := scriptlock.WithRedissonFairQueue(time.Minute)
			check("rfair", mustFair(t, holder, "rfair", redissonQueue).Lock, mustFair(t, waiter, "rfair", redissonQueue).Lock)
			check("rw", mustRW(t, holder, "rw").Lock, mustRW(t, waiter, "rw").Lock) // a pending writer

			// A Redisson lock: the Redisson waiter's message arrives.
			key := prefix + "java"
			redissonAcquire(t, ctx, d.rc, key, "5a1d2c3e-0000-4000-8000-00000000beef:9")
			msgs := make(chan string, 1)
			sctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				ch := "redisson_lock__channel:{" + key + "}"
				cmd := d.rc.B().Subscribe().Channel(ch).Build()
				if pub, _ := publishCommand(ctx, &env{rc: d.rc, sharded: "auto", timeout: time.Second}); pub == "spublish" {
					cmd = d.rc.B().Ssubscribe().Channel(ch).Build()
				}
				_ = d.rc.Receive(sctx, cmd, func(m rueidis.PubSubMessage) {
					select {
					case msgs <- m.Message:
					default:
					}
				})
			}()
			time.Sleep(300 * time.Millisecond) // subscribed
			r := cli(ctx, d, "", "force-unlock", "--yes", "--json", "--key-prefix", prefix, "java")
			if r.code != exitOK {
				t.Fatalf("Redisson lock: exit %d\n%s", r.code, r.errOut)
			}
			select {
			case m := <-msgs:
				if m != "0" {
					t.Errorf("release message %q, want Redisson's unlock message 0", m)
				}
			case <-time.After(wakeBound):
				t.Errorf("no release message within %s", wakeBound)
			}
			stop()
			wg.Wait()
			if n := d.rc.Do(ctx, d.rc.B().Exists().Key(key).Build()); mustInt(t, n) != 0 {
				t.Error("Redisson lock still there")
			}

			// Not held: 3; a semaphore: 5, untouched.
			if r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "java"); r.code != exitNotFound {
				t.Errorf("free lock: exit %d", r.code)
			}
			s := mustSem(t, holder, "sem")
			if _, err := s.TrySetPermits(ctx, 4); err != nil {
				t.Fatal(err)
			}
			if r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "sem"); r.code != exitNotALock {
				t.Errorf("semaphore: exit %d, want %d", r.code, exitNotALock)
			}
			if n, err := s.AvailablePermits(ctx); err != nil || n != 4 {
				t.Errorf("semaphore after refused force-unlock: %d %v", n, err)
			}
		})
	}
}

func mustInt(t *testing.T, r rueidis.RedisResult) int64 {
	t.Helper()
	n, err := r.AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// syncBuffer is a bytes.Buffer safe to read while watch writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watchFirst runs watch with args until it has printed its first line (its
// first reading) and stops it then, or returns when it exits first. A fixed
// pause before stopping it printed nothing on a loaded machine, where the
// dial and the first reading took longer; 10 s is waitFor's bound.
func watchFirst(t *testing.T, ctx context.Context, d deployment, args ...string) result {
	t.Helper()
	var out, errOut syncBuffer
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan int, 1)
	go func() {
		done <- run(wctx, append([]string{"--url", d.url, "watch"}, args...), strings.NewReader(""), &out, &errOut)
	}()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for !strings.Contains(out.String(), "\n") {
		select {
		case code := <-done:
			return result{code, out.String(), errOut.String()}
		case <-timeout.C:
			stop()
			<-done
			t.Fatalf("watch %q printed no line within 10s\n%s%s", args, out.String(), errOut.String())
		case <-tick.C:
		}
	}
	stop()
	return result{<-done, out.String(), errOut.String()}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			prefix := redistest.Prefix(t)
			c := newClient(t, d.rc, prefix)
			m := mustMutex(t, c, "order:9")
			l, err := m.Lock(scriptlock.WithOwner(ctx, "first"))
			if err != nil {
				t.Fatal(err)
			}

			// An hour between refreshes: only the release message can show
			// the release within the bound.
			var out, errOut syncBuffer
			wctx, stop := context.WithCancel(ctx)
			done := make(chan int, 1)
			go func() {
				done <- run(wctx, []string{"--url", d.url, "watch", "--json", "--interval", "1h", "--key-prefix", prefix, "order:9"},
					strings.NewReader(""), &out, &errOut)
			}()
			event := func(i int) watchEvent {
				t.Helper()
				var ev watchEvent
				waitFor(t, ctx, func() bool { return len(out.lines()) > i && out.lines()[i] != "" })
				if err := json.Unmarshal([]byte(out.lines()[i]), &ev); err != nil {
					t.Fatalf("%v: %q", err, out.lines()[i])
				}
				return ev
			}
			ev := event(0)
			if ev.Cause != "start" || len(ev.Report.Holders) != 1 || ev.Report.Holders[0].Owner != "first" {
				t.Fatalf("first event %+v", ev)
			}
			time.Sleep(300 * time.Millisecond) // subscribed
			start := time.Now()
			if err := m.Unlock(l); err != nil {
				t.Fatal(err)
			}
			ev = event(1)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("release shown after %s, want < 5s", took)
			}
			if !strings.HasPrefix(ev.Cause, "message ") || ev.Report.Found() {
				t.Errorf("release event %+v", ev)
			}
			stop()
			select {
			case code := <-done:
				if code != exitOK {
					t.Errorf("watch ended with %d: %s", code, errOut.lines())
				}
			case <-time.After(5 * time.Second):
				t.Fatal("watch did not stop on interrupt")
			}

			// With a short interval, an acquisition (which sends no message)
			// shows up too, in table form.
			out = syncBuffer{}
			wctx, stop = context.WithCancel(ctx)
			go func() {
				done <- run(wctx, []string{"--url", d.url, "watch", "--interval", "100ms", "--key-prefix", prefix, "order:9"},
					strings.NewReader(""), &out, &errOut)
			}()
			waitFor(t, ctx, func() bool { return strings.Contains(out.lines()[0], "free") })
			if _, err := m.Lock(scriptlock.WithOwner(ctx, "second")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, func() bool {
				ls := out.lines()
				return len(ls) == 2 && strings.Contains(ls[1], "refresh") && strings.Contains(ls[1], c.ID()+":second×1")
			})
			stop()
			if code := <-done; code != exitOK {
				t.Errorf("watch ended with %d", code)
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Fatal("test ran out of time")
			}
		})
	}
}

// A FairMutex hand-off publishes only on the next waiter's client's wake
// channel; with plain pub/sub watch hears it through a pattern subscription.
func TestWatchFairHandOff(t *testing.T) {
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix, scriptlock.WithWaiterTimeout(time.Minute))
	f := mustFair(t, c, "fair")
	l, err := f.Lock(scriptlock.WithOwner(ctx, "first"))
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancelWaiter := context.WithCancel(ctx)
	waiterDone := make(chan struct{})
	go func() {
		defer close(waiterDone)
		if l, err := f.Lock(scriptlock.WithOwner(wctx, "second")); err == nil {
			<-wctx.Done()
			_ = f.Unlock(l)
		}
	}()
	waitFor(t, ctx, func() bool { return inspectJSON(t, ctx, d, prefix, "fair").QueueLength == 1 })

	var out, errOut syncBuffer
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- run(runCtx, []string{"--url", d.url, "watch", "--json", "--interval", "1h", "--key-prefix", prefix, "fair"},
			strings.NewReader(""), &out, &errOut)
	}()
	waitFor(t, ctx, func() bool { return out.lines()[0] != "" })
	time.Sleep(300 * time.Millisecond) // subscribed
	start := time.Now()
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
	// The release message shows the hand-off; the read that follows it
	// shows the waiter holding the lock.
	var ev watchEvent
	waitFor(t, ctx, func() bool {
		for _, line := range out.lines()[1:] {
			if err := json.Unmarshal([]byte(line), &ev); err == nil && len(ev.Report.Holders) == 1 &&
				ev.Report.Holders[0].Owner == "second" && ev.Report.QueueLength == 0 {
				return true
			}
		}
		return false
	})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("hand-off shown after %s, want < 5s", took)
	}
	if ev.Cause == "refresh" || ev.Cause == "start" {
		t.Errorf("new holder shown by %q, want the release message or the read after it", ev.Cause)
	}
	var first watchEvent
	if err := json.Unmarshal([]byte(out.lines()[1]), &first); err != nil || !strings.HasPrefix(first.Cause, "message scriptlock_fair_wake:") {
		t.Errorf("first change %+v (%v), want one caused by the release message", first, err)
	}
	stop()
	<-done
	cancelWaiter()
	<-waiterDone
}

// A FairMutex whose waiters queue by both protocols (a FairMutex's own queue
// and Redisson's RFairLock queue, here a FairMutex in Redisson's mode): a
// force-unlock tells the head of each queue, each by its own protocol, as a
// FairMutex's release and Redisson's forceUnlock would.
func TestForceUnlockFairMixedQueues(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			prefix := redistest.Prefix(t)
			holder := newClient(t, d.rc, prefix)
			// Long waiter timeouts: only a message wakes a waiter in time.
			waiter := newClient(t, d.rc, prefix, scriptlock.WithWaiterTimeout(time.Minute))
			rwaiter := newClient(t, d.rc, prefix, scriptlock.WithWaiterTimeout(time.Minute))
			const name = "mixed"
			key := prefix + name
			if _, err := mustFair(t, holder, name).Lock(ctx); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() { _, _ = mustFair(t, waiter, name).Lock(wctx) }()
			go func() {
				_, _ = mustFair(t, rwaiter, name, scriptlock.WithRedissonFairQueue(time.Minute)).Lock(wctx)
			}()
			var heads map[string]string // protocol -> head waiter's field
			waitFor(t, ctx, func() bool {
				r := inspectJSON(t, ctx, d, prefix, name)
				heads = map[string]string{}
				for _, w := range r.Queue {
					if _, ok := heads[w.Protocol]; !ok {
						heads[w.Protocol] = w.Field
					}
				}
				return len(heads) == 2
			})

			k := layout.For(key, d.rc.Mode() == rueidis.ClientModeCluster)
			ours := k.FairWake + ":" + strings.SplitN(heads["scriptlock"], ":", 2)[0]
			theirs := k.LockChannel + ":" + heads["redisson"]
			msgs := subscribeAll(t, ctx, d, ours, theirs)
			r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, name)
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s%s", r.code, r.out, r.errOut)
			}
			if !strings.Contains(r.out, k.FairWake) || !strings.Contains(r.out, k.LockChannel) {
				t.Errorf("output names not both queues' channels:\n%s", r.out)
			}
			want := map[string]string{ours: "0:" + heads["scriptlock"], theirs: "0"}
			deadline := time.After(5 * time.Second)
			for len(want) > 0 {
				select {
				case m := <-msgs:
					if w, ok := want[m.Channel]; ok && m.Message == w {
						delete(want, m.Channel)
					}
				case <-deadline:
					t.Fatalf("force-unlock of a lock with both queues sent no wake-up to %v\n%s", want, r.out)
				}
			}
		})
	}
}

// subscribeAll listens on channels (sharded on a cluster, as the locks
// publish there) and passes on every message.
func subscribeAll(t *testing.T, ctx context.Context, d deployment, channels ...string) <-chan rueidis.PubSubMessage {
	t.Helper()
	msgs := make(chan rueidis.PubSubMessage, 16)
	sctx, stop := context.WithCancel(ctx)
	subscribed := make(chan struct{})
	var n int
	hook := rueidis.WithOnSubscriptionHook(sctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == "subscribe" || s.Kind == "ssubscribe" {
			if n++; n == len(channels) {
				close(subscribed)
			}
		}
	})
	cmd := d.rc.B().Subscribe().Channel(channels...).Build()
	if pub, _ := publishCommand(ctx, &env{rc: d.rc, sharded: "auto", timeout: time.Second}); pub == "spublish" {
		cmd = d.rc.B().Ssubscribe().Channel(channels...).Build()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.rc.Receive(hook, cmd, func(m rueidis.PubSubMessage) {
			select {
			case msgs <- m:
			default:
			}
		})
	}()
	t.Cleanup(func() { stop(); <-done })
	select {
	case <-subscribed:
	case <-time.After(5 * time.Second):
		t.Fatalf("subscribe to %v timed out", channels)
	}
	return msgs
}

// list reads at most --limit holders of each lock: with more readers than
// that, HOLDERS still counts them all and HOLDS says it is a lower bound
// ("100+"), not a total.
func TestListHoldsBeyondLimit(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	rw := mustRW(t, newClient(t, d.rc, prefix), "catalog")
	const readers = 150
	for i := range readers {
		if _, err := rw.RLock(scriptlock.WithOwner(ctx, "reader-"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	r := cli(ctx, d, "", "list", "--key-prefix", prefix)
	if r.code != exitOK {
		t.Fatalf("list: exit %d %s", r.code, r.errOut)
	}
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 2 {
		t.Fatalf("list printed %q", r.out)
	}
	if f := strings.Fields(lines[1]); f[2] != "150" || f[3] != "100+" {
		t.Errorf("HOLDERS %s HOLDS %s, want 150 and 100+ (only 100 holders read)", f[2], f[3])
	}
}
