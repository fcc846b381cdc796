package scriptlock

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// PermitSemaphore.SetPermits leaves Redis as Redisson's setPermits does, step
// by step on twin semaphores (one changed by Go, one by Redisson's own
// script): the same count, the same held permits, the same TTL, and the same
// message on redisson_sc (n when the total changed, none when it did not).
func TestRedissonPermitSemaphoreSetPermitsParity(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix)
	java := newRedissonJava(node.Client(t), 17)
	for _, name := range []string{"pool", "pool:{9}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			p := mustPermits(t, c, name)
			goKey, javaKey := p.Key(), mustPermits(t, c, name+":java").Key()
			goCh, javaCh := redissonName("redisson_sc", goKey), redissonName("redisson_sc", javaKey)
			goMsgs, javaMsgs := listen(t, node, goCh), listen(t, node, javaCh)
			state := func(key string) string {
				count, err := node.Do(t, "GET", key).ToString()
				if err != nil {
					count = "nil"
				}
				held, _ := node.Do(t, "ZCARD", redissonSuffix(key, "timeout")).AsInt64()
				ttl, _ := node.Do(t, "PTTL", key).AsInt64()
				if ttl > 0 {
					ttl = 1 // a TTL, whatever is left of it
				}
				return "count " + count + ", held " + strconv.FormatInt(held, 10) + ", ttl " + strconv.FormatInt(ttl, 10)
			}
			both := func(what string, n int64) {
				t.Helper()
				if err := java.permitSetPermits(ctx, javaKey, n); err != nil {
					t.Fatalf("Redisson setPermits(%d): %v", n, err)
				}
				if err := p.SetPermits(ctx, n); err != nil {
					t.Fatalf("SetPermits(%d): %v", n, err)
				}
				if g, j := state(goKey), state(javaKey); g != j {
					t.Fatalf("%s: after SetPermits(%d) %s; after Redisson's setPermits %s", what, n, g, j)
				}
			}
			heard := func(n int64) {
				t.Helper()
				want := strings.TrimPrefix(javaMsgs.next(t, 3*time.Second), javaCh+" ")
				if want != strconv.FormatInt(n, 10) {
					t.Fatalf("Redisson's setPermits(%d) published %q", n, want)
				}
				if got := goMsgs.next(t, 3*time.Second); got != goCh+" "+want {
					t.Fatalf("SetPermits(%d) published %q; Redisson's setPermits publishes %q", n, got, want)
				}
			}
			silent := func() {
				t.Helper()
				javaMsgs.quiet(t, 200*time.Millisecond)
				goMsgs.quiet(t, 0)
			}

			both("no counter yet: set", 3)
			heard(3)
			both("same total", 3)
			silent()

			// Two permits held under a lease and one whose lease ended but
			// that nothing has returned to the pool yet: all three count.
			now := time.Now().UnixMilli()
			for _, key := range []string{goKey, javaKey} {
				timeouts := redissonSuffix(key, "timeout")
				node.Do(t, "ZADD", timeouts, strconv.FormatInt(now+60000, 10), "live-1", strconv.FormatInt(now+60000, 10), "live-2", "1", "ended")
				node.Do(t, "DECRBY", key, "3")
				node.Do(t, "PEXPIRE", key, "60000")
			}
			both("three held, free 0: same total", 3)
			silent()
			both("more", 5)
			heard(5)
			both("fewer than held", 1)
			heard(1)
			both("none", 0)
			heard(0)
			if v, _ := node.Do(t, "GET", goKey).AsInt64(); v != -3 {
				t.Fatalf("free count %d after SetPermits(0) with three held, want -3", v)
			}

			// A negative count is refused before Redis: nothing written or sent.
			before := state(goKey)
			if err := p.SetPermits(ctx, -1); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("SetPermits(-1): %v, want ErrInvalidArgument", err)
			}
			if after := state(goKey); after != before {
				t.Fatalf("SetPermits(-1) changed %s to %s", before, after)
			}
			goMsgs.quiet(t, 200*time.Millisecond)
		})
	}
}

// A Go waiter wakes on another client's SetPermits, and a name another kind
// of lock holds is ErrWrongKind and left alone.
func TestPermitSemaphoreSetPermits(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix) // another Go service
	ctx := testCtx(t, 20*time.Second)
	p := mustPermits(t, c, "setp")
	if err := p.SetPermits(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var id string
	wait := within(t, 10*time.Second, "Go Acquire", func() error {
		var err error
		id, err = p.Acquire(ctx, 30*time.Second)
		return err
	})
	time.Sleep(200 * time.Millisecond)
	if err := mustPermits(t, c2, "setp").SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	set := time.Now()
	wait()
	if d := time.Since(set); d > notifyFallback/2 {
		t.Fatalf("Go waiter took the permit %s after SetPermits: fallback, not the message", d)
	}
	if st, err := p.State(ctx); err != nil || st != (PermitState{Available: 0, Held: 1}) {
		t.Fatalf("State = %+v, %v; want none free, one held", st, err)
	}
	if err := p.Release(ctx, id); err != nil {
		t.Fatal(err)
	}

	lean := mustPermits(t, c, "setp-other")
	node.Do(t, "SET", lean.Key(), "someone:else")
	if err := lean.SetPermits(ctx, 2); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("SetPermits on a LeanMutex's key: %v, want ErrWrongKind", err)
	}
	if v, _ := node.Do(t, "GET", lean.Key()).ToString(); v != "someone:else" {
		t.Fatalf("the other lock's key now holds %q", v)
	}
}
