package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A lock refused with WRONGTYPE says the name's key is of another type
// without naming the wrong culprit: a Mutex on a Semaphore's name (a string
// count) said a LeanMutex shared the name, and a LeanMutex on another
// program's list said a Mutex, FairMutex, RWMutex or Redisson lock did.
func TestWrongTypeMessageGuessesNoCulprit(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	if ok, err := mustSem(t, c, "sem").TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	lean := mustLean(t, c, "queue")
	node.Do(t, "RPUSH", lean.Key(), "job-1")
	for what, call := range map[string]func() error{
		"Mutex on a Semaphore's name":   func() error { _, err := mustMutex(t, c, "sem").TryLock(ctx, 0); return err },
		"LeanMutex on another's list":   func() error { _, err := lean.TryLock(ctx, 0); return err },
		"Mutex state on another's list": func() error { _, err := mustMutex(t, c, "queue").State(ctx); return err },
	} {
		err := call()
		if !errors.Is(err, ErrWrongKind) {
			t.Errorf("%s: %v, want ErrWrongKind", what, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "share the name") || !strings.Contains(msg, "another program") {
			t.Errorf("%s: %q names a culprit it cannot know, and not another program's key", what, msg)
		}
	}
}
