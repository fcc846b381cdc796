package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiting writer refused for its fencing-token counter (ErrFenceCounter)
// gives up: the readers its registration held back enter at once, as when
// any waiting writer withdraws, not at their fallback timer. The refusal
// took the writer's registration out without a word, so its withdrawal
// found nothing to withdraw and woke nobody.
func TestRWMutexFenceRefusedWriterWakesReaders(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	testRefusedWriterWakesReaders(t, node, node.Client(t), func(err error) bool { return errors.Is(err, ErrFenceCounter) }, true)
}

// The same for a writer whose ACL refuses the INCR that draws its token: it
// gets Redis's refusal and gives up, and the readers it held back enter.
func TestRWMutexIncrRefusedWriterWakesReaders(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	if err := node.Do(t, "ACL", "SETUSER", "noincr", "on", "nopass", "~*", "&*", "+@all", "-incr").Error(); err != nil {
		t.Fatal(err)
	}
	rc := node.Client(t, func(o *rueidis.ClientOption) { o.Username = "noincr" })
	testRefusedWriterWakesReaders(t, node, rc, scriptACLRefusal, false)
}

// testRefusedWriterWakesReaders: a writer on wrc waits behind a reader,
// whose lease then ends quietly; a reader on another Client waits behind
// the writer's registration; the writer's next attempt is refused (refused
// says whether its error is the one expected; badCounter: the counter is
// made to hold no integer first), and the reader must enter at once.
func testRefusedWriterWakesReaders(t *testing.T, node *redistest.Node, wrc rueidis.Client, refused func(error) bool, badCounter bool) {
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 30*time.Second)
	writer := mustRW(t, newTestClient(t, wrc, prefix), "rw:fence-wake")
	// A long waiter timeout: a reader's fallback timer is a third of it.
	reader := mustRW(t, newTestClient(t, node.Client(t), prefix), "rw:fence-wake", WithWaiterTimeout(30*time.Second))
	counter := redissonName("redisson_lock_token", writer.Key())
	// A read hold of another process, 1.5 s left: the writer waits and
	// calls again when it ends.
	node.Do(t, "HSET", writer.Key(), "mode", "read", "other-process:1", "1")
	node.Do(t, "PEXPIRE", writer.Key(), "1500")
	werr := make(chan error, 1)
	go func() {
		w, err := writer.TryLock(ctx, 10*time.Second)
		if err == nil {
			_ = writer.Unlock(w)
		}
		werr <- err
	}()
	time.Sleep(300 * time.Millisecond) // the writer is registered and waits
	if n, _ := node.Do(t, "ZCARD", writer.writers).AsInt64(); n != 1 {
		t.Fatalf("%d writers registered, want 1", n)
	}
	node.Do(t, "DEL", writer.Key()) // the reader left, quietly
	if badCounter {
		node.Do(t, "SET", counter, "not a number")
	}
	got := make(chan error, 1)
	go func() {
		r, err := reader.TryRLock(ctx, 20*time.Second)
		if err == nil {
			err = reader.RUnlock(r)
		}
		got <- err
	}()
	select {
	case err := <-werr:
		if !refused(err) {
			t.Fatalf("writer: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the writer still waits on a counter no token can be drawn from")
	}
	start := time.Now()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(4 * time.Second):
		t.Fatalf("a reader waits on %s after the writer that held it back gave up", time.Since(start).Round(time.Millisecond))
	}
	if n, _ := node.Do(t, "EXISTS", writer.writers).AsInt64(); n != 0 {
		t.Errorf("the writer that gave up is still registered")
	}
	if v, _ := node.Do(t, "GET", counter).ToString(); badCounter && v != "not a number" {
		t.Errorf("counter %q", v)
	}
}
