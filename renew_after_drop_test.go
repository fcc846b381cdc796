package scriptlock

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// A watchdog renewal in flight when its connection breaks is not sent again
// on the new connection once its hold has ended: after an Unlock that could
// not reach the server drops the hold, the lock stays only until the lease
// it had ends. The renewal is caught in a frozen connection, the Unlock
// fails and drops the hold, and the connection (with the renewal) is dropped:
// the lock's TTL on the server must not be set to the full lease again.
func TestRenewalNotResentAfterHoldEnded(t *testing.T) {
	t.Parallel()
	const lease = 10 * time.Second
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel() // each case has its own server and proxy
			p := newProxied(t, WithWatchdog(lease, 300*time.Millisecond), WithReleaseTimeout(300*time.Millisecond))
			l := lc.make(t, p.c, "renew-after-drop")
			key := p.key(t, "renew-after-drop")
			warm(t, l)
			lctx, err := l.Lock(testCtx(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			p.px.Freeze()
			// Two renewal intervals: a renewal is now held in the proxy.
			time.Sleep(700 * time.Millisecond)
			before := pttlAt(t, p, key)
			beforeAt := time.Now()
			if err := l.Unlock(lctx); err == nil {
				t.Fatal("Unlock succeeded against a frozen server")
			}
			p.px.DropAll() // the renewal and the release never reach the server
			p.px.Thaw()
			// Time for rueidis to reconnect and send again what it would.
			time.Sleep(1500 * time.Millisecond)
			sentAt := time.Now()
			after := pttlAt(t, p, key)
			// Left of the lease the lock had when the hold ended, with slack.
			// The server read the first PTTL before beforeAt and the second
			// after sentAt, so at least sentAt - beforeAt passed between
			// them: a reply that comes late on a loaded machine does not
			// count as time the lease ran.
			left := before - sentAt.Sub(beforeAt).Milliseconds() + 300
			if after <= 0 {
				t.Fatalf("the lock is gone (PTTL %d): the dropped release reached the server; the test proves nothing", after)
			}
			if after > left {
				t.Fatalf("the lock's TTL is %d ms, past the %d ms left of its lease when its hold ended (%d ms then): a renewal ran after the owner gave the lock up", after, left, before)
			}
		})
	}
}

// A renewal whose connection breaks under it, with a renewal interval close
// to the lease, is made again in time: rueidis no longer sends it again on
// the next connection, and the watchdog's own retry must come before the
// hold's loss deadline, not a quarter interval later past it. The server is
// fine all along; only the connection carrying the renewal is dropped.
func TestRenewalBrokenConnLongInterval(t *testing.T) {
	t.Parallel()
	// The window between the broken renewal and the loss deadline, lease -
	// every less the loss margin, is about 900ms: room for a retry at half
	// of it and its round trip on a loaded machine, and still shorter than
	// the quarter interval (1s) the retry once waited. The connection is
	// dropped as soon as the renewal is held in the proxy: a fixed wait for
	// it took a good part of the window when its sleeps woke late.
	const lease, every = 5 * time.Second, 4 * time.Second
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel() // each case has its own server and proxy
			p := newProxied(t, WithWatchdog(lease, every))
			l := lc.make(t, p.c, "renew-broken-long")
			warm(t, l)
			lctx, err := l.Lock(testCtx(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			// The first renewal, which sets the lease again, is held in the
			// proxy.
			p.px.HoldOn("\r\n" + strconv.FormatInt(lease.Milliseconds(), 10) + "\r\n")
			if !eventually(every+2*time.Second, p.px.HeldOn) {
				t.Fatal("no renewal sent")
			}
			p.px.DropAll()
			p.px.Thaw()
			time.Sleep(lease - every + 500*time.Millisecond) // past the loss deadline had no renewal succeeded
			if err := context.Cause(lctx); err != nil {
				t.Fatalf("hold lost after one renewal's connection broke, the server answering all along: %v", err)
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
