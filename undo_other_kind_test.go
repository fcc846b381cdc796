package scriptlock

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The undo of a semaphore acquisition of unknown outcome that took permits,
// once another kind of lock has taken the name, fails before it writes
// anything: the record is not marked undone, so a later try cannot report
// the permits given back. The Client stops trying and logs a warning naming
// the semaphore and the permits.
func TestUndoOnOtherKind(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	var logs syncBuffer
	c := newTestClient(t, rc, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testCtx(t, 20*time.Second)
	warned := func(name string, n int) bool {
		return strings.Contains(logs.String(), "another kind of lock now uses the name") &&
			strings.Contains(logs.String(), fmt.Sprintf("semaphore=%s ", name)) &&
			strings.Contains(logs.String(), fmt.Sprintf("permits=%d ", n))
	}

	s := mustSem(t, c, "sem")
	latch := s.latch()
	node.Do(t, "SET", latch, "2") // the attempt took 2 permits
	node.Do(t, "HSET", s.key, "owner", "1")
	if _, err := generated.SemaphoreUndo(ctx, rc, s.key, s.channel, latch, s.deleted, c.recordTTL, "publish"); err == nil {
		t.Error("SemaphoreUndo on a hash succeeded")
	}
	if v, _ := node.Do(t, "GET", latch).ToString(); v != "2" {
		t.Errorf("SemaphoreUndo that failed left the record %q, want it unmarked", v)
	}
	s.undoLater(latch, 2, time.Now())
	if !eventually(3*time.Second, func() bool { return warned("sem", 2) }) {
		t.Errorf("no warning naming the semaphore and its permits; log:\n%s", logs.String())
	}

	ps := mustPermits(t, c, "permits")
	record := c.recordKey("redisson_sc_latch", ps.key)
	wire, _ := permitWire(randomID())
	node.Do(t, "ZADD", ps.timeouts, strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10), string(wire))
	node.Do(t, "SET", ps.key, "owner") // a LeanMutex's owner
	if _, err := generated.PermitUndo(ctx, rc, ps.key, ps.timeouts, ps.channel, record, wire, "publish", c.recordTTL); err == nil {
		t.Error("PermitUndo on a LeanMutex's key succeeded")
	}
	if n, _ := node.Do(t, "EXISTS", record).AsInt64(); n != 0 {
		t.Error("PermitUndo that failed marked the record")
	}
	if n, _ := node.Do(t, "ZCARD", ps.timeouts).AsInt64(); n != 1 {
		t.Errorf("PermitUndo that failed removed the permit: %d left", n)
	}
	ps.undoLater(wire, record, time.Second)
	if !eventually(3*time.Second, func() bool { return warned("permits", 1) }) {
		t.Errorf("no warning naming the permit semaphore; log:\n%s", logs.String())
	}
}
