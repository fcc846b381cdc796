package scriptlock

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A retryable call (a read, here GET) the Client queues on the connection it
// shares (withoutDeadline: a background undo's reads; cancelAfter: a count)
// is never handed back to rueidis's pool of commands once answered: rueidis
// makes such a call again after its connection broke while the old
// connection's writer may still be copying it out, and a command built next
// from the pool reused its memory under that writer's reads (a data race the
// race detector reported when connections dropped during a wait,
// TestResubscribedManyTimesLeavesNothing). The same GET sent as an
// uncontended Lock's calls are is pooled as before: the check that the pool
// does hand answered commands back, so that the first half can fail.
func TestRetryableCallsKeptWhole(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 30*time.Second)
	mem := func(cmd rueidis.Completed) *string { return unsafe.SliceData(cmd.Commands()) }
	get := func() rueidis.Completed { return c.rc.B().Get().Key("kept").Build() }
	reused := func(ctx context.Context, multi bool) int {
		n := 0
		for range 200 {
			sent := get()
			// Read before the call: once answered, a pooled command's
			// memory may be another goroutine's (a command being built
			// for another test), and reading it then is a data race.
			at := mem(sent)
			if multi {
				for _, r := range c.rc.DoMulti(ctx, sent, get()) {
					if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
						t.Fatal(err)
					}
				}
			} else if err := c.rc.Do(ctx, sent).Error(); err != nil && !rueidis.IsRedisNil(err) {
				t.Fatal(err)
			}
			if mem(get()) == at {
				n++
			}
		}
		return n
	}
	counted, cancel := cancelAfter(ctx, time.Minute)
	defer cancel()
	for _, multi := range []bool{false, true} {
		for name, ctx := range map[string]context.Context{"undo": withoutDeadline(ctx), "count": counted} {
			if n := reused(ctx, multi); n != 0 {
				t.Errorf("%s, multi %v: a GET answered was built again in the same memory %d times of 200", name, multi, n)
			}
		}
		if n := reused(ctx, multi); n == 0 {
			t.Errorf("multi %v: no GET sent as a Lock's calls are was built again in the same memory in 200 (the pool hands none back: the check above cannot fail)", multi)
		}
	}
}
