package scriptlock

import (
	"context"
	"testing"
	"time"
)

// A ForceUnlock whose reply was lost with its connection, and which rueidis
// then made again (the script is retryable) on a new connection whose dial
// failed, ran: it fails with that dial's error, which reads as a call never
// sent, so a caller that believes it forces again, and deletes the lock of
// whoever took it since. Its error tells the outcome is unknown.
func TestForceUnlockRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	type forcer interface {
		Locker
		LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error)
		ForceUnlock(ctx context.Context) (bool, error)
		Key() string
	}
	for _, kind := range []string{"Mutex", "FairMutex", "RWMutex", "LeanMutex"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			same := sharedPrefix(t)
			r := newUnsentRig(t, same)
			ctx := testCtx(t, 20*time.Second)
			holder := newTestClient(t, rawClient(t, r.node.Addr), same)
			handle := func(c *Client) forcer {
				switch kind {
				case "Mutex":
					return mustMutex(t, c, "force-repeat-unsent")
				case "FairMutex":
					return mustFair(t, c, "force-repeat-unsent")
				case "RWMutex":
					return mustRW(t, c, "force-repeat-unsent")
				}
				return mustLean(t, c, "force-repeat-unsent")
			}
			l := handle(r.c)
			if _, err := l.ForceUnlock(ctx); err != nil { // scripts loaded
				t.Fatal(err)
			}
			if _, err := handle(holder).LockWithLease(ctx, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			if n, err := r.node.Do(t, "EXISTS", l.Key()).AsInt64(); err != nil || n != 1 {
				t.Fatalf("the lock to force is not there: EXISTS %d, %v", n, err)
			}
			r.lose(t, true, func() bool {
				n, err := r.node.Do(t, "EXISTS", l.Key()).AsInt64()
				return err == nil && n == 0
			}, func() error {
				_, err := l.ForceUnlock(boundedCtx(t, ctx))
				return err
			})
		})
	}
}
