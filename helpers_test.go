package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// newTestClient returns a scriptlock Client on rc with a per-test key prefix,
// closed at test end.
func newTestClient(t testing.TB, rc rueidis.Client, opts ...Option) *Client {
	t.Helper()
	c, err := New(rc, append([]Option{WithKeyPrefix(redistest.Prefix(t))}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sharedPrefix makes several Clients use the same key space.
func sharedPrefix(t testing.TB) Option { return WithKeyPrefix(redistest.Prefix(t)) }

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// rawClient connects to addr directly (for example through a netproxy).
func rawClient(t testing.TB, addr string) rueidis.Client {
	t.Helper()
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatalf("rueidis client for %s: %v", addr, err)
	}
	t.Cleanup(rc.Close)
	return rc
}

func dbsize(t testing.TB, n *redistest.Node) int64 {
	t.Helper()
	v, err := n.Do(t, "DBSIZE").AsInt64()
	if err != nil {
		t.Fatalf("DBSIZE: %v", err)
	}
	return v
}

// ownerIn is the owner a lock context carries.
func ownerIn(ctx context.Context) string {
	o, _ := OwnerFrom(ctx)
	return o
}
