package scriptlock

import (
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUnknownRecordsManyOwnersLinear: a watchdog round of many holds
// without a token (unfenced LeanMutexes, each of an owner of its own) whose
// connection breaks records a call of unknown outcome for every owner, under
// the lock every Lock and Unlock of the Client takes. Each record swept the
// whole record: a round of tens of thousands of holds kept that lock for
// seconds, and the holds' renewals behind it.
func TestUnknownRecordsManyOwnersLinear(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	const owners = 20000
	ids := make([]holdKey, owners)
	for i := range ids {
		ids[i] = holdID("lean", "owner-"+strconv.Itoa(i))
	}
	start := time.Now()
	for _, id := range ids {
		c.unknownSent(nil, id, 30*time.Second, start.Add(30*time.Second))
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("recording %d calls of unknown outcome took %s", owners, took)
	}
}

// TestUnknownRecordsGoAfterTheirMinute: the records of calls of unknown
// outcome go once their minute has run out, whether or not their owners
// lock again (an owner per request never does): they stayed until another
// call of unknown outcome came, for good after the last.
func TestUnknownRecordsGoAfterTheirMinute(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	c.unknownKeepFor = 100 * time.Millisecond
	for i := range 100 {
		c.unknownSent(nil, holdID("lean", "owner-"+strconv.Itoa(i)), 30*time.Second, time.Now().Add(30*time.Second))
	}
	time.Sleep(200 * time.Millisecond)
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "unknown-records-go")
	for range 20 { // the Client's locks go on
		lctx, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	left := len(c.unsent)
	c.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d records of calls of unknown outcome kept past their time", left)
	}
}
