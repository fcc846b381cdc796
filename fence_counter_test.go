package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A fencing-token counter that holds no integer (another program's value
// under its name) fails the acquisition, which then changes nothing: the
// acquiring scripts set the lock before they drew the token, so the lock
// stayed held for its lease with no hold on the Client to give it back.
func TestBadFenceCounterChangesNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	for _, lc := range lockCases {
		if lc.name == "LeanMutex" || lc.name == "RWMutexRead" {
			continue // they draw no token
		}
		t.Run(lc.name, func(t *testing.T) {
			l := lc.make(t, c, "bad-fence-"+lc.name)
			key := l.(interface{ Key() string }).Key()
			counter := redissonName("redisson_lock_token", key)
			node.Do(t, "SET", counter, "not a number")
			lctx, err := l.TryLock(ctx, 0)
			if err == nil {
				_ = l.Unlock(lctx)
				t.Fatalf("TryLock with a counter that holds no integer succeeded")
			}
			if n, _ := node.Do(t, "EXISTS", key).AsInt64(); n != 0 {
				t.Fatalf("TryLock failed (%v) and left the lock held on the server", err)
			}
			if v, _ := node.Do(t, "GET", counter).ToString(); v != "not a number" {
				t.Fatalf("counter %q after the failed TryLock", v)
			}
		})
	}
	t.Run("FairMutex (Redisson queue)", func(t *testing.T) {
		f := mustFair(t, c, "bad-fence-redisson-fair", WithRedissonFairQueue(0))
		counter := redissonName("redisson_lock_token", f.Key())
		node.Do(t, "SET", counter, "not a number")
		if _, err := f.TryLock(ctx, 0); err == nil {
			t.Fatalf("TryLock with a counter that holds no integer succeeded")
		}
		if n, _ := node.Do(t, "EXISTS", f.Key()).AsInt64(); n != 0 {
			t.Fatalf("TryLock failed and left the lock held on the server")
		}
	})
}

// A counter at 2^53 or above gives no token: the scripts draw tokens as Lua
// numbers (doubles), which above 2^53 cannot tell consecutive integers
// apart, so two grants got the same token (and 2^63 - 1 came back as a
// negative reply: a Mutex read it as a refusal and left its grant held by
// nobody for the lease, an RWMutex handed out a negative token). Nor does
// a negative counter, which stayed negative once lifted by the server's
// time, with the same outcomes. The acquisition fails with ErrFenceCounter
// and changes nothing, as it does on a counter that holds no integer.
func TestFenceCounterOutOfRange(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	type kind struct {
		name string
		make func(name string) Locker
	}
	var kinds []kind
	for _, lc := range lockCases {
		if !lc.fence {
			continue
		}
		kinds = append(kinds, kind{lc.name, func(n string) Locker { return lc.make(t, c, n) }})
	}
	kinds = append(kinds, kind{"FairMutexRedissonQueue", func(n string) Locker {
		return mustFair(t, c, n, WithRedissonFairQueue(0))
	}})
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			l := k.make("fence-range-" + k.name)
			key := l.(interface{ Key() string }).Key()
			counter := redissonName("redisson_lock_token", key)
			// The last exact token is still handed out.
			node.Do(t, "SET", counter, "9007199254740990")
			lctx, err := l.TryLock(ctx, 0)
			if err != nil {
				t.Fatalf("TryLock below 2^53: %v", err)
			}
			if tok, _ := Fence(lctx); tok != 9007199254740991 {
				t.Errorf("token %d below 2^53; want 9007199254740991", tok)
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{"9007199254740991", "9223372036854775806", "9223372036854775807", "1.5", "not a number", "-10000000000000000", "-9223372036854775808"} {
				node.Do(t, "SET", counter, v)
				lctx, err := l.TryLock(ctx, 0)
				if err == nil {
					tok, _ := Fence(lctx)
					_ = l.Unlock(lctx)
					t.Errorf("counter %s: TryLock succeeded with token %d; want ErrFenceCounter", v, tok)
				} else if !errors.Is(err, ErrFenceCounter) {
					t.Errorf("counter %s: TryLock: %v; want ErrFenceCounter", v, err)
				}
				if n, _ := node.Do(t, "EXISTS", key).AsInt64(); n != 0 {
					t.Errorf("counter %s: the failed TryLock left the lock held on the server", v)
					node.Do(t, "DEL", key)
				}
				if got, _ := node.Do(t, "GET", counter).ToString(); got != v {
					t.Errorf("counter %s: %s after the failed TryLock", v, got)
				}
			}
		})
	}
	t.Run("MultiLock", func(t *testing.T) {
		other := mustMutex(t, c, "fence-range-multi-a")
		m := mustMutex(t, c, "fence-range-multi-b")
		counter := redissonName("redisson_lock_token", m.Key())
		node.Do(t, "SET", counter, "9007199254740991")
		ml := mustMulti(t, []Locker{other, m})
		if lctx, err := ml.TryLock(ctx, 0); err == nil {
			_ = ml.Unlock(lctx)
			t.Fatal("MultiLock.TryLock with a member's counter at 2^53 succeeded")
		} else if !errors.Is(err, ErrFenceCounter) {
			t.Errorf("MultiLock.TryLock: %v; want ErrFenceCounter", err)
		}
		for _, k := range []string{other.Key(), m.Key()} {
			if n, _ := node.Do(t, "EXISTS", k).AsInt64(); n != 0 {
				t.Errorf("the failed MultiLock left %s held on the server", k)
			}
		}
	})
}

// The same refusal under the failover guard, whose WAIT follows the script
// on its connection: the typed error, nothing left in Redis.
func TestFenceCounterOutOfRangeGuarded(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.ReplicatedN(t, 1)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, time.Second))
	ctx := testCtx(t, 20*time.Second)
	for _, lc := range lockCases {
		if !lc.fence {
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			l := lc.make(t, c, "fence-range-guarded-"+lc.name)
			key := l.(interface{ Key() string }).Key()
			counter := redissonName("redisson_lock_token", key)
			primary.Do(t, "SET", counter, "9007199254740991")
			lctx, err := l.TryLock(ctx, 0)
			if err == nil {
				_ = l.Unlock(lctx)
				t.Fatal("TryLock with the counter at 2^53 - 1 succeeded")
			}
			if !errors.Is(err, ErrFenceCounter) {
				t.Errorf("TryLock: %v; want ErrFenceCounter", err)
			}
			if n, _ := primary.Do(t, "EXISTS", key).AsInt64(); n != 0 {
				t.Error("the failed TryLock left the lock held on the server")
			}
			if got, _ := primary.Do(t, "GET", counter).ToString(); got != "9007199254740991" {
				t.Errorf("counter %s after the failed TryLock", got)
			}
		})
	}
}

// Only the counter's value is ErrFenceCounter: a user whose ACL refuses the
// INCR that draws the token gets Redis's refusal, which names the ACL, and
// the acquisition changes nothing.
func TestFenceCounterACLRefusalIsRedis(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	if err := node.Do(t, "ACL", "SETUSER", "noincr", "on", "nopass", "~*", "&*", "+@all", "-incr").Error(); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, node.Client(t, func(o *rueidis.ClientOption) { o.Username = "noincr" }))
	ctx := testCtx(t, 20*time.Second)
	for _, lc := range lockCases {
		if !lc.fence {
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			l := lc.make(t, c, "fence-acl-"+lc.name)
			lctx, err := l.TryLock(ctx, 0)
			if err == nil {
				_ = l.Unlock(lctx)
				t.Fatal("TryLock without INCR succeeded")
			}
			if errors.Is(err, ErrFenceCounter) || !scriptACLRefusal(err) {
				t.Errorf("TryLock: %v; want Redis's ACL refusal, not ErrFenceCounter", err)
			}
			if n, _ := node.Do(t, "EXISTS", l.(interface{ Key() string }).Key()).AsInt64(); n != 0 {
				t.Error("the failed TryLock left the lock held on the server")
			}
		})
	}
}
