package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Mutex held without an expiry (PTTL -1: nothing tells its waiters when
// it goes) still has its waiters call again every third of the waiter
// timeout, as for any holder: the lock deleted without a message (here DEL)
// is taken within that, not at the 2 s fallback of a wait without a lease.
func TestMutexWaitOnLockWithoutExpiry(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(600*time.Millisecond))
	m := mustMutex(t, c, "no-expiry")
	// A Redisson holder's field (version-4 UUID), with no PEXPIRE.
	if err := node.Do(t, "HSET", m.key, "6b3e7c1a-2f4d-4c8e-9a1b-0c2d3e4f5a6b:1", "1").Error(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		lctx, err := m.Lock(testCtx(t, 10*time.Second))
		if err == nil {
			err = m.Unlock(lctx)
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if err := node.Do(t, "DEL", m.key).Error(); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("through %s after the lock went", time.Since(deleted).Round(time.Millisecond))
	case <-time.After(time.Second):
		t.Fatal("waiter not through 1s after the lock went: it slept past a third of its 600ms waiter timeout")
	}
}
