package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Delete removes every key of a semaphore, and a deleted semaphore has no
// permits until set again.
func TestSemaphoreDelete(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	s := mustSem(t, c, "sem-del")
	if ok, err := s.Delete(ctx); err != nil || ok {
		t.Fatalf("Delete of a semaphore never set = %v, %v; want false", ok, err)
	}
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	if exists(t, node, s.Key()) {
		t.Fatal("permit counter still in Redis after Delete")
	}
	if n, err := s.AvailablePermits(ctx); err != nil || n != 0 {
		t.Fatalf("AvailablePermits after Delete = %d, %v", n, err)
	}
	if err := s.TryAcquire(ctx, 1, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryAcquire after Delete: %v, want ErrNotAcquired", err)
	}
	// TrySetPermits starts it afresh.
	if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits after Delete = %v, %v", ok, err)
	}
	if ok, err := s.Delete(ctx); err != nil || !ok {
		t.Fatalf("second Delete = %v, %v", ok, err)
	}
}

func TestPermitSemaphoreDelete(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "permits-del")
	if ok, err := p.Delete(ctx); err != nil || ok {
		t.Fatalf("Delete of a semaphore never set = %v, %v; want false", ok, err)
	}
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	id, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := p.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	// Beside the records of the calls' answers (the releases', Delete's),
	// which expire within a minute.
	if keys := keysBesideRecords(t, node, redissonName("redisson_sc_latch", p.Key())); len(keys) != 0 {
		t.Fatalf("keys left after Delete: %v", keys)
	}
	if err := p.Release(ctx, id); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("Release of a permit taken before Delete: %v, want ErrUnknownPermit", err)
	}
	if err := p.Extend(ctx, id, time.Minute); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("Extend of a permit taken before Delete: %v, want ErrUnknownPermit", err)
	}
	if _, err := p.TryAcquire(ctx, time.Second, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryAcquire after Delete: %v, want ErrNotAcquired", err)
	}
	// Held permits alone are a semaphore to delete.
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if ok, err := p.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete with every permit held = %v, %v", ok, err)
	}
	if keys := keysBesideRecords(t, node, redissonName("redisson_sc_latch", p.Key())); len(keys) != 0 {
		t.Fatalf("keys left after the second Delete: %v", keys)
	}
}

// A Delete whose reply is lost is made again and answers what the first
// attempt did: it deleted the semaphore or latch. The repeat deletes nothing,
// so a count another caller set in between survives.
func TestDeleteReplyLost(t *testing.T) {
	t.Parallel()
	type deleter interface {
		Key() string
		Delete(ctx context.Context) (bool, error)
	}
	for _, tc := range []struct {
		name string
		open func(t *testing.T, c *Client, ctx context.Context) deleter
	}{
		{"Semaphore", func(t *testing.T, c *Client, ctx context.Context) deleter {
			s := mustSem(t, c, "del-retry")
			if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			return s
		}},
		{"PermitSemaphore", func(t *testing.T, c *Client, ctx context.Context) deleter {
			s := mustPermits(t, c, "del-retry")
			if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			return s
		}},
		{"CountDownLatch", func(t *testing.T, c *Client, ctx context.Context) deleter {
			l := mustLatch(t, c, "del-retry")
			if ok, err := l.TrySetCount(ctx, 2); err != nil || !ok {
				t.Fatalf("TrySetCount = %v, %v", ok, err)
			}
			return l
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxied(t)
			ctx := testCtx(t, 20*time.Second)
			d := tc.open(t, p.c, ctx)
			if _, err := d.Delete(ctx); err != nil { // script loaded
				t.Fatal(err)
			}
			d = tc.open(t, p.c, ctx)
			var ok bool
			err := p.lostDeletionReply(t, func() bool {
				if exists(t, p.node, d.Key()) {
					return false
				}
				// Deleted; before the reply is lost another caller
				// sets a count.
				p.node.Do(t, "SET", d.Key(), "5")
				return true
			}, func() (err error) {
				ok, err = d.Delete(ctx)
				return err
			})
			if err != nil || !ok {
				t.Fatalf("Delete whose first reply was lost = %v, %v; want true", ok, err)
			}
			if n := countAt(t, p.node, d.Key()); n != 5 {
				t.Fatalf("count after the repeated Delete = %d; want 5, the count set after the first attempt", n)
			}
		})
	}
}
