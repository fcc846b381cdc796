package scriptlock

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A call that fails on a count INCRBY or DECRBY refuses (past 2^63 - 1
// either way, or not an integer, as Redisson's addPermits writes a sum of
// 10^17 or more) changes nothing: the call's one-minute record was written before
// the count was refused, and was left behind.
func TestCountRefusedLeavesNoRecord(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 20*time.Second)
	calls := []struct {
		name string
		call func(ctx context.Context, name, count string) error
	}{
		{"Semaphore.Release(1)", func(ctx context.Context, name, count string) error {
			s := mustSem(t, c, name)
			node.Do(t, "SET", s.Key(), count)
			return s.Release(ctx, 1)
		}},
		{"Semaphore.AddPermits(-1)", func(ctx context.Context, name, count string) error {
			s := mustSem(t, c, name)
			node.Do(t, "SET", s.Key(), count)
			_, err := s.AddPermits(ctx, -1)
			return err
		}},
		{"Semaphore.TryAcquire(1)", func(ctx context.Context, name, count string) error {
			s := mustSem(t, c, name)
			node.Do(t, "SET", s.Key(), count)
			return s.TryAcquire(ctx, 1, 0)
		}},
		{"PermitSemaphore.AddPermits(1)", func(ctx context.Context, name, count string) error {
			p := mustPermits(t, c, name)
			node.Do(t, "SET", p.Key(), count)
			_, err := p.AddPermits(ctx, 1)
			return err
		}},
		{"CountDownLatch.CountDown", func(ctx context.Context, name, count string) error {
			l := mustLatch(t, c, name)
			node.Do(t, "SET", l.Key(), count)
			return l.CountDown(ctx)
		}},
	}
	for i, call := range calls {
		for _, count := range []string{"9223372036854775807", "-9223372036854775808", "1.152921504606847e+18"} {
			node.Do(t, "FLUSHALL")
			name := fmt.Sprintf("refused-%d", i)
			err := call.call(ctx, name, count)
			if err == nil {
				continue
			}
			// Only the count, as it was set, is left.
			if keys := dumpKeys(t, node); dbsize(t, node) != 1 || !strings.HasSuffix(keys, fmt.Sprintf(" string %q; ", []string{count})) {
				t.Errorf("%s on a count of %s failed (%v) and left %s", call.name, count, err, keys)
			}
		}
	}
}
