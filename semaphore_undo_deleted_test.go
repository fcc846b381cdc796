package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The undo of a Semaphore acquisition whose reply was lost, reaching Redis
// only after the semaphore was deleted and set again, gives nothing back:
// the permits the attempt took were the deleted semaphore's. It found the
// attempt's record, which Delete leaves to expire, and added them to the new
// count, so more callers than permits set could hold it at once.
func TestSemaphoreUndoAfterDeleteAndSetAgain(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "reset")
	other := mustSem(t, direct, "reset")
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil || s.Release(ctx, 1) != nil { // script loaded
		t.Fatalf("warm-up: %v", err)
	}
	p.px.FreezeReplies()
	res := make(chan error, 1)
	go func() { res <- s.TryAcquire(ctx, 2, 0) }()
	if !eventually(3*time.Second, func() bool { return countAt(t, p.node, s.Key()) == 1 }) {
		p.px.Thaw()
		t.Fatal("the acquisition did not reach the server")
	}
	p.px.Refuse() // the reply is lost, and the undo cannot reach Redis until Thaw
	if err := <-res; err == nil {
		t.Fatal("TryAcquire whose reply was lost succeeded")
	}
	// Meanwhile the semaphore is deleted and set again, with 3 permits.
	if ok, err := other.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if ok, err := other.TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	p.px.Thaw()
	// The undo gets through within its back-off (at most a second apart)
	// and marks the attempt's record undone.
	rc := p.node.Client(t)
	undone := func() bool {
		keys, err := rc.Do(ctx, rc.B().Keys().Pattern("*redisson_sc_latch:*").Build()).AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if v, _ := rc.Do(ctx, rc.B().Get().Key(k).Build()).ToString(); strings.HasPrefix(v, "undone") {
				return true
			}
		}
		return false
	}
	if !eventually(5*time.Second, undone) {
		t.Fatal("the attempt's record was not marked undone 5s after Redis could be reached again")
	}
	if n := countAt(t, p.node, s.Key()); n != 3 {
		t.Fatalf("count after the late undo: %d, want the 3 permits set again", n)
	}
}

// The same for permits a DrainPermits took: under the failover guard, a
// drain no replica acknowledged gives them back through its record, in the
// background while Redis cannot be reached. Reaching it after the semaphore
// was deleted and set again, that give-back added the deleted count's
// permits to the new one.
func TestSemaphoreDrainGiveBackAfterDeleteAndSetAgain(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "drain-reset")
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if v, err := s.DrainPermits(ctx); err != nil || v != 3 {
		t.Fatalf("DrainPermits = %d, %v; want 3", v, err)
	}
	// The drain's record, which its give-back goes through.
	var record string
	keys, err := node.Do(t, "KEYS", "redisson_sc_latch:*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, s.key) && !strings.Contains(k, ":set:") {
			record = k
		}
	}
	if record == "" {
		t.Fatalf("no drain record among %q", keys)
	}
	if ok, err := s.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if ok, err := s.TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := s.undoOnce(ctx, record, 3); err != nil {
		t.Fatal(err)
	}
	if n := countAt(t, node, s.Key()); n != 3 {
		t.Fatalf("count after the drain's late give-back: %d, want the 3 permits set again", n)
	}
}

// A drain made again after its reply was lost renews its record, so that
// the failover guard's WAIT sent with the repeat covers the drain. The
// record then outlived the mark a Delete made between the two left, and the
// drain's give-back, reaching Redis after that mark expired, found no mark
// and added the deleted count's permits to the count set since.
func TestSemaphoreDrainRepeatKeepsDeleteMark(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	// Each step is placed by clock reads taken around the calls before it,
	// not by sleeps added to them: on a loaded machine those calls take
	// hundreds of milliseconds, and the drain's first record expired
	// before the repeat, which then failed with LATE.
	c.recordTTL = 4 * time.Second
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "drain-repeat-reset")
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	record := c.recordKey("redisson_sc_latch", s.key)
	if _, err := generated.RecordReserveStrict(ctx, c.rc, record, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	drain := func() {
		t.Helper()
		if v, err := generated.SemaphoreDrain(ctx, c.rc, s.key, record, s.deleted, c.recordTTL, time.Millisecond); err != nil || v != 3 {
			t.Fatalf("drain: %d, %v; want 3", v, err)
		}
	}
	drained := time.Now() // the first drain's record lives recordTTL from after this
	drain()               // its reply lost
	if ok, err := s.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	deleted := time.Now() // the Delete's mark, as it left it, is gone recordTTL from this
	if ok, err := s.TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	// The repeat, which renews the record: half way through the first
	// record's life, which leaves the other half for getting there.
	time.Sleep(time.Until(drained.Add(c.recordTTL / 2)))
	drain()
	// The give-back, late: once the Delete's mark, as the Delete left it,
	// has expired, and while the repeat's record lives (recordTTL from
	// the repeat, about half a record's life from now).
	time.Sleep(time.Until(deleted.Add(c.recordTTL + 100*time.Millisecond)))
	if !exists(t, node, record) {
		t.Fatal("the drain's record expired: the test lost its timing")
	}
	if _, err := s.undoOnce(ctx, record, 3); err != nil {
		t.Fatal(err)
	}
	if n := countAt(t, node, s.Key()); n != 3 {
		t.Fatalf("count after the drain's late give-back: %d, want the 3 permits set again", n)
	}
}

// The undo of an acquisition whose reply was lost, reaching Redis after the
// count it took permits from was deleted by Redisson (whose delete leaves no
// mark) or ran out its TTL (Redisson's trySetPermits(n, ttl)), and before
// any count was set again, gives nothing back. It made a new count of the
// permits it gave back, without a TTL: a semaphore nobody set, on which a
// TrySetPermits, Java's included, then set nothing.
func TestSemaphoreUndoAfterCountGone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		gone func(t *testing.T, node *redistest.Node, key string)
	}{
		{"RedissonDelete", func(t *testing.T, node *redistest.Node, key string) {
			node.Do(t, "DEL", key)
		}},
		{"TTLRanOut", func(t *testing.T, node *redistest.Node, key string) {
			node.Do(t, "PEXPIRE", key, "1")
			if !eventually(time.Second, func() bool { return !exists(t, node, key) }) {
				t.Fatal("the count did not expire")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t))
			ctx := testCtx(t, 20*time.Second)
			s := mustSem(t, c, "gone")
			if _, err := s.TrySetPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			// The attempt, whose reply is lost.
			latch := s.latch()
			if res, err := generated.SemaphoreAcquire(ctx, c.rc, s.key, latch, s.deleted, 2, c.recordTTL); err != nil || res.Ok != 1 {
				t.Fatalf("acquisition to undo: %+v, %v", res, err)
			}
			tc.gone(t, node, s.Key())
			if given, err := s.undoOnce(ctx, latch, 2); err != nil || given != 0 {
				t.Fatalf("undo = %d, %v; want 0, nil (the permits went with the count)", given, err)
			}
			if exists(t, node, s.Key()) {
				t.Fatalf("the undo set a count of %d nobody set", countAt(t, node, s.Key()))
			}
			if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
				t.Fatalf("TrySetPermits after the undo = %v, %v; want true", ok, err)
			}
			// Made again, the undo still gives nothing.
			if given, err := s.undoOnce(ctx, latch, 2); err != nil || given != 0 {
				t.Fatalf("repeated undo = %d, %v; want 0, nil", given, err)
			}
			if n := countAt(t, node, s.Key()); n != 5 {
				t.Fatalf("count = %d, want the 5 permits set", n)
			}
		})
	}
}

// A guarded DrainPermits no replica acknowledged gives its permits back;
// when the semaphore was deleted between the drain and its give-back, the
// give-back gives nothing (the permits went with the deleted count), and the
// error says so. It said the permits were given back.
func TestSemaphoreDrainGiveBackAfterDeleteTold(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, time.Second))
	other := newTestClient(t, primary.Client(t), WithKeyPrefix(c.cfg.prefix), WithFailoverGuard(false, 0))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "drain-deleted")
	o := mustSem(t, other, "drain-deleted")
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Delete(ctx); err != nil { // script loaded
		t.Fatal(err)
	}
	// The drain's script loaded too: a first drain answered NOSCRIPT goes
	// out again with what is left of the guard's second for its WAIT, and
	// its give-back could come before the Delete below.
	if _, err := mustSem(t, c, "drain-deleted-load").DrainPermits(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	replica.Pause()
	defer replica.Resume()
	type result struct {
		v   int64
		err error
	}
	res := make(chan result, 1)
	go func() {
		v, err := s.DrainPermits(ctx)
		res <- result{v, err}
	}()
	if !eventually(3*time.Second, func() bool { return countAt(t, primary, s.Key()) == 0 }) {
		t.Fatal("the drain did not reach the server")
	}
	// While the drain waits for a replica, the semaphore is deleted.
	if ok, err := o.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	r := <-res
	if !errors.Is(r.err, ErrNotReplicated) {
		t.Fatalf("DrainPermits = %d, %v; want ErrNotReplicated", r.v, r.err)
	}
	if exists(t, primary, s.Key()) {
		t.Fatalf("the give-back set a count of %d after the Delete", countAt(t, primary, s.Key()))
	}
	if msg := r.err.Error(); strings.Contains(msg, "given back") || !strings.Contains(msg, "deleted") {
		t.Fatalf("the error does not tell that the permits went with the deleted semaphore: %v", r.err)
	}
}
