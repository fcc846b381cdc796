package scriptlock

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Close with many goroutines waiting on every kind of wait: each returns
// ErrClosed promptly, Close does not hang, the Client's goroutines end, no
// waiter registration stays, and Unlock of a lock context of the closed
// Client afterwards still gives the lock back (Close leaves rc open).
func TestCloseEndsEveryWait(t *testing.T) {
	p := newProxied(t)
	node := p.node
	prefix := WithKeyPrefix(p.c.cfg.prefix)
	h := newTestClient(t, node.Client(t), prefix)
	rc := node.Client(t)
	if err := rc.Do(context.Background(), rc.B().Ping().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	c, err := New(rc, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A hold of the closing Client, unlocked after Close.
	own := mustMutex(t, c, "own")
	octx, err := own.Lock(testCtx(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for _, wk := range waitKinds {
		wait, release := wk.setup(t, h, c, "close-"+wk.name)
		defer release()
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- wait(context.Background())
			}()
		}
		if lk := lockKind(wk.name); lk {
			l := waitLocker(t, wk.name, c, "close-"+wk.name)
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := l.TryLock(context.Background(), time.Minute)
					errs <- err
				}()
			}
		}
	}
	time.Sleep(time.Second) // all waiting, subscribed
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	closed := time.Since(start)
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(3 * time.Second):
		t.Fatal("waiters still waiting 3s after Close")
	}
	t.Logf("Close took %s", closed.Round(time.Millisecond))
	if closed > 2*time.Second {
		t.Errorf("Close took %s", closed)
	}
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("wait ended with %v, want ErrClosed", err)
		}
	}
	if err := own.Unlock(octx); err != nil {
		t.Errorf("Unlock after Close: %v", err)
	}
	if locked, err := mustMutex(t, h, "own").IsLocked(testCtx(t, 5*time.Second)); err != nil || locked {
		t.Errorf("lock held after Unlock of the closed Client's hold: %v, %v", locked, err)
	}
	keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		for _, r := range registrationKeys {
			if strings.HasPrefix(k, r) {
				t.Errorf("registration key %s left after Close", k)
			}
		}
	}
	rc.Close() // rueidis's own goroutines (pub/sub turned its pipe background) go with it
	if !eventually(2*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before the Client:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}

func lockKind(name string) bool {
	return strings.Contains(name, "Mutex")
}
