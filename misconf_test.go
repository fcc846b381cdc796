package scriptlock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// diskRefusing is a server whose last RDB save failed (its dir removed under
// it), so that with stop-writes-on-bgsave-error yes it answers MISCONF to
// every write, and so to every script that may write, until a save succeeds
// again or the operator lets writes through. refuse and allow switch that.
type diskRefusing struct{ node *redistest.Node }

func newDiskRefusing(t *testing.T) diskRefusing {
	t.Helper()
	node := redistest.Server(t, redistest.WithArgs("--save", "3600 1", "--enable-protected-configs", "local",
		"--stop-writes-on-bgsave-error", "no"))
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.MkdirAll(gone, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := node.Do(t, "CONFIG", "SET", "dir", gone).Error(); err != nil {
		t.Fatalf("CONFIG SET dir: %v", err)
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	if err := node.Do(t, "BGSAVE").Error(); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool {
		info, _ := node.Do(t, "INFO", "persistence").ToString()
		return strings.Contains(info, "rdb_last_bgsave_status:err")
	}) {
		t.Fatal("the save into a removed directory did not fail")
	}
	// Without save points the server shuts down without a save (which
	// would fail, and it would not exit).
	t.Cleanup(func() { _ = node.Do(t, "CONFIG", "SET", "save", "").Error() })
	return diskRefusing{node}
}

func (d diskRefusing) refuse(t *testing.T) {
	t.Helper()
	if err := d.node.Do(t, "CONFIG", "SET", "stop-writes-on-bgsave-error", "yes").Error(); err != nil {
		t.Fatal(err)
	}
	if err := d.node.Do(t, "SET", redistest.Prefix(t)+"probe", "1").Error(); !isMisconf(err) {
		t.Fatalf("a write after a failed save: %v, want MISCONF", err)
	}
}

func (d diskRefusing) allow(t *testing.T) {
	t.Helper()
	if err := d.node.Do(t, "CONFIG", "SET", "stop-writes-on-bgsave-error", "no").Error(); err != nil {
		t.Fatal(err)
	}
}

func isMisconf(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "MISCONF ")
}

// TestMisconfRetried: a server that cannot persist (MISCONF after a failed
// save) refuses every script that may write before it runs, and accepts
// them again once a save succeeds or the operator lets writes through, as
// LOADING or OOM pass. A Lock waits it out and an Unlock calls again within
// the release timeout, instead of failing at once and leaving the lock to
// its lease; a single attempt reports MISCONF at once.
func TestMisconfRetried(t *testing.T) {
	t.Parallel()
	d := newDiskRefusing(t)
	c := newTestClient(t, d.node.Client(t), WithFailoverGuard(false, 0))
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			holder := lc.make(t, c, "misconf:held:"+lc.name)
			held, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fresh := lc.make(t, c, "misconf:fresh:"+lc.name)
			d.refuse(t)
			if _, err := fresh.TryLock(ctx, 0); !isMisconf(err) {
				t.Fatalf("a single attempt: %v, want MISCONF", err)
			}
			locked := within(t, 10*time.Second, "Lock while the server refuses writes", lockAndUnlock(ctx, fresh))
			released := within(t, 10*time.Second, "Unlock while the server refuses writes", func() error { return holder.Unlock(held) })
			time.Sleep(300 * time.Millisecond)
			d.allow(t)
			released()
			locked()
			if n, err := d.node.Do(t, "EXISTS", keyOfCase(t, holder), keyOfCase(t, fresh)).AsInt64(); err != nil || n != 0 {
				t.Fatalf("lock keys left after both were released: %d, %v", n, err)
			}
		})
	}
}

// TestMisconfRetriedSemaphores: the same for both semaphores' waiting
// Acquire and their Release, and a latch's CountDown: a Release that failed
// at once left a Semaphore's permits taken for good.
func TestMisconfRetriedSemaphores(t *testing.T) {
	t.Parallel()
	d := newDiskRefusing(t)
	c := newTestClient(t, d.node.Client(t), WithFailoverGuard(false, 0))
	ctx := testCtx(t, 30*time.Second)
	s := mustSem(t, c, "misconf:sem")
	p := mustPermits(t, c, "misconf:permits")
	l := mustLatch(t, c, "misconf:latch")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	d.refuse(t)
	if _, err := p.TryAcquire(ctx, time.Minute, 0); !isMisconf(err) {
		t.Fatalf("a single PermitSemaphore attempt: %v, want MISCONF", err)
	}
	semAcquired := within(t, 10*time.Second, "Semaphore.Acquire while the server refuses writes", func() error {
		if err := s.Acquire(ctx, 1); err != nil {
			return err
		}
		return s.Release(ctx, 1)
	})
	permitAcquired := within(t, 10*time.Second, "PermitSemaphore.Acquire while the server refuses writes", func() error {
		id, err := p.Acquire(ctx, time.Minute)
		if err != nil {
			return err
		}
		return p.Release(ctx, id)
	})
	semReleased := within(t, 10*time.Second, "Semaphore.Release while the server refuses writes", func() error { return s.Release(ctx, 1) })
	permitReleased := within(t, 10*time.Second, "PermitSemaphore.Release while the server refuses writes", func() error { return p.Release(ctx, id) })
	counted := within(t, 10*time.Second, "CountDown while the server refuses writes", func() error { return l.CountDown(ctx) })
	time.Sleep(300 * time.Millisecond)
	d.allow(t)
	semReleased()
	permitReleased()
	counted()
	semAcquired()
	permitAcquired()
	if n, err := s.AvailablePermits(ctx); err != nil || n != 1 {
		t.Errorf("Semaphore permits after every release: %d, %v, want 1", n, err)
	}
	if n, err := p.AvailablePermits(ctx); err != nil || n != 1 {
		t.Errorf("PermitSemaphore permits after every release: %d, %v, want 1", n, err)
	}
	if n, err := l.Count(ctx); err != nil || n != 0 {
		t.Errorf("latch count after CountDown: %d, %v, want 0", n, err)
	}
}

// TestExtendRetriedOnRefusal: Extend is made again, within its context,
// while Redis refuses it having run nothing (MISCONF here; LOADING, BUSY,
// READONLY and the rest alike), as Lock and Unlock are: it failed at once,
// and the holder of an explicit lease lost its lock for a refusal that
// passed a moment later.
func TestExtendRetriedOnRefusal(t *testing.T) {
	t.Parallel()
	d := newDiskRefusing(t)
	c := newTestClient(t, d.node.Client(t), WithFailoverGuard(false, 0))
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			l := lc.make(t, c, "misconf:extend:"+lc.name)
			lctx, err := lc.withLease(l, ctx, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			d.refuse(t)
			extended := within(t, 10*time.Second, "Extend while the server refuses writes", func() error {
				return l.(interface {
					Extend(ctx, lctx context.Context, lease time.Duration) error
				}).Extend(ctx, lctx, 20*time.Second)
			})
			time.Sleep(300 * time.Millisecond)
			d.allow(t)
			extended()
			if ttl, err := d.node.Do(t, "PTTL", keyOfCase(t, l)).AsInt64(); err != nil || ttl < 15000 {
				t.Errorf("PTTL after Extend to 20s: %d, %v", ttl, err)
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("PermitSemaphore", func(t *testing.T) {
		ctx := testCtx(t, 30*time.Second)
		p := mustPermits(t, c, "misconf:extend")
		if _, err := p.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		id, err := p.Acquire(ctx, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		d.refuse(t)
		extended := within(t, 10*time.Second, "PermitSemaphore.Extend while the server refuses writes", func() error {
			return p.Extend(ctx, id, 20*time.Second)
		})
		time.Sleep(300 * time.Millisecond)
		d.allow(t)
		extended()
		if err := p.Release(ctx, id); err != nil {
			t.Fatal(err)
		}
	})
}
