package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A fencing-token counter that holds no integer (another program's value
// under its name) fails the acquisition, which then changes nothing: the
// acquiring scripts set the lock before they drew the token, so the lock
// stayed held for its lease with no hold on the Client to give it back.
func TestBadFenceCounterChangesNothing(t *testing.T) {
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
