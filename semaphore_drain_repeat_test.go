package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A drain made again after its reply was lost answers what the first
// attempt answered, whatever count it drained: a count Redisson's addPermits
// wrote as a float (its sums of 10^17 or more either way are) was recorded
// as it was, and a negative one, "-1e+17", read back from the record as -1.
func TestSemaphoreDrainRepeatAnswersAsFirst(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	for _, count := range []string{"-1e+17", "-1.2345678901234568e+17", "-9223372036854775808", "-5", "0",
		"1.152921504606847e+18", "9223372036854775807", "7"} {
		s := mustSem(t, c, "drain-repeat"+count)
		node.Do(t, "SET", s.Key(), count)
		record := s.latch()
		if _, err := generated.RecordReserveStrict(ctx, c.rc, record, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		first, err := generated.SemaphoreDrain(ctx, c.rc, s.key, record, s.deleted, c.recordTTL, time.Millisecond)
		if err != nil {
			t.Fatalf("drain of %s: %v", count, err)
		}
		again, err := generated.SemaphoreDrain(ctx, c.rc, s.key, record, s.deleted, c.recordTTL, time.Millisecond)
		if err != nil || again != first {
			t.Errorf("drain of a count of %s answered %d, its repeat %d, %v", count, first, again, err)
		}
	}
}
