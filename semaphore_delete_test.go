package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Delete removes every key of a semaphore, and a deleted semaphore has no
// permits until set again.
func TestSemaphoreDelete(t *testing.T) {
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
	if n := dbsize(t, node); n != 0 {
		keys, _ := node.Do(t, "KEYS", "*").AsStrSlice()
		t.Fatalf("%d keys left after Delete: %v", n, keys)
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
	if n := dbsize(t, node); n != 0 {
		t.Fatalf("%d keys left after the second Delete", n)
	}
}
