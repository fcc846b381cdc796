package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestWatchdogLeaseTooLongSaysSo: a watchdog lease longer than MaxLease is
// ErrInvalidArgument with a message that names that bound, not one that
// asks for a lease beyond the clock-drift allowance, which it is.
func TestWatchdogLeaseTooLongSaysSo(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	_, err := c.Mutex("watchdog-too-long", WithWatchdog(MaxLease+time.Millisecond, 0))
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("WithWatchdog(MaxLease + 1ms): %v, want ErrInvalidArgument", err)
	}
	if !strings.Contains(err.Error(), "MaxLease") {
		t.Errorf("WithWatchdog(MaxLease + 1ms): %q does not say the lease is longer than MaxLease", err)
	}
}
