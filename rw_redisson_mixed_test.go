package scriptlock

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Go readers and writers on two Clients and Redisson readers and writers
// (its own scripts, polling as a Java thread's tryLock does) on one lock: a
// writer never holds beside anyone, every one of them gets its turn, and once
// all have left neither the lock nor a read hold's lease key is left behind.
func TestRWMutexGoAndRedissonExclusion(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 60*time.Second)
	rws := []*RWMutex{
		mustRW(t, newTestClient(t, node.Client(t), prefix), "mixed"),
		mustRW(t, newTestClient(t, node.Client(t), prefix), "mixed"),
	}
	key := rws[0].Key()
	var readers, writers, ops atomic.Int64
	enter := func(who string, write bool) {
		if write {
			if w := writers.Add(1); w != 1 || readers.Load() != 0 {
				t.Errorf("%s writer got in beside %d writers and %d readers", who, w-1, readers.Load())
			}
			return
		}
		readers.Add(1)
		if w := writers.Load(); w != 0 {
			t.Errorf("%s reader got in beside %d writers", who, w)
		}
	}
	leave := func(write bool) {
		if write {
			writers.Add(-1)
		} else {
			readers.Add(-1)
		}
	}
	// Generous for a loaded machine: the point is that every waiter gets in.
	const turn = 20 * time.Second
	end := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rw := rws[g%2]
			for time.Now().Before(end) {
				write := rand.IntN(3) == 0
				octx, cancel := context.WithTimeout(ctx, turn)
				lock, unlock := rw.RLock, rw.RUnlock
				if write {
					lock, unlock = rw.Lock, rw.Unlock
				}
				l, err := lock(octx)
				if err != nil {
					cancel()
					t.Errorf("Go (write %v): %v", write, err)
					return
				}
				enter("Go", write)
				time.Sleep(time.Duration(rand.IntN(2)) * time.Millisecond)
				leave(write)
				err = unlock(l)
				cancel()
				if err != nil {
					t.Errorf("Go unlock (write %v): %v", write, err)
					return
				}
				ops.Add(1)
			}
		}()
	}
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := newRedissonJava(node.Client(t), int64(g+1))
			for time.Now().Before(end) {
				write := rand.IntN(3) == 0
				lock, unlock := j.readLock, j.readUnlock
				if write {
					lock, unlock = j.writeLock, j.writeUnlock
				}
				for start := time.Now(); ; {
					ok, _, err := lock(ctx, key)
					if err != nil {
						t.Errorf("Java (write %v): %v", write, err)
						return
					}
					if ok {
						break
					}
					if time.Since(start) > turn {
						t.Errorf("Java (write %v) not in within %s", write, turn)
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
				enter("Java", write)
				time.Sleep(time.Duration(rand.IntN(2)) * time.Millisecond)
				leave(write)
				// A read unlock answers 0 while others still read, 1
				// once the lock is gone; nil (an error here) when not held.
				if n, err := unlock(ctx, key); err != nil || (write && n != 1) {
					t.Errorf("Java unlock (write %v) = %d, %v", write, n, err)
					return
				}
				ops.Add(1)
			}
		}()
	}
	wg.Wait()
	if ops.Load() == 0 {
		t.Fatal("no one got the lock")
	}
	if n, _ := node.Do(t, "EXISTS", key).AsInt64(); n != 0 {
		t.Errorf("the lock is left behind: EXISTS %d, %v", n, node.Do(t, "HGETALL", key))
	}
	if left, err := node.Do(t, "KEYS", "*"+key+"*rwlock_timeout*").AsStrSlice(); err != nil || len(left) > 0 {
		t.Errorf("read lease keys left behind: %q %v", left, err)
	}
}
