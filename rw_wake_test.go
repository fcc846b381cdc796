package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A writer that keeps a read hold past its last Unlock (a downgrade to read
// mode) lets other readers in: the readers waiting for the write lock hear
// of it and enter at once, not at their fallback timer.
func TestRWMutexDowngradeWakesReaders(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, newTestClient(t, node.Client(t), prefix), "rw:downgrade-wake")
	// A long waiter timeout: a reader's fallback timer is a third of it.
	reader := mustRW(t, newTestClient(t, node.Client(t), prefix), "rw:downgrade-wake", WithWaiterTimeout(30*time.Second))
	w, err := rw.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := reader.RLock(ctx)
		if err == nil {
			err = reader.RUnlock(r)
		}
		got <- err
	}()
	time.Sleep(300 * time.Millisecond) // the reader is refused and waits
	r, err := rw.RLock(WithOwner(ctx, ownerIn(w)))
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Unlock(w); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(4 * time.Second):
		t.Fatalf("a reader waits on %s after the writer dropped to read mode", time.Since(start).Round(time.Millisecond))
	}
	if err := rw.RUnlock(r); err != nil {
		t.Fatal(err)
	}
}
