package scriptlock

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestConnLifetimeRecycled: Clients on rueidis clients with a ConnLifetime of
// a few milliseconds, so that the connection their calls share is replaced
// hundreds of times while they run (rueidis makes again, script or not, a
// call that meets a connection at the end of its life). Taking turns on
// shared names through that, no call fails, no two goroutines hold a name at
// once, and once every Unlock has returned no lock, waiter set or permit is
// left: a call run twice would leave a hold counted, or a permit short.
func TestConnLifetimeRecycled(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	check := node.Client(t)
	type pair struct {
		lock   func(ctx context.Context) (context.Context, error)
		unlock func(ctx context.Context) error
	}
	locker := func(l Locker, err error) (pair, error) {
		if err != nil {
			return pair{}, err
		}
		return pair{l.Lock, l.Unlock}, nil
	}
	kinds := []struct {
		name string
		open func(ctx context.Context, c *Client, name string) (pair, error)
	}{
		{"Mutex", func(_ context.Context, c *Client, name string) (pair, error) { return locker(c.Mutex(name)) }},
		{"FairMutex", func(_ context.Context, c *Client, name string) (pair, error) { return locker(c.FairMutex(name)) }},
		{"LeanMutex", func(_ context.Context, c *Client, name string) (pair, error) { return locker(c.LeanMutex(name)) }},
		{"RWMutex", func(_ context.Context, c *Client, name string) (pair, error) { return locker(c.RWMutex(name)) }},
		{"Semaphore", func(ctx context.Context, c *Client, name string) (pair, error) {
			s, err := c.Semaphore(name)
			if err != nil {
				return pair{}, err
			}
			if _, err := s.TrySetPermits(ctx, 1); err != nil {
				return pair{}, err
			}
			return pair{
				lock:   func(ctx context.Context) (context.Context, error) { return ctx, s.Acquire(ctx, 1) },
				unlock: func(ctx context.Context) error { return s.Release(ctx, 1) },
			}, nil
		}},
	}
	const names, goroutines = 4, 16
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := testCtx(t, time.Minute)
			conns := infoStat(t, check, "total_connections_received")
			prefix := redistest.Prefix(t)
			var cs []*Client
			for range 2 {
				rc := node.Client(t, func(o *rueidis.ClientOption) { o.ConnLifetime = 5 * time.Millisecond })
				cs = append(cs, newTestClient(t, rc, WithKeyPrefix(prefix)))
			}
			var wg sync.WaitGroup
			var turns atomic.Int64
			var stop atomic.Bool
			holders := make([]atomic.Int32, names)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Each name is taken in turn from both Clients.
					name := "recycled:" + strconv.Itoa(g%names)
					p, err := kind.open(ctx, cs[(g/names)%2], name)
					if err != nil {
						t.Error(err)
						return
					}
					for !stop.Load() && ctx.Err() == nil {
						lctx, err := p.lock(ctx)
						if err != nil {
							t.Errorf("%s: lock: %v", name, err)
							return
						}
						if n := holders[g%names].Add(1); n != 1 {
							t.Errorf("%s: %d holders at once", name, n)
						}
						holders[g%names].Add(-1)
						if err := p.unlock(lctx); err != nil {
							t.Errorf("%s: unlock: %v", name, err)
							return
						}
						turns.Add(1)
					}
				}()
			}
			// At least 1.5 s of turns, and on until 50 connections were made
			// (a loaded machine makes fewer turns, and fewer connections, in
			// that time), for 10 s at most: without the lifetime, the
			// Clients make a handful.
			begun := time.Now()
			time.Sleep(1500 * time.Millisecond)
			for infoStat(t, check, "total_connections_received")-conns < 50 && time.Since(begun) < 10*time.Second {
				time.Sleep(100 * time.Millisecond)
			}
			stop.Store(true)
			took := time.Since(begun)
			wg.Wait()
			recycled := infoStat(t, check, "total_connections_received") - conns
			t.Logf("%d turns on %d names, %d connections made in %s", turns.Load(), names, recycled, took.Round(time.Millisecond))
			if recycled < 50 {
				t.Errorf("%d connections made in %s with a lifetime of 5 ms: the lifetime did not take effect", recycled, took.Round(time.Millisecond))
			}
			// The lock keys and their companions (redisson_lock_token:{...}
			// and the like) all hold the prefix.
			keys, err := check.Do(ctx, check.B().Keys().Pattern("*"+prefix+"*").Build()).AsStrSlice()
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) == 0 && kind.name != "LeanMutex" {
				// A fencing counter, or the semaphore's count, stays.
				t.Fatalf("no key holds the prefix %q: the check below would look at nothing", prefix)
			}
			// Every key's remaining life in one round trip: the Semaphore
			// run leaves two records per turn.
			pttls := make(rueidis.Commands, len(keys))
			for i, k := range keys {
				pttls[i] = check.B().Pttl().Key(k).Build()
			}
			for i, r := range check.DoMulti(ctx, pttls...) {
				k := keys[i]
				if strings.HasPrefix(k, "redisson_lock_token:") {
					continue // fencing counters outlive their locks
				}
				if strings.HasPrefix(k, "redisson_unlock_latch:") || strings.HasPrefix(k, "redisson_sc_latch:") {
					// A release's or acquisition's record, kept for its
					// retries until it expires.
					if ttl, err := r.AsInt64(); err == nil && ttl > 0 {
						continue
					}
				}
				if kind.name == "Semaphore" {
					if s, err := check.Do(ctx, check.B().Get().Key(k).Build()).ToString(); err == nil && s == "1" {
						continue // the permit, given back
					}
				}
				t.Errorf("left after every Unlock returned: %s (%s)", k, describeKey(ctx, check, k))
			}
		})
	}
}

func describeKey(ctx context.Context, rc rueidis.Client, k string) string {
	typ, _ := rc.Do(ctx, rc.B().Type().Key(k).Build()).ToString()
	ttl, _ := rc.Do(ctx, rc.B().Pttl().Key(k).Build()).AsInt64()
	var v any
	switch typ {
	case "hash":
		v, _ = rc.Do(ctx, rc.B().Hgetall().Key(k).Build()).AsStrMap()
	case "string":
		v, _ = rc.Do(ctx, rc.B().Get().Key(k).Build()).ToString()
	case "zset":
		v, _ = rc.Do(ctx, rc.B().Zrange().Key(k).Min("0").Max("-1").Build()).AsStrSlice()
	}
	return fmt.Sprintf("%s %v, pttl %d ms", typ, v, ttl)
}
