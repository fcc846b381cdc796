package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A give-back of an acquisition of unknown outcome onto a count INCRBY
// refuses (past 2^63 - 1 with the permits given back, or not an integer, as
// Redisson's addPermits writes a sum of 10^17 or more) fails with nothing changed,
// so that a later attempt can still give the permits back: its record was
// marked given back before the count was refused, and the permits were
// lost for good.
func TestSemaphoreUndoCountRefusedChangesNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	for _, count := range []string{"9223372036854775807", "1.152921504606847e+18"} {
		node.Do(t, "FLUSHALL")
		s := mustSem(t, c, "undo-refused")
		record := s.latch()
		// An acquisition of 2 permits, recorded with no Delete since.
		node.Do(t, "SET", record, "2:", "PX", "60000")
		node.Do(t, "SET", s.Key(), count)
		before := dumpKeys(t, node)
		given, err := s.undoOnce(ctx, record, 2)
		if after := dumpKeys(t, node); after != before {
			t.Errorf("give-back onto a count of %s (%d, %v) changed\n%s\ninto\n%s", count, given, err, before, after)
		}
	}
}
