package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The first panic of a background undo is logged with its stack: the
// stack of the client wrapper's panic, which names the wrapper, not only
// the undo's goroutine that the panic was carried to.
func TestBackgroundUndoPanicStackNamesWrapper(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	px, _, sem := panickyUndoSetup(t, "undo-panic-stack", &logs)
	px.Freeze()
	err := sem.TryAcquire(context.Background(), 1, 300*time.Millisecond)
	px.Thaw()
	var na *NotAcquiredError
	if !errors.As(err, &na) || !na.Unanswered {
		t.Fatalf("TryAcquire, server frozen: %v, want a NotAcquiredError with Unanswered", err)
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the undo's panic was not logged; log:\n%s", logs.String())
	}
	var first string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "panic recovered") {
			first = line
			break
		}
	}
	if !strings.Contains(first, "panickyClient).Do") {
		t.Fatalf("the undo's panic was logged without the wrapper's frames in its stack:\n%s", first)
	}
}
