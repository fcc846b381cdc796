package scriptlock

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Every Semaphore, PermitSemaphore and CountDownLatch call on a name another
// kind of lock holds (a LeanMutex's string, a Mutex's hash) is ErrWrongKind
// and changes nothing in Redis, not even a record of the call. They failed
// with Redis's WRONGTYPE, "value is not an integer", a Lua error or a reply
// of the wrong shape, and a Release, AddPermits or CountDown left its record
// behind.
func TestCountersOnOtherKind(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	const id = "0123456789abcdef0123456789abcdef"
	type call struct {
		name string
		do   func(ctx context.Context, name string) error
	}
	calls := []call{
		{"Semaphore.TrySetPermits", func(ctx context.Context, n string) error {
			_, err := mustSem(t, c, n).TrySetPermits(ctx, 1)
			return err
		}},
		{"Semaphore.Acquire", func(ctx context.Context, n string) error { return mustSem(t, c, n).Acquire(ctx, 1) }},
		{"Semaphore.TryAcquire", func(ctx context.Context, n string) error { return mustSem(t, c, n).TryAcquire(ctx, 1, 0) }},
		{"Semaphore.TryAcquire(wait)", func(ctx context.Context, n string) error {
			return mustSem(t, c, n).TryAcquire(ctx, 1, 100*time.Millisecond)
		}},
		{"Semaphore.Release", func(ctx context.Context, n string) error { return mustSem(t, c, n).Release(ctx, 1) }},
		{"Semaphore.AddPermits", func(ctx context.Context, n string) error {
			_, err := mustSem(t, c, n).AddPermits(ctx, 1)
			return err
		}},
		{"Semaphore.AddPermits(-1)", func(ctx context.Context, n string) error {
			_, err := mustSem(t, c, n).AddPermits(ctx, -1)
			return err
		}},
		{"Semaphore.DrainPermits", func(ctx context.Context, n string) error {
			_, err := mustSem(t, c, n).DrainPermits(ctx)
			return err
		}},
		{"Semaphore.Delete", func(ctx context.Context, n string) error {
			_, err := mustSem(t, c, n).Delete(ctx)
			return err
		}},
		{"PermitSemaphore.Delete", func(ctx context.Context, n string) error {
			_, err := mustPermits(t, c, n).Delete(ctx)
			return err
		}},
		{"CountDownLatch.Delete", func(ctx context.Context, n string) error {
			_, err := mustLatch(t, c, n).Delete(ctx)
			return err
		}},
		{"Semaphore.AvailablePermits", func(ctx context.Context, n string) error {
			_, err := mustSem(t, c, n).AvailablePermits(ctx)
			return err
		}},
		{"PermitSemaphore.TrySetPermits", func(ctx context.Context, n string) error {
			_, err := mustPermits(t, c, n).TrySetPermits(ctx, 1)
			return err
		}},
		{"PermitSemaphore.Acquire", func(ctx context.Context, n string) error {
			_, err := mustPermits(t, c, n).Acquire(ctx, time.Minute)
			return err
		}},
		{"PermitSemaphore.TryAcquire", func(ctx context.Context, n string) error {
			_, err := mustPermits(t, c, n).TryAcquire(ctx, time.Minute, 100*time.Millisecond)
			return err
		}},
		{"PermitSemaphore.Release", func(ctx context.Context, n string) error { return mustPermits(t, c, n).Release(ctx, id) }},
		{"PermitSemaphore.Extend", func(ctx context.Context, n string) error {
			return mustPermits(t, c, n).Extend(ctx, id, time.Minute)
		}},
		{"PermitSemaphore.AddPermits", func(ctx context.Context, n string) error {
			_, err := mustPermits(t, c, n).AddPermits(ctx, 1)
			return err
		}},
		{"PermitSemaphore.SetPermits", func(ctx context.Context, n string) error {
			return mustPermits(t, c, n).SetPermits(ctx, 2)
		}},
		{"PermitSemaphore.AvailablePermits", func(ctx context.Context, n string) error {
			_, err := mustPermits(t, c, n).AvailablePermits(ctx)
			return err
		}},
		{"PermitSemaphore.State", func(ctx context.Context, n string) error {
			_, err := mustPermits(t, c, n).State(ctx)
			return err
		}},
		{"CountDownLatch.TrySetCount", func(ctx context.Context, n string) error {
			_, err := mustLatch(t, c, n).TrySetCount(ctx, 1)
			return err
		}},
		{"CountDownLatch.CountDown", func(ctx context.Context, n string) error { return mustLatch(t, c, n).CountDown(ctx) }},
		{"CountDownLatch.Count", func(ctx context.Context, n string) error {
			_, err := mustLatch(t, c, n).Count(ctx)
			return err
		}},
		{"CountDownLatch.Await", func(ctx context.Context, n string) error { return mustLatch(t, c, n).Await(ctx) }},
		{"CountDownLatch.AwaitTimeout", func(ctx context.Context, n string) error {
			_, err := mustLatch(t, c, n).AwaitTimeout(ctx, 100*time.Millisecond)
			return err
		}},
	}
	snapshot := func() map[string]string {
		t.Helper()
		keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, k := range keys {
			v, err := node.Do(t, "DUMP", k).ToString()
			if err != nil {
				t.Fatalf("DUMP %s: %v", k, err)
			}
			m[k] = v
		}
		return m
	}
	for _, lc := range []struct {
		name string
		lock Locker
	}{
		{"LeanMutex", mustLean(t, c, "kind-lean")},
		{"Mutex", mustMutex(t, c, "kind-mutex")},
	} {
		lctx, err := lc.lock.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		name := lc.lock.(interface{ Name() string }).Name()
		before := snapshot()
		for _, cl := range calls {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := cl.do(cctx, name)
			cancel()
			if !errors.Is(err, ErrWrongKind) {
				t.Errorf("%s on a held %s: %v; want ErrWrongKind", cl.name, lc.name, err)
			}
			if after := snapshot(); !maps.Equal(before, after) {
				t.Errorf("%s on a held %s changed Redis: %d keys before, %d after", cl.name, lc.name, len(before), len(after))
				before = after
			}
		}
		if err := context.Cause(lctx); err != nil {
			t.Fatalf("the %s's hold ended: %v", lc.name, err)
		}
		if err := lc.lock.Unlock(lctx); err != nil {
			t.Fatalf("%s.Unlock afterwards: %v", lc.name, err)
		}
	}
}
