package scriptlock

import (
	"testing"
	"time"
)

// monoNow reads the number monoNanos(time.Now()) reads, from the monotonic
// clock alone, and monoClock follows the clock hook as clock does: loss
// deadlines, lease marks and sweeps compare these numbers with ones taken
// from time.Now.
func TestMonoNowAgreesWithTimeNow(t *testing.T) {
	for range 1000 {
		before := monoNanos(time.Now())
		n := monoNow()
		after := monoNanos(time.Now())
		if n < before || n > after {
			t.Fatalf("monoNow %d outside [%d, %d] read around it by time.Now", n, before, after)
		}
	}
	c := &Client{}
	if n, now := c.monoClock(), monoNow(); n > now || now-n > int64(time.Second) {
		t.Fatalf("monoClock %d, monoNow %d right after it", n, now)
	}
	at := time.Now().Add(time.Hour)
	f := func() time.Time { return at }
	c.clockHook.Store(&f)
	if got, want := c.monoClock(), monoNanos(at); got != want {
		t.Fatalf("monoClock with a clock hook %d, want the hook's %d", got, want)
	}
}
