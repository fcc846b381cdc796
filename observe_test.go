package scriptlock

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// recorder is an Observer that keeps every event.
type recorder struct {
	mu       sync.Mutex
	acquires []acquireRec
	releases []releaseRec
	ends     []endRec
	renewals []RenewalEvent
	guards   []GuardEvent
	// watch, when set, is a lock context whose state HoldEnd records
	// (endRec.watchDone).
	watch context.Context
}

type acquireRec struct {
	op Op
	e  AcquireEvent
	// started is the value AcquireStart put in the context AcquireEnd got.
	started bool
}
type releaseRec struct {
	op      Op
	e       ReleaseEvent
	started bool
}
type endRec struct {
	op     Op
	e      HoldEvent
	caller any       // the caller's marker value, seen through the hold's context
	at     time.Time // when HoldEnd was called (after the hold's contexts ended)
	// watchDone: the recorder's watch context had ended when HoldEnd was
	// called.
	watchDone bool
}

type startedKey struct{}
type callerKey struct{}

func (r *recorder) AcquireStart(ctx context.Context, op Op) context.Context {
	return context.WithValue(ctx, startedKey{}, true)
}
func (r *recorder) AcquireEnd(ctx context.Context, op Op, e AcquireEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acquires = append(r.acquires, acquireRec{op, e, ctx.Value(startedKey{}) == true})
}
func (r *recorder) ReleaseStart(ctx context.Context, op Op) context.Context {
	return context.WithValue(ctx, startedKey{}, true)
}
func (r *recorder) ReleaseEnd(ctx context.Context, op Op, e ReleaseEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.releases = append(r.releases, releaseRec{op, e, ctx.Value(startedKey{}) == true})
}
func (r *recorder) HoldEnd(ctx context.Context, op Op, e HoldEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	watchDone := r.watch != nil && r.watch.Err() != nil
	r.ends = append(r.ends, endRec{op, e, ctx.Value(callerKey{}), time.Now(), watchDone})
}
func (r *recorder) Renewal(e RenewalEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renewals = append(r.renewals, e)
}
func (r *recorder) Guard(e GuardEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.guards = append(r.guards, e)
}

func (r *recorder) take() (a []acquireRec, rel []releaseRec, ends []endRec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, rel, ends = r.acquires, r.releases, r.ends
	r.acquires, r.releases, r.ends = nil, nil, nil
	return
}

func (r *recorder) waitEnds(t *testing.T, n int) []endRec {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		got := len(r.ends)
		r.mu.Unlock()
		if got >= n {
			r.mu.Lock()
			ends := r.ends
			r.ends = nil
			r.mu.Unlock()
			return ends
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d hold ends within 20s, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestObserverAcquireOutcomes(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rec := &recorder{}
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix, WithObserver(rec), WithWatchdog(time.Second, 100*time.Millisecond))
	other := newTestClient(t, node.Client(t), prefix)
	ctx := context.WithValue(testCtx(t, 30*time.Second), callerKey{}, "request-1")
	m := mustMutex(t, c, "obs")

	// Acquired, re-entered, two Unlocks, one hold end.
	l1, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := Fence(l1)
	l2, err := m.Lock(l1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l2); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l1); err != nil {
		t.Fatal(err)
	}
	ends := rec.waitEnds(t, 1)
	acq, rel, _ := rec.take()
	if len(acq) != 2 || acq[0].e.Outcome != Acquired || acq[1].e.Outcome != Reentered {
		t.Fatalf("acquires %+v, want acquired then reentered", acq)
	}
	if a := acq[0]; a.op != (Op{PrimitiveMutex, "obs"}) || a.e.Token != token || a.e.Attempts != 1 || !a.started || a.e.Err != nil {
		t.Errorf("first acquire %+v (token %d)", a, token)
	}
	if len(rel) != 2 || rel[0].e.Err != nil || !rel[0].started {
		t.Errorf("releases %+v", rel)
	}
	if len(ends) != 1 || ends[0].e.Cause != EndUnlocked || ends[0].caller != "request-1" || ends[0].e.Held <= 0 {
		t.Errorf("hold ends %+v", ends)
	}

	// Contended (TryLock gives up), then a waiter woken by the release
	// message, then a caller whose deadline passes.
	holder := mustMutex(t, c, "obs2")
	hl, err := holder.Lock(WithOwner(ctx, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.TryLock(WithOwner(ctx, "b"), 50*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock: %v", err)
	}
	tctx, cancel := context.WithTimeout(WithOwner(ctx, "c"), 100*time.Millisecond)
	if _, err := holder.Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock past deadline: %v", err)
	}
	cancel()
	got := make(chan error, 1)
	go func() {
		l, err := holder.Lock(WithOwner(ctx, "d"))
		if err == nil {
			err = holder.Unlock(l)
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := holder.Unlock(hl); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	rec.waitEnds(t, 2)
	acq, _, _ = rec.take()
	outcomes := map[AcquireOutcome]AcquireEvent{}
	for _, a := range acq {
		outcomes[a.e.Outcome] = a.e
	}
	if e, ok := outcomes[Contended]; !ok || e.Err != nil || e.Wait < 50*time.Millisecond {
		t.Errorf("contended: %+v (all %+v)", e, acq)
	}
	if e, ok := outcomes[TimedOut]; !ok || !errors.Is(e.Err, context.DeadlineExceeded) {
		t.Errorf("timed out: %+v", e)
	}
	if len(acq) != 4 {
		t.Fatalf("acquires %+v", acq)
	}
	// Two attempts: the one refused and the one after the wake-up (the
	// subscription of the waits before is still open, so no attempt is
	// needed right after subscribing).
	if e := acq[3].e; e.Outcome != Acquired || e.Wakeups < 1 || e.Attempts < 2 || e.Wait < 150*time.Millisecond {
		t.Errorf("woken waiter: %+v, want acquired after a wake-up and >= 2 attempts", e)
	}

	// Lost: the key is deleted behind the holder's back; the watchdog
	// (renewing every 100 ms) reports it within its next round.
	lost := mustMutex(t, c, "obs3")
	if _, err := lost.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := mustMutex(t, other, "obs3").ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock: %v %v", ok, err)
	}
	ends = rec.waitEnds(t, 1)
	if ends[0].e.Cause != EndLost || !errors.Is(ends[0].e.Err, ErrLockLost) || ends[0].caller != "request-1" {
		t.Errorf("lost: %+v", ends[0])
	}
	rec.mu.Lock()
	var renewed, lostN int
	for _, r := range rec.renewals {
		renewed += r.Renewed
		lostN += r.Lost
		if r.Batch != r.Renewed+r.Lost+r.Failed && r.Batch < r.Renewed+r.Lost+r.Failed {
			t.Errorf("renewal %+v does not add up", r)
		}
	}
	rec.mu.Unlock()
	if lostN != 1 {
		t.Errorf("renewals reported %d lost, want 1", lostN)
	}

	// Expired explicit lease; then a hold ended by Close.
	if _, err := mustMutex(t, c, "obs4").LockWithLease(ctx, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ends = rec.waitEnds(t, 1)
	if ends[0].e.Cause != EndExpired {
		t.Errorf("expired: %+v", ends[0])
	}
	rw := mustRW(t, c, "obs5")
	if _, err := rw.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	acq, _, _ = rec.take()
	if len(acq) != 3 || acq[2].op != (Op{PrimitiveRWRead, "obs5"}) || acq[2].e.Outcome != Acquired {
		t.Errorf("RLock reported as %+v", acq)
	}
	c.Close()
	ends = rec.waitEnds(t, 1)
	if ends[0].e.Cause != EndClosed || ends[0].op.Primitive != PrimitiveRWRead {
		t.Errorf("closed: %+v", ends[0])
	}
}

func TestObserverFailoverGuard(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	rec := &recorder{}
	c := newTestClient(t, primary.Client(t), WithObserver(rec), WithFailoverGuard(true, time.Second))
	ctx := testCtx(t, 20*time.Second)
	if _, err := mustMutex(t, c, "guarded").Lock(ctx); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.guards) != 1 || !rec.guards[0].Acknowledged || rec.guards[0].Duration <= 0 {
		t.Errorf("guard events %+v, want one acknowledged", rec.guards)
	}
}

func TestObserverSemaphores(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rec := &recorder{}
	c := newTestClient(t, node.Client(t), WithObserver(rec))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "sem")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.TryAcquire(ctx, 1, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryAcquire on an empty semaphore: %v", err)
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	p := mustPermits(t, c, "permits")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, id); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("second Release: %v", err)
	}
	acq, rel, ends := rec.take()
	want := []struct {
		p Primitive
		o AcquireOutcome
	}{{PrimitiveSemaphore, Acquired}, {PrimitiveSemaphore, Contended}, {PrimitivePermitSemaphore, Acquired}}
	if len(acq) != len(want) {
		t.Fatalf("acquires %+v", acq)
	}
	for i, w := range want {
		if acq[i].op.Primitive != w.p || acq[i].e.Outcome != w.o || acq[i].e.Attempts < 1 || !acq[i].started {
			t.Errorf("acquire %d: %+v, want %s %s", i, acq[i], w.p, w.o)
		}
	}
	if len(rel) != 3 || rel[0].e.Err != nil || rel[1].e.Err != nil || !errors.Is(rel[2].e.Err, ErrNotHeld) {
		t.Errorf("releases %+v", rel)
	}
	if len(ends) != 0 {
		t.Errorf("semaphore permits reported hold ends: %+v", ends)
	}
}

// A renewed hold whose renewals cannot be confirmed ends at its loss deadline:
// that is a loss, not the expiry of an explicit lease.
func TestObserverUnconfirmedRenewalIsLost(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rec := &recorder{}
	const lease = 15 * time.Second
	c := newTestClient(t, node.Client(t), WithObserver(rec), WithWatchdog(lease, time.Second))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "unconfirmed")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	rec.watch = lctx
	rec.mu.Unlock()
	// The server goes away right after a renewal is seen on it: the lease
	// that renewal set runs out 15 s after it ran, no later than when it was
	// seen; the hold must end before that. The loss deadline keeps 2 % of
	// the lease for clock drift (300 ms here): a longer lease leaves a timer
	// a loaded machine fires late the room to do so (with 8 s, 160 ms, a
	// loaded CI run ended the hold 8.11 s after the renewal was seen).
	raw := node.Client(t)
	pttl := func() int64 {
		v, err := raw.Do(ctx, raw.B().Pttl().Key(m.key).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for prev := pttl(); ; {
		time.Sleep(5 * time.Millisecond)
		cur := pttl()
		if cur > prev {
			break
		}
		prev = cur
	}
	start := time.Now()
	node.Kill()
	ends := rec.waitEnds(t, 1)
	if e := ends[0].e; e.Cause != EndLost || !errors.Is(e.Err, ErrLockLost) {
		t.Errorf("hold end %+v, want lost", e)
	}
	// What the caller sees is its lock context: it had ended when HoldEnd
	// was called, so the bound below on HoldEnd's call bounds it too.
	if !ends[0].watchDone {
		t.Error("lock context still live when HoldEnd was called")
	}
	// The hold ends before the server's lease can run out: timed when
	// HoldEnd was called, which is after the hold's contexts ended, not
	// when waitEnds, sleeping between looks, saw it (on a loaded machine
	// that was up to tens of milliseconds later).
	if took := ends[0].at.Sub(start); took > lease {
		t.Errorf("hold ended %v after its last renewal was seen, want within the %s lease", took, lease)
	}
	if lctx.Err() == nil {
		t.Error("lock context still live after the hold ended")
	}
}

// panicky is an Observer whose AcquireEnd or ReleaseStart panics, as a
// faulty exporter might.
type panicky struct {
	NopObserver
	acquireEnd, releaseStart atomic.Bool
}

func (p *panicky) AcquireEnd(context.Context, Op, AcquireEvent) {
	if p.acquireEnd.Load() {
		panic("observer: AcquireEnd")
	}
}

func (p *panicky) ReleaseStart(ctx context.Context, _ Op) context.Context {
	if p.releaseStart.Load() {
		panic("observer: ReleaseStart")
	}
	return ctx
}

// An Observer that panics (and a caller that recovers, as net/http does)
// must not leave a lock held: a grant whose AcquireEnd panicked never reaches
// the caller and is given back; an Unlock whose ReleaseStart panicked still
// releases.
func TestObserverPanicLeavesNothingHeld(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs := &panicky{}
	c := newTestClient(t, node.Client(t), WithObserver(obs))
	ctx := testCtx(t, 20*time.Second)
	recovered := func(f func()) (r any) {
		defer func() { r = recover() }()
		f()
		return nil
	}
	m := mustMutex(t, c, "obs-panic")
	obs.acquireEnd.Store(true)
	if r := recovered(func() { _, _ = m.Lock(ctx) }); r == nil {
		t.Fatal("Lock did not panic with the Observer")
	}
	obs.acquireEnd.Store(false)
	if st, err := m.State(ctx); err != nil || st.Locked {
		t.Errorf("lock after the panicking AcquireEnd: %+v, %v; want it given back", st, err)
	}
	s := mustSem(t, c, "obs-panic-sem")
	if ok, err := s.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	obs.acquireEnd.Store(true)
	if r := recovered(func() { _ = s.Acquire(ctx, 1) }); r == nil {
		t.Fatal("Semaphore.Acquire did not panic with the Observer")
	}
	obs.acquireEnd.Store(false)
	if n, err := s.AvailablePermits(ctx); err != nil || n != 1 {
		t.Errorf("permits after the panicking AcquireEnd: %d, %v; want 1 (given back)", n, err)
	}

	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obs.releaseStart.Store(true)
	if r := recovered(func() { _ = m.Unlock(lctx) }); r == nil {
		t.Fatal("Unlock did not panic with the Observer")
	}
	obs.releaseStart.Store(false)
	if st, err := m.State(ctx); err != nil || st.Locked {
		t.Errorf("lock after the panicking ReleaseStart: %+v, %v; want it released", st, err)
	}
	if lctx.Err() == nil {
		t.Error("lock context still live after its Unlock")
	}
}

// A TryLock whose own wait runs out, on a lock held with a long lease, was
// woken by no fallback timer (no lease ended, no message was lost): its
// event counts no timer wakeup, or the documented check for lost pub/sub
// messages (timer wakeups against all) reads high under plain contention.
func TestObserverTryLockRunOutCountsNoTimer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rec := &recorder{}
	c := newTestClient(t, node.Client(t), WithObserver(rec))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "run-out")
	if _, err := m.Lock(WithOwner(ctx, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.TryLock(WithOwner(ctx, "b"), 200*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock: %v", err)
	}
	acq, _, _ := rec.take()
	if e := acq[len(acq)-1].e; e.Outcome != Contended || e.Timers != 0 {
		t.Fatalf("TryLock that ran out of its own wait: outcome %v, Timers %d; want contended and 0", e.Outcome, e.Timers)
	}
}

// A guarded attempt that is refused (the lock is held) grants nothing the
// guard could undo: whatever its WAIT answers, it is no failover-guard
// outcome, so the not_replicated count means acquisitions undone only.
func TestObserverGuardRefusedAttempt(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	rec := &recorder{}
	prefix := sharedPrefix(t)
	holder := newTestClient(t, primary.Client(t), prefix, WithFailoverGuard(false, 0))
	c := newTestClient(t, primary.Client(t), prefix, WithObserver(rec), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	if _, err := mustMutex(t, holder, "guard-refused").Lock(ctx); err != nil {
		t.Fatal(err)
	}
	replica.Pause()
	defer replica.Resume()
	if _, err := mustMutex(t, c, "guard-refused").TryLock(ctx, 300*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock of a held lock: %v, want ErrNotAcquired", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, g := range rec.guards {
		if !g.Acknowledged {
			t.Fatalf("guard events %+v for refused attempts: a not_replicated wait, though nothing was granted or undone", rec.guards)
		}
	}
}

// Every lease of a renewal round trip is counted once in its RenewalEvent:
// a hold that ended while the round trip was in flight counts as Ended, so
// Renewed + Lost + Failed + Ended = Batch.
func TestRenewalEventCountsAddUp(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rec := &recorder{}
	c := newTestClient(t, node.Client(t), WithObserver(rec), WithWatchdog(2*time.Second, 300*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	var holds []*hold
	for _, name := range []string{"renew-count-a", "renew-count-b"} {
		lctx, err := mustMutex(t, c, name).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		holds = append(holds, lctx.(*lockCtx).hold)
	}
	waitFor(t, 5*time.Second, "holds handed to the watchdog", func() bool { return c.wd.scheduled() == 2 })
	// Hold the renewal round trip in flight while one hold ends.
	node.Pause()
	paused := true
	defer func() {
		if paused {
			node.Resume()
		}
	}()
	waitFor(t, 5*time.Second, "renewal round trip sent", func() bool { return c.wd.scheduled() == 0 })
	c.finish(holds[0], context.Canceled) // as an Unlock would, by another path
	node.Resume()
	paused = false
	// On a loaded machine rounds may have been answered before the pause
	// (their events come first), and the two leases may go out in one round
	// trip or in two: whichever round the ended hold was in counts it as
	// Ended, once, and every event adds up.
	var events []RenewalEvent
	sumOf := func() (sum RenewalEvent) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		events = slices.Clone(rec.renewals)
		for _, e := range events {
			sum.Batch += e.Batch
			sum.Renewed += e.Renewed
			sum.Ended += e.Ended
			sum.Lost += e.Lost
			sum.Failed += e.Failed
		}
		return sum
	}
	deadline := time.Now().Add(5 * time.Second)
	for sumOf().Ended == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // a second count of it would come now
	sum := sumOf()
	for _, e := range events {
		if e.Renewed+e.Lost+e.Failed+e.Ended != e.Batch {
			t.Errorf("renewal event %+v does not add up", e)
		}
	}
	// Whatever the rounds, every lease but the ended hold's was renewed:
	// the other hold, in flight with it, was held and answered.
	if sum.Ended != 1 || sum.Lost != 0 || sum.Failed != 0 || sum.Renewed != sum.Batch-1 {
		sum.Duration = 0
		t.Errorf("%d renewal events, in all %+v; want the hold that ended during its round trip counted as Ended once, every other lease renewed", len(events), sum)
	}
}
