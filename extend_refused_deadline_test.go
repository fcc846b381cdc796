package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestExtendRefusedKeepsDeadline: an Extend to a shorter lease refused
// NO_PUBLISH (an ACL user without the lock's channel) wrote nothing, so the
// lock keeps its longer lease on the server; the hold keeps the deadline of
// that lease too, and is not ended as lost at the shorter one it asked for.
func TestExtendRefusedKeepsDeadline(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	m := mustMutex(t, app, "m", WithLease(time.Minute))
	rw := mustRW(t, app, "rw", WithLease(time.Minute))
	rr := mustRW(t, app, "rr", WithLease(time.Minute))
	for _, k := range []struct {
		name   string
		key    string
		lock   func(context.Context) (context.Context, error)
		extend func(context.Context, context.Context, time.Duration) error
	}{
		{"Mutex", m.key, m.Lock, m.Extend},
		{"RWMutex write", rw.key, rw.Lock, rw.Extend},
		{"RWMutex read", rr.key, rr.RLock, rr.RExtend},
	} {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			// Set when the subtest runs: parallel subtests may wait long
			// for their turn.
			ctx := testCtx(t, 30*time.Second)
			held, err := k.lock(ctx)
			if err != nil {
				t.Fatalf("lock: %v", err)
			}
			if err := k.extend(ctx, held, time.Second); !errors.Is(err, generated.ErrNoPublish) {
				t.Fatalf("Extend to a shorter lease by a user without the channel: %v, want generated.ErrNoPublish", err)
			}
			select {
			case <-held.Done():
				ttl, _ := n.Do(t, "PTTL", k.key).AsInt64()
				t.Errorf("the hold ended (%v) at the shorter lease its refused Extend asked for; the lock's PTTL on the server: %d ms", context.Cause(held), ttl)
			case <-time.After(2500 * time.Millisecond):
			}
		})
	}
}
