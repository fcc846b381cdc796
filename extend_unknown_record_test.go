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
	node := redistest.Server(t)
	const owners = 20000
	ids := make([]holdKey, owners)
	for i := range ids {
		ids[i] = holdID("lean", "owner-"+strconv.Itoa(i))
	}
	// The best of three rounds, each on a Client of its own: a loaded
	// machine stalls one now and then, while a record that sweeps itself at
	// every call is slow in every round. A loaded race run took over a
	// second a round; sweeping, a round takes tens of seconds.
	var took []time.Duration
	for range 3 {
		c := newTestClient(t, node.Client(t))
		start := time.Now()
		for _, id := range ids {
			c.unknownSent(nil, id, 30*time.Second, start.Add(30*time.Second))
		}
		took = append(took, time.Since(start))
		if took[len(took)-1] <= 3*time.Second {
			return
		}
	}
	t.Fatalf("recording %d calls of unknown outcome took %v", owners, took)
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

// TestUnknownRecordRunOutNotMerged: an owner's record of a call of unknown
// outcome whose minute has run out, not yet removed (the records are
// removed a few at a time, older ones first), bounds nothing: a later call
// of unknown outcome of that owner records its own lease, not the shorter
// one of the record run out, which its next hold would otherwise count with
// (a loss deadline far short of what any call in flight may set).
func TestUnknownRecordRunOutNotMerged(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 20*time.Second)
	l := mustLean(t, c, "unknown-record-run-out")
	const owner = "owner-run-out"
	lctx, err := l.Lock(WithOwner(ctx, owner))
	if err != nil {
		t.Fatal(err)
	}
	h := lctx.Value(lockCtxKey{}).(*lockCtx).hold
	id := holdID(h.key, h.field)
	if err := l.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.unknownKeepFor = 100 * time.Millisecond
	c.mu.Unlock()
	for i := range unsentPrune { // older records, removed first
		c.unknownSent(nil, holdID("lean", "other-"+strconv.Itoa(i)), 30*time.Second, time.Now().Add(30*time.Second))
	}
	c.unknownSent(nil, id, time.Second, time.Now().Add(time.Second))
	time.Sleep(200 * time.Millisecond)
	c.mu.Lock()
	c.unknownKeepFor = time.Minute
	c.mu.Unlock()
	const lease = 30 * time.Second
	c.unknownSent(nil, id, lease, time.Now().Add(lease))
	start := time.Now()
	next, err := l.Lock(WithOwner(ctx, owner))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Unlock(next) }()
	nh := next.Value(lockCtxKey{}).(*lockCtx).hold
	nh.mu.Lock()
	bound := nh.unknownLease
	nh.mu.Unlock()
	if bound != lease {
		t.Fatalf("the owner's next hold counts with a lease of %s of unknown outcome, not %s: a record run out was merged into the owner's new one", bound, lease)
	}
	if lossAt := monoTime(nh.lossAt.Load()); lossAt.Before(start.Add(lease / 2)) {
		t.Fatalf("loss deadline %s after the grant, a lease run out's, not the last call's (%s)", lossAt.Sub(start), lease)
	}
}
