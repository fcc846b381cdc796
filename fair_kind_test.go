package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A FairMutex on a name a read-write lock holds (a hash with a mode field) is
// ErrWrongKind at once, in both queue protocols, as a Mutex is, and leaves
// the lock and the queue keys as they were: no waiting for the holder's
// lease, no queued entry, no stale Redisson waiter evicted.
func TestFairMutexOnReadWriteLock(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	dump := func(key string) string {
		t.Helper()
		r := node.Do(t, "DUMP", key)
		if rueidis.IsRedisNil(r.Error()) {
			return ""
		}
		v, err := r.ToString()
		if err != nil {
			t.Fatalf("DUMP %s: %v", key, err)
		}
		return v
	}

	for _, redisson := range []bool{false, true} {
		for _, read := range []bool{false, true} {
			name := "fair-kind-rw"
			rw := mustRW(t, c, name)
			lock, unlock := rw.Lock, rw.Unlock
			if read {
				lock, unlock = rw.RLock, rw.RUnlock
			}
			lctx, err := lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			before := dump(rw.Key())
			var opts []LockOption
			if redisson {
				opts = append(opts, WithRedissonFairQueue(0))
			}
			f := mustFair(t, c, name, opts...)
			if redisson {
				// A Java waiter whose deadline has passed: Redisson's
				// acquisition evicts it, a refused FairMutex must not.
				node.Do(t, "RPUSH", f.queue, "stale:1")
				node.Do(t, "ZADD", f.timeouts, "1", "stale:1")
			}
			queued := dump(f.queue) + dump(f.timeouts)
			for _, call := range []struct {
				name string
				f    func(context.Context) (context.Context, error)
			}{
				{"TryLock(0)", func(ctx context.Context) (context.Context, error) { return f.TryLock(ctx, 0) }},
				{"TryLock(2s)", func(ctx context.Context) (context.Context, error) { return f.TryLock(ctx, 2*time.Second) }},
				{"Lock", f.Lock},
			} {
				cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
				start := time.Now()
				_, err := call.f(cctx)
				cancel()
				if !errors.Is(err, ErrWrongKind) {
					t.Errorf("FairMutex (redisson %v).%s on a name an RWMutex holds (read %v): %v after %s, want ErrWrongKind",
						redisson, call.name, read, err, time.Since(start).Round(time.Millisecond))
				}
				if after := dump(rw.Key()); after != before {
					t.Errorf("FairMutex (redisson %v).%s on a name an RWMutex holds (read %v) changed the lock", redisson, call.name, read)
					before = after
				}
				if after := dump(f.queue) + dump(f.timeouts); after != queued {
					t.Errorf("FairMutex (redisson %v).%s on a name an RWMutex holds (read %v) changed the queue", redisson, call.name, read)
					queued = after
				}
			}
			node.Do(t, "DEL", f.queue, f.timeouts)
			if lctx.Err() != nil {
				t.Fatalf("the RWMutex hold ended: %v", context.Cause(lctx))
			}
			if err := unlock(lctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}
