package scriptlock

import (
	"log/slog"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A drain of a count written with leading zeros ("007": only a hand-written
// SET makes one, INCRBY never does) records the permits it took as a count
// INCRBY takes, so that its give-back works: it recorded "007", which
// INCRBY refuses, and the give-back failed for the record's whole life,
// logged as "Redis unreachable".
func TestSemaphoreDrainPaddedCountGivenBack(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	logs := &logSink{}
	c := newTestClient(t, node.Client(t), WithLogger(slog.New(logs)))
	c.recordTTL = 2 * time.Second
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "drain-padded")
	for _, count := range []string{"007", "-0", "-007", "000"} {
		node.Do(t, "SET", s.Key(), count)
		record := s.latch()
		if _, err := generated.RecordReserveStrict(ctx, c.rc, record, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := generated.SemaphoreDrain(ctx, c.rc, s.key, record, s.deleted, c.recordTTL, time.Millisecond); err != nil {
			t.Fatalf("drain of %q: %v", count, err)
		}
		given, err := s.undoOnce(ctx, record, 0)
		if want := map[string]int64{"007": 7}[count]; err != nil || given != want {
			t.Errorf("give-back of a drain of %q = %d, %v; want %d, nil", count, given, err, want)
		}
	}
	// The give-back of the drain as Close's background undo makes it.
	node.Do(t, "SET", s.Key(), "007")
	record := s.latch()
	if _, err := generated.RecordReserveStrict(ctx, c.rc, record, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	if _, err := generated.SemaphoreDrain(ctx, c.rc, s.key, record, s.deleted, c.recordTTL, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	s.undoLater(record, 0, sent)
	deadline := time.Now().Add(10 * time.Second)
	for countAt(t, node, s.Key()) != 7 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := countAt(t, node, s.Key()); n != 7 {
		logs.mu.Lock()
		defer logs.mu.Unlock()
		t.Fatalf("the drain's 7 permits not given back: count %d; logged %q", n, logs.logs)
	}
}
