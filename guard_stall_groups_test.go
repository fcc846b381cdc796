package scriptlock

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardStallCountsFromSend: a Cluster client's guarded batch of more
// slots than it sends at once (guardedGroups) sends the later groups once
// earlier ones are answered, each WAIT taking up to its timeout when the
// replicas do not acknowledge. A group is cut off as stalled only when it
// has no reply guardStall past its own WAIT's timeout, counted from when it
// was sent, not from the start of the batch: a later group answered in time
// is no stalled call.
func TestGuardStallCountsFromSend(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	rc := cl.Client(t)
	c := newTestClient(t, rc)
	// Six rounds of groups, each WAIT running out its 300 ms: the batch
	// takes 1.8 s, past the 1.3 s after which a call sent at its start is
	// stalled, while each group has a second to spare on a loaded machine.
	c.guardStall = time.Second
	const timeout = 300 * time.Millisecond // every WAIT runs out: no replicas
	var calls []guardedCall
	slots := map[uint16]bool{}
	prefix := redistest.Prefix(t)
	for i := 0; len(calls) < 6*guardedGroups; i++ {
		key := fmt.Sprintf("%s:{g%d}", prefix, i)
		build := func() (rueidis.Completed, error) { return rc.B().Set().Key(key).Value("v").Build(), nil }
		cmd, _ := build()
		if slots[cmd.Slot()] {
			continue
		}
		slots[cmd.Slot()] = true
		calls = append(calls, guardedCall{build: build, acks: 1})
	}
	ctx := testCtx(t, 30*time.Second)
	start := time.Now()
	out := c.sendGuardedBatch(ctx, timeout, calls)
	t.Logf("batch of %d slots answered in %v", len(calls), time.Since(start).Round(time.Millisecond))
	stalled := 0
	for i, r := range out {
		if err := r.reply.Error(); err != nil {
			if errors.Is(err, errGuardStalled) {
				stalled++
				continue
			}
			t.Errorf("call %d: %v", i, err)
		}
	}
	if stalled > 0 {
		t.Fatalf("%d of %d calls cut off as stalled though each group's WAIT answered within its timeout: %v", stalled, len(calls), errGuardStalled)
	}
}
