package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// An Extend whose replies come back only after the RedLock's validity ended
// (the lock context ended with ErrLockLost, and its nodes were given back)
// must not report the lock extended: the caller would go on believing it
// holds a lock that is lost.
func TestRedLockExtendAfterLossFails(t *testing.T) {
	t.Parallel()
	_, cs, pxs := proxiedNodes(t, 3)
	ctx := testCtx(t, 30*time.Second)
	// The node timeout outlasts the validity the first Extend leaves, so
	// the replies come back after the validity ended, not as timeouts.
	r := mustRedLock(t, "job", cs, WithLease(3*time.Second), WithNodeTimeout(2*time.Second))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Load the extend script on every node first: its replies are then the
	// only thing held back. It also moves the validity to 600 ms from now.
	if err := r.Extend(ctx, lctx, 600*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for _, px := range pxs {
		px.FreezeReplies()
	}
	done := make(chan error, 1)
	go func() { done <- r.Extend(ctx, lctx, 5*time.Second) }()
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("lock context alive 3s after its validity")
	}
	time.Sleep(100 * time.Millisecond) // the give-back's calls are sent
	for _, px := range pxs {
		px.Thaw()
	}
	err = <-done
	if err == nil {
		t.Fatalf("Extend reported the RedLock extended after its context ended (%v)", context.Cause(lctx))
	}
	if !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend after the loss: %v, want ErrNotHeld", err)
	}
}
