package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TryLock(ctx, wait) with no deadline on ctx gives up within wait (plus a
// margin) also when the server stops answering as the wait subscribes, after
// its first attempt took a place in line: the wait ran out unanswered, and
// its leave of the line goes on in the background, as when an attempt is
// cut off. It was made before TryLock returned, against a server that no
// longer answered, for up to the release timeout.
func TestTryLockBoundedBySubscribeFrozen(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel()
			p := newProxied(t)
			l := lc.make(t, p.c, "wait-bound-subscribe")
			warm(t, l)
			holdDirect(t, p, lc, "wait-bound-subscribe")
			p.px.HoldOn("SUBSCRIBE")
			defer p.px.Thaw()
			start := time.Now()
			_, err := l.TryLock(context.Background(), time.Second)
			elapsed := time.Since(start)
			held := p.px.HeldOn()
			p.px.Thaw()
			if !held {
				if strings.HasPrefix(lc.name, "LeanMutex") {
					t.Skip("a LeanMutex's wait keeps no place in line, and polls")
				}
				t.Fatalf("the wait did not subscribe (TryLock: %v after %s)", err, elapsed)
			}
			if !errors.Is(err, ErrNotAcquired) {
				t.Errorf("TryLock: %v, want ErrNotAcquired", err)
			}
			if elapsed > 1800*time.Millisecond {
				t.Errorf("TryLock(ctx, 1s) whose subscription the server did not answer returned after %s", elapsed)
			}
		})
	}
}
