package scriptlock

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Close called while another is under way returns once the Client is
// closed, as the first does: no goroutine of the Client is left, and
// nothing is held. Locks and acquisitions racing Close either succeed, and
// Close ends their holds, or fail with ErrClosed. Not parallel: goleak sees
// every goroutine of the process.
func TestCloseConcurrent(t *testing.T) {
	node := redistest.Server(t)
	rc := node.Client(t)
	ctx := testCtx(t, 20*time.Second)
	if err := rc.Do(ctx, rc.B().Ping().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	pc := node.Client(t) // for CLIENT PAUSE, connected before goleak's snapshot
	if err := pc.Do(ctx, pc.B().Ping().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	prefix := sharedPrefix(t)
	before := goleak.IgnoreCurrent()
	p := newPairing()
	started := make(chan struct{})
	p.onReleaseStart = func() { close(started) }
	c, err := New(rc, prefix, WithObserver(p))
	if err != nil {
		t.Fatal(err)
	}

	// Keep the first Close busy: it waits for a release in flight, which
	// the server answers only after a pause.
	m := mustMutex(t, c, "rel")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Do(ctx, pc.B().ClientPause().Timeout(400).All().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() { released <- m.Unlock(lctx) }()
	<-started

	var wg sync.WaitGroup
	type result struct {
		lctx context.Context
		err  error
	}
	results := make(chan result, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := mustMutex(t, c, "race"+string(rune('a'+i)))
			s := mustSem(t, c, "sem")
			for range 4 {
				lctx, err := m.Lock(ctx)
				results <- result{lctx, err}
				if err := s.TryAcquire(ctx, 1, 0); err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrNotAcquired) {
					t.Errorf("TryAcquire: %v", err)
				}
			}
		}()
	}
	first := make(chan struct{})
	go func() {
		defer close(first)
		c.Close()
	}()
	for !c.closed() {
		time.Sleep(time.Millisecond)
	}
	c.Close()
	p.mu.Lock()
	open := len(p.open) // the release the first Close waits for
	p.mu.Unlock()
	c.mu.Lock()
	held := len(c.holds)
	c.mu.Unlock()
	if open != 0 || held != 0 {
		t.Errorf("Close returned while the Client was still closing: %d calls in flight, %d holds", open, held)
	}
	wg.Wait()
	<-first
	if err := <-released; err != nil {
		t.Errorf("Unlock during Close: %v", err)
	}
	close(results)
	for r := range results {
		switch {
		case r.err == nil:
			<-r.lctx.Done()
			if cause := context.Cause(r.lctx); !errors.Is(cause, ErrClosed) {
				t.Errorf("a lock held at Close ended with %v, not ErrClosed", cause)
			}
		case !errors.Is(r.err, ErrClosed):
			t.Errorf("Lock racing Close: %v", r.err)
		}
	}
	c.mu.Lock()
	held = len(c.holds)
	c.mu.Unlock()
	if held != 0 {
		t.Errorf("%d holds registered after Close", held)
	}
	goleak.VerifyNone(t, before, redistest.IgnoreReaper(),
		// rc's own connections, which it may replace after the pause.
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*pipe)._backgroundRead"),
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*pipe)._backgroundWrite"))
}

// TestUnlockAfterCloseReleases: Close ends the holds' contexts without
// releasing their locks, and the holder's Unlock, run after Close (a
// deferred Unlock registered before a deferred Close), still releases the
// lock on the server rather than leave it to its lease.
func TestUnlockAfterCloseReleases(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c, err := New(node.Client(t), WithKeyPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 20*time.Second)
	type held struct {
		lc  lockCase
		l   Locker
		ctx context.Context
	}
	var hs []held
	for _, lc := range lockCases {
		l := lc.make(t, c, "closed:"+lc.name)
		lctx, err := l.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, held{lc, l, lctx})
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if cause := context.Cause(h.ctx); !errors.Is(cause, ErrClosed) {
			t.Errorf("%s: lock context after Close: %v, want ErrClosed", h.lc.name, cause)
		}
		if err := h.l.Unlock(h.ctx); err != nil {
			t.Errorf("%s: Unlock after Close: %v", h.lc.name, err)
		}
	}
	// What may stay is the fencing counter and release latches, each for at
	// most the release timeout.
	keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "redisson_lock_token:") {
			continue
		}
		if ttl, err := node.Do(t, "PTTL", k).AsInt64(); err != nil || !strings.HasPrefix(k, "redisson_unlock_latch:") || ttl <= 0 || ttl > DefaultReleaseTimeout.Milliseconds() {
			t.Errorf("key %s (PTTL %d ms, %v) left after Unlock of a closed Client's hold", k, ttl, err)
		}
	}
}
