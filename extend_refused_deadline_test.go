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
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, app, "m", WithLease(time.Minute))
	rw := mustRW(t, app, "rw", WithLease(time.Minute))
	rr := mustRW(t, app, "rr", WithLease(time.Minute))
	for _, k := range []struct {
		name   string
		key    string
		lock   func() (context.Context, error)
		extend func(context.Context, time.Duration) error
	}{
		{"Mutex", m.key, func() (context.Context, error) { return m.Lock(ctx) }, func(held context.Context, d time.Duration) error { return m.Extend(ctx, held, d) }},
		{"RWMutex write", rw.key, func() (context.Context, error) { return rw.Lock(ctx) }, func(held context.Context, d time.Duration) error { return rw.Extend(ctx, held, d) }},
		{"RWMutex read", rr.key, func() (context.Context, error) { return rr.RLock(ctx) }, func(held context.Context, d time.Duration) error { return rr.RExtend(ctx, held, d) }},
	} {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			held, err := k.lock()
			if err != nil {
				t.Fatalf("lock: %v", err)
			}
			if err := k.extend(held, time.Second); !errors.Is(err, generated.ErrNoPublish) {
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
