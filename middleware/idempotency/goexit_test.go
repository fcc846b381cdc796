package idempotency

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// goexitClient is a rueidis client whose next call ends its goroutine
// (runtime.Goexit, as a test's t.FailNow in a client wrapper does), before
// anything is sent.
type goexitClient struct {
	rueidis.Client
	armed, exited atomic.Bool
}

func (p *goexitClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if p.armed.CompareAndSwap(true, false) {
		p.exited.Store(true)
		runtime.Goexit()
	}
	return p.Client.Do(ctx, cmd)
}

// TestClaimRenewalGoexitNoPanic: a client wrapper that ends the goroutine
// of a claim's renewal (runtime.Goexit) did not panic, and is not logged
// as a panic: recover, which tells neither from a panic(nil) under
// GODEBUG=panicnil=1, returns nil for it, and it was logged at ERROR as a
// panic with the value nil.
func TestClaimRenewalGoexitNoPanic(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := &goexitClient{Client: node.Client(t)}
	s, logs := debugLoggedStore(t, rc)
	c := reserve(t, s, "renew-goexit")
	_, cancel := c.Context(context.Background())
	defer cancel()
	rc.armed.Store(true)
	if !eventuallyTrue(5*time.Second, rc.exited.Load) {
		t.Fatal("no renewal was made")
	}
	// The renewal's goroutine logs before it ends, if it logs.
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(logs.String(), "panic recovered") {
		t.Fatalf("a renewal whose goroutine ended (runtime.Goexit) was logged as a panic; log:\n%s", logs.String())
	}
}
