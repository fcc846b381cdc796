package core

import (
	"testing"
	"time"
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
