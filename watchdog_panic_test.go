package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panickyKeyClient is a rueidis client whose script calls (alone or in a
// pipeline) naming a key containing key panic while left is above zero, or
// for good when left starts below zero, as a client wrapper may, before
// anything is sent.
type panickyKeyClient struct {
	rueidis.Client
	key  string
	left atomic.Int64
}

func (p *panickyKeyClient) hit(cmd rueidis.Completed) bool {
	cs := cmd.Commands()
	if len(cs) < 3 || (cs[0] != "EVALSHA" && cs[0] != "EVAL") {
		return false
	}
	named := false
	for _, a := range cs[3:] {
		named = named || strings.Contains(a, p.key)
	}
	if !named {
		return false
	}
	for {
		n := p.left.Load()
		switch {
		case n < 0:
			return true
		case n == 0:
			return false
		case p.left.CompareAndSwap(n, n-1):
			return true
		}
	}
}

func (p *panickyKeyClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if p.hit(cmd) {
		panic("client wrapper panicked")
	}
	return p.Client.Do(ctx, cmd)
}

func (p *panickyKeyClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	for _, cmd := range multi {
		if p.hit(cmd) {
			panic("client wrapper panicked")
		}
	}
	return p.Client.DoMulti(ctx, multi...)
}

// A watchdog renewal round meets a client wrapper that panics on one
// hold's renewal: the panic is logged, not let through (it crashed the
// process from the round's goroutine), the other holds of the round, sent
// in one pipeline with it, are still renewed, and the panicking hold is
// treated as a renewal that failed: made again soon (a wrapper that
// panicked once keeps the hold), its loss deadline ending it should no
// renewal get through (one that always panics).
func TestWatchdogRenewalPanic(t *testing.T) {
	for _, always := range []bool{false, true} {
		name := "once"
		if always {
			name = "always"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			var logs syncBuffer
			rc := &panickyKeyClient{Client: node.Client(t), key: "wd-panic-a"}
			c := newTestClient(t, rc, WithWatchdog(time.Second, 300*time.Millisecond),
				WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			ctx := testCtx(t, 20*time.Second)
			a, b := mustMutex(t, c, "wd-panic-a"), mustMutex(t, c, "wd-panic-b")
			ha, err := a.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			hb, err := b.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if always {
				rc.left.Store(-1)
			} else {
				rc.left.Store(1)
			}
			time.Sleep(2500 * time.Millisecond) // past the 1 s lease: renewals carry b on
			if !strings.Contains(logs.String(), "panic recovered") {
				t.Fatalf("the renewal's panic was not logged; log:\n%s", logs.String())
			}
			if err := context.Cause(hb); err != nil {
				t.Fatalf("the hold renewed beside the panicking one ended: %v", err)
			}
			if err := context.Cause(ha); always != (err != nil) {
				t.Fatalf("the hold whose renewal panicked (always %v): %v", always, err)
			} else if always && !errors.Is(err, ErrLockLost) {
				t.Fatalf("the hold whose renewal always panics ended with %v, want ErrLockLost", err)
			}
			rc.left.Store(0)
			if err := b.Unlock(hb); err != nil {
				t.Fatal(err)
			}
			if !always {
				if err := a.Unlock(ha); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
