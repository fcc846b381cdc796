package scriptlock

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A re-entry's reply is handled while an Extend to a shorter lease is sent
// (its leaseCall moves the deadline earlier first): whichever comes first,
// the deadline must not end up past the Extend's shorter lease, which the
// server may run after the re-entry.
var spin atomic.Int64

func TestReentryReplyBesideExtendSend(t *testing.T) {
	t.Parallel()
	stress(t)
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "reply-race")
	ctx := testCtx(t, 30*time.Second)
	const long, short = 20 * time.Second, time.Second
	// Each run spins a goroutine on a CPU until it is let go; 1000 runs
	// keep that to seconds on a loaded 2-core machine.
	const runs = 1000
	bad := 0
	for i := range runs {
		owner := "o" + strconv.Itoa(i)
		field := c.fieldOf(m, owner)
		now := time.Now()
		lctx, err := c.grant(ctx, m, owner, field, attempt{granted: true, fresh: true, token: 1}, long, long, long, now, c.forceSeq.Load(), true, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		h := lctx.(*lockCtx).hold
		mark := c.leaseCall(h, lossDeadline(now, long)) // the re-entry, sent
		mark.end()                                      // and answered
		shortAt := lossDeadline(time.Now(), short)
		var wg sync.WaitGroup
		var start atomic.Bool
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !start.Load() {
			}
			for range i % 200 { // across the reply's handling
				spin.Add(1)
			}
			c.leaseCall(h, shortAt).end() // the Extend, sent (its reply is slow)
		}()
		time.Sleep(20 * time.Microsecond)
		start.Store(true)
		if _, err := c.grant(ctx, m, owner, field, attempt{granted: true}, long, long, long, now, c.forceSeq.Load(), true, mark, true); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if h.lossAt.Load() > monoNanos(shortAt) {
			bad++
		}
		c.finish(h, context.Canceled)
	}
	if bad > 0 {
		t.Fatalf("in %d of %d runs the re-entry's reply set the loss deadline past the shorter lease of an Extend sent as it was handled", bad, runs)
	}
}
