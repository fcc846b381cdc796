package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
)

func TestRetryHint(t *testing.T) {
	const s = time.Second
	for _, c := range []struct{ def, wait, remaining, want time.Duration }{
		{s, 0, 0, s},          // nothing known: the default
		{s, 0, 30 * s, s},     // watchdog lease: not a hint
		{s, 2 * s, 30 * s, s}, // a longer wait does not raise it
		{s, 200 * time.Millisecond, 0, 200 * time.Millisecond}, // capped by the wait
		{s, 0, 300 * time.Millisecond, 300 * time.Millisecond}, // explicit lease ending sooner
		{5 * s, 2 * s, 3 * s, 2 * s},
	} {
		if got := RetryHint(c.def, c.wait, c.remaining); got != c.want {
			t.Errorf("RetryHint(%s, %s, %s) = %s, want %s", c.def, c.wait, c.remaining, got, c.want)
		}
	}
}

// TestClassifyLockError: a context error inside a lock error is the
// request's only when the request's context has ended; a call's own timeout
// (a Redis that accepts connections but never answers) is Unavailable, so a
// gRPC caller is not told DeadlineExceeded on a call that had no deadline,
// and a fail-open middleware runs open.
func TestClassifyLockError(t *testing.T) {
	_, timeout := (&net.Dialer{Timeout: time.Nanosecond}).Dial("tcp", "127.0.0.1:1")
	if !errors.Is(timeout, context.DeadlineExceeded) {
		t.Fatalf("dial with a 1ns timeout: %v, want an error that errors.Is reads as context.DeadlineExceeded", timeout)
	}
	lockErr := fmt.Errorf("scriptlock: lock %q: %w", "order:1", timeout)
	live := context.Background()
	canceled, cancel := context.WithCancel(live)
	cancel()
	past, cancelPast := context.WithDeadline(live, time.Now().Add(-time.Second))
	defer cancelPast()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want Failure
	}{
		{"call timeout, request live", live, lockErr, Unavailable},
		{"request canceled", canceled, fmt.Errorf("wait ended: %w", context.Canceled), Canceled},
		{"request deadline passed", past, fmt.Errorf("scriptlock: %w", context.DeadlineExceeded), Canceled},
		{"call timeout, request deadline passed", past, lockErr, Canceled},
		{"not acquired", live, fmt.Errorf("x: %w", scriptlock.ErrNotAcquired), Contended},
		{"invalid name", live, fmt.Errorf("x: %w", scriptlock.ErrInvalidName), Invalid},
	} {
		if got, _ := ClassifyLockError(tc.ctx, tc.err); got != tc.want {
			t.Errorf("%s: ClassifyLockError = %d, want %d", tc.name, got, tc.want)
		}
	}
}
