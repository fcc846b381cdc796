package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A release whose call shares its connection with another call that has a
// shorter deadline, on a slow link: rueidis fails every call on the
// connection with context.DeadlineExceeded when that call's deadline breaks
// it. The release's outcome is unknown, as on any broken connection, and it
// is made again within the release timeout; the lock is free afterwards.
func TestReleaseBesideForeignDeadline(t *testing.T) {
	t.Parallel()
	const oneWay = 200 * time.Millisecond
	for _, lc := range lockCases {
		for _, reentered := range []bool{false, true} {
			if reentered && !lc.reentrant() {
				continue
			}
			name := lc.name
			if reentered {
				name += "/Reentered"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				node := redistest.Server(t)
				px := netproxy.New(t, node.Addr)
				rc := px.Client(t)
				c := newTestClient(t, rc)
				l := lc.make(t, c, "l")
				warm(t, l)
				lctx, err := l.Lock(testCtx(t, 10*time.Second))
				if err != nil {
					t.Fatalf("Lock: %v", err)
				}
				inner := lctx
				if reentered {
					if inner, err = l.Lock(lctx); err != nil {
						t.Fatalf("re-entry: %v", err)
					}
				}
				done := breakBeside(px, rc, oneWay)
				start := time.Now()
				err = l.Unlock(inner)
				<-done
				if err != nil {
					t.Fatalf("Unlock failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
				}
				if reentered {
					if lctx.Err() != nil {
						t.Fatalf("the outer hold ended: %v", context.Cause(lctx))
					}
					if err := l.Unlock(lctx); err != nil {
						t.Fatalf("outer Unlock: %v", err)
					}
				}
				px.Delay(0)
				// Free: another owner takes it at once.
				if _, err := l.TryLock(testCtx(t, 10*time.Second), 0); err != nil {
					t.Fatalf("TryLock after the release: %v", err)
				}
			})
		}
	}
}
