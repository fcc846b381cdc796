package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A LeanMutex whose name another program's SET NX lock holds (a random value,
// no <client-id>:<owner-id>) answers ErrWrongKind with a message that does
// not name a semaphore or latch as the key's user: it said "a Semaphore or
// CountDownLatch uses the name", sending an operator after the wrong program.
func TestLeanMutexForeignValueMessage(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	plain, fenced := mustLean(t, c, "report"), mustLean(t, c, "report", WithFencing())
	node.Do(t, "SET", plain.Key(), "Zm9yZWlnbi10b2tlbg", "PX", "60000")
	for what, call := range map[string]func() error{
		"TryLock":        func() error { _, err := plain.TryLock(ctx, 0); return err },
		"fenced TryLock": func() error { _, err := fenced.TryLock(ctx, 0); return err },
		"State":          func() error { _, err := plain.State(ctx); return err },
		"ForceUnlock":    func() error { _, err := plain.ForceUnlock(ctx); return err },
	} {
		err := call()
		if !errors.Is(err, ErrWrongKind) {
			t.Errorf("%s: %v, want ErrWrongKind", what, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "Semaphore or CountDownLatch uses the name") || !strings.Contains(msg, "another program") {
			t.Errorf("%s: %q: the message guesses a semaphore or latch holds the key, and does not say it may be another program's value", what, msg)
		}
	}
	if v, _ := node.Do(t, "GET", plain.Key()).ToString(); v != "Zm9yZWlnbi10b2tlbg" {
		t.Errorf("the other program's value is now %q", v)
	}
}
