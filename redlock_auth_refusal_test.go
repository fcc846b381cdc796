package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockAuthRefusalOnMajority: a majority of nodes whose password
// changed under the Clients (requirepass set, their connections closed)
// refuse every call with NOAUTH, on which a Mutex's Lock fails at once: the
// others cannot make a majority, so Lock fails with the attempt's
// QuorumError, which names NOAUTH, instead of trying again until its
// context ends.
func TestRedLockAuthRefusalOnMajority(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	// A first lock opens the Clients' connections.
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		ctl := rawClient(t, nodes[i].Addr)
		for _, args := range [][]string{{"CONFIG", "SET", "requirepass", "rotated"}, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}} {
			if err := ctl.Do(ctx, ctl.B().Arbitrary(args...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			_ = ctl.Do(context.Background(), ctl.B().Arbitrary("CONFIG", "SET", "requirepass", "").Build()).Error()
		})
	}
	for _, tc := range []struct {
		name string
		lock func(ctx context.Context) (context.Context, error)
	}{
		{"Lock", r.Lock},
		{"TryLock", func(ctx context.Context) (context.Context, error) { return r.TryLock(ctx, 8*time.Second) }},
	} {
		wctx, cancel := context.WithTimeout(ctx, 8*time.Second)
		start := time.Now()
		_, err := tc.lock(wctx)
		cancel()
		var qe *QuorumError
		if took := time.Since(start); took > 4*time.Second || !errors.As(err, &qe) || !isNoAuth(err) {
			t.Errorf("%s with 2 nodes of 3 refusing the Clients' password: %v after %s, want a QuorumError with NOAUTH at once", tc.name, err, took.Round(time.Millisecond))
		}
	}
}
