package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The give-back of a DrainPermits of unknown outcome that finds another kind
// of lock on the name cannot give the drained permits back: the log says so
// with their number, which the drain's record holds, not as 0 permits.
func TestSemaphoreDrainUndoOtherKindLogsPermits(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	logs := &logSink{}
	c := newTestClient(t, node.Client(t), WithLogger(slog.New(logs)))
	ctx := testCtx(t, 10*time.Second)
	s := mustSem(t, c, "drain-undo-other-kind")
	if _, err := s.AddPermits(ctx, 5); err != nil {
		t.Fatal(err)
	}
	record := s.latch()
	if _, err := generated.RecordReserveStrict(ctx, c.rc, record, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n, err := generated.SemaphoreDrain(ctx, c.rc, s.key, record, s.deleted, c.recordTTL, time.Millisecond); err != nil || n != 5 {
		t.Fatalf("drain = %d, %v; want 5", n, err)
	}
	// The name taken since by a LeanMutex (a string that is no count).
	if err := node.Do(t, "SET", s.Key(), "someclient:someowner").Error(); err != nil {
		t.Fatal(err)
	}
	if given, err := s.undoOnce(ctx, record, 0); err != nil || given != 0 {
		t.Fatalf("undo = %d, %v; want 0, nil", given, err)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	for _, l := range logs.logs {
		if strings.HasPrefix(l, "WARN semaphore permits lost") {
			if !strings.Contains(l, "permits=5") || !strings.Contains(l, "DrainPermits") {
				t.Errorf("logged %q; want the 5 permits the DrainPermits took", l)
			}
			return
		}
	}
	t.Errorf("no WARN that the permits are lost; logged: %q", logs.logs)
}
