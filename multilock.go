package scriptlock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MultiLock holds several locks as one, all or nothing, like Redisson's
// RedissonMultiLock. Members may be any Locker (Mutex, FairMutex, RWMutex
// sides, even other MultiLocks or RedLocks) on different cluster slots or
// different Redis deployments: each is acquired through its own handle, never
// in one cross-slot call.
//
// Members are always acquired in the order of their names, so two MultiLocks
// over the same names cannot wait on each other in a cycle. A MultiLock
// given as a member counts as its members, ordered with the others. A
// member that stays held by someone else past the member wait makes the
// attempt fail: the members taken so far are released, the MultiLock backs
// off for a random while, and starts over until ctx (Lock) or the wait
// (TryLock) ends. A
// MultiLock never returns an error (nor lets a member's panic through) while
// holding part of its members, and
// once a member is lost (or released through its own handle) it gives the
// others back on its own.
type MultiLock struct {
	locks      []Locker // sorted by name
	name       string
	memberWait time.Duration
	key        multiKey // what its lock contexts carry their hold under
	err        error    // an invalid option, while NewMultiLock runs
	// unlockHook, when set (by tests only, on their own MultiLock), runs
	// in an Unlock with a hold's context once it has taken the hold's
	// unlocking (unreleasedParts.begin), before it marks the hold unlocked.
	unlockHook func()
}

// MultiLockOption configures a MultiLock (NewMultiLock).
type MultiLockOption interface {
	applyMultiLock(*MultiLock)
}

type multiLockOption func(*MultiLock)

func (o multiLockOption) applyMultiLock(m *MultiLock) { o(m) }

// WithMemberWait bounds how long one attempt waits for a single member held
// by someone else before releasing the members taken and starting over
// (default 1.5 s, as Redisson's per-lock base wait).
func WithMemberWait(d time.Duration) MultiLockOption {
	return multiLockOption(func(m *MultiLock) {
		if d <= 0 && m.err == nil {
			m.err = invalidf("member wait must be positive, got %s", d)
			return
		}
		m.memberWait = d
	})
}

// DefaultMemberWait is the MultiLock member wait unless WithMemberWait says otherwise.
const DefaultMemberWait = 1500 * time.Millisecond

// NewMultiLock returns a MultiLock over locks. It needs at least one lock, no
// nil ones (nor nil handles, such as a nil *Mutex or the RLocker of a nil
// *RWMutex) and no two with one name
// (the same lock twice, or one name on two deployments: their order could
// not be the same for every MultiLock over them); anything else, or an invalid option, is an error (errors.Is
// ErrInvalidArgument). A MultiLock among locks stands for its members (a
// lock also among the others, or in another such MultiLock, is then given
// twice).
func NewMultiLock(locks []Locker, opts ...MultiLockOption) (*MultiLock, error) {
	m := &MultiLock{locks: flattenMulti(locks), memberWait: DefaultMemberWait}
	for _, o := range opts {
		if o != nil {
			o.applyMultiLock(m)
		}
	}
	if m.err == nil && len(m.locks) == 0 {
		m.err = invalidf("no locks")
	}
	for i, l := range m.locks {
		if m.err != nil {
			break
		}
		if l == nil || nilHandle(l) {
			m.err = invalidf("member %d is nil", i)
			break
		}
		for _, o := range m.locks[:i] {
			if o.Name() != l.Name() {
				continue
			}
			// == panics on values of a type that cannot be compared.
			if reflect.TypeOf(l).Comparable() && o == l {
				m.err = invalidf("lock %q given twice", l.Name())
				break
			}
			// Names order the acquisition and name each member's token:
			// two MultiLocks given these in opposite orders would take
			// them in opposite orders, and wait on each other in a cycle.
			m.err = invalidf("two members named %q", l.Name())
			break
		}
	}
	if m.err != nil {
		return nil, fmt.Errorf("scriptlock: multilock: %w", m.err)
	}
	slices.SortStableFunc(m.locks, func(a, b Locker) int { return cmp.Compare(a.Name(), b.Name()) })
	names := make([]string, len(m.locks))
	for i, l := range m.locks {
		names[i] = l.Name()
	}
	m.name = "multi[" + strings.Join(names, ",") + "]"
	ids := make([]string, len(m.locks))
	for i, l := range m.locks {
		id, ok := lockID(l)
		if !ok {
			ids = []string{fmt.Sprintf("own\x00%d", multiSeq.Add(1))}
			break
		}
		ids[i] = id
	}
	m.key = multiKey{strings.Join(ids, "\x01")}
	return m, nil
}

var _ Locker = (*MultiLock)(nil)

// flattenMulti puts a MultiLock's members in its place among locks. Taken
// as one member, a nested MultiLock takes its members in their own order
// apart from the rest: {a, {b}} and {b, {a}} would take a then b and b then
// a, and wait on each other in a cycle.
func flattenMulti(locks []Locker) []Locker {
	out := make([]Locker, 0, len(locks))
	for _, l := range locks {
		if ml, ok := l.(*MultiLock); ok && ml != nil {
			out = append(out, ml.locks...) // flattened when it was made
			continue
		}
		out = append(out, l)
	}
	return out
}

// nilHandle reports a nil pointer in a Locker (a handle whose constructor
// failed, its error dropped), or the read side of one: reading its name
// would panic.
func nilHandle(l Locker) bool {
	if r, ok := l.(readLocker); ok {
		return r.rw == nil
	}
	v := reflect.ValueOf(l)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Name returns "multi[<member names in acquisition order>]".
func (m *MultiLock) Name() string { return m.name }

// Locks returns the members in acquisition order, those of a MultiLock given
// as a member among them.
func (m *MultiLock) Locks() []Locker { return slices.Clone(m.locks) }

// multiHeld is what a MultiLock's lock context carries: the context each
// member returned, to unlock each with its own owner.
type multiHeld struct {
	ctxs   []context.Context
	cancel context.CancelCauseFunc
	reg    ownedKey[multiKey] // where multiOwned registered it
	// state is endNone until Unlock (endUnlocked) or the loss of a member
	// (endLost) ends the hold, whichever comes first.
	state atomic.Int32
	// givenBack is closed once a lost hold's other members are given back;
	// lostBy is why it was lost.
	givenBack chan struct{}
	lostBy    error
	// What watches the members' holds once the context the MultiLock was
	// locked with ended (watchMember): stopped once the hold ends.
	watchMu sync.Mutex
	unwatch []func()
	ended   bool
	// unreleased: the members whose release the last Unlock could not
	// confirm, which an Unlock again with the hold's context asks again.
	unreleased unreleasedParts
}

// stopWatching stops what watches the members' holds, and any armed later.
func (mh *multiHeld) stopWatching() {
	mh.watchMu.Lock()
	stops := mh.unwatch
	mh.unwatch, mh.ended = nil, true
	mh.watchMu.Unlock()
	for _, stop := range stops {
		stop()
	}
}

// multiKey names a MultiLock's hold in its lock context: by its members'
// identities (see lockID), so that a MultiLock made again over handles of
// the same locks finds the hold, as a Mutex handle finds one taken through
// another. A MultiLock with a member of another package is its own.
type multiKey struct{ members string }

// multiOwned lists this process's MultiLock holds by lock and owner.
var multiOwned ownedHolds[multiKey, *multiHeld]

func (mh *multiHeld) registered() *ownedKey[multiKey] { return &mh.reg }
func (mh *multiHeld) endState() *atomic.Int32         { return &mh.state }

// multiSeq numbers MultiLocks with a member lockID cannot name.
var multiSeq atomic.Uint64

// lockID names the lock l stands for, the same for every handle of it, or
// reports that it cannot.
func lockID(l Locker) (string, bool) {
	switch l := l.(type) {
	case *Mutex:
		return "mutex\x00" + l.c.id + "\x00" + l.key, true
	case *FairMutex:
		return "fair\x00" + l.m.c.id + "\x00" + l.m.key, true
	case *LeanMutex:
		return "lean\x00" + l.c.id + "\x00" + l.key, true
	case *RWMutex:
		return "write\x00" + l.c.id + "\x00" + l.key, true
	case readLocker:
		return "read\x00" + l.rw.c.id + "\x00" + l.rw.key, true
	case *RedLock:
		return "redlock\x00" + l.id.name + "\x00" + l.id.nodes, true
	}
	return "", false
}

// Lock acquires every member, waiting until it has them all or ctx ends. The
// returned context is cancelled, with the member's cause (ErrLockLost), as
// soon as any member is lost (or released through its own handle: the
// others are then given back); FenceOf(ctx, memberName) gives each member's
// fencing token, and Fence the token of the member taken last (none when
// that one hands out none, as a RedLock).
func (m *MultiLock) Lock(ctx context.Context) (context.Context, error) {
	return m.acquire(ctx, -1)
}

// TryLock is Lock that gives up after wait (0: one attempt, each member tried
// once without waiting). The error then errors.Is ErrNotAcquired.
func (m *MultiLock) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, fmt.Errorf("scriptlock: lock %s: %w", m.name, invalidf("negative wait %s", wait))
	}
	return m.acquire(ctx, wait)
}

func (m *MultiLock) acquire(ctx context.Context, wait time.Duration) (context.Context, error) {
	if ctx == nil {
		return nil, fmt.Errorf("scriptlock: lock %s: %w", m.name, invalidf("nil context"))
	}
	if _, ok := OwnerFrom(ctx); !ok {
		// One owner for every member, carried by the returned context.
		ctx = WithOwner(ctx, randomID())
	} else if err := m.checkOwner(ctx); err != nil {
		// Refused before any member is taken: a member ordered before the
		// one that refuses would be acquired (its fencing counter drawn)
		// and given back (its waiters woken) for nothing.
		return nil, fmt.Errorf("scriptlock: lock %s: %w", m.name, err)
	}
	var deadline, cut time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
		// As for a Mutex's wait: no member's call runs past this.
		cut = deadline.Add(addSat(waitOverrun, guardOverrun(m)))
	}
	retry := backoff{cur: 5 * time.Millisecond, max: 500 * time.Millisecond}
	for attempt := 0; ; attempt++ {
		if l := m.closedMember(); l != nil {
			// Refused before any member is taken: the members ordered
			// before it would be acquired (their fencing counters drawn)
			// and given back (their waiters woken) for nothing.
			return nil, fmt.Errorf("scriptlock: lock %s: member %q: %w", m.name, l.Name(), ErrClosed)
		}
		held, _, err := m.attempt(ctx, wait, deadline, cut)
		if err == nil {
			err = ctx.Err() // ended as the last member was granted: give all back
		}
		if err == nil {
			for i, h := range held {
				if h.Err() != nil {
					// Lost (its lease ran out) while later members were
					// taken: not held as a whole; try again like a refusal.
					err = fmt.Errorf("member %q lost while the others were taken: %w", m.locks[i].Name(), ErrNotAcquired)
					break
				}
			}
		}
		if err == nil {
			return m.bind(ctx, held), nil
		}
		// Member errors name their member.
		rerr := func() error {
			bound, stop := giveBackBound(ctx, cut)
			defer stop() // also when a member's release panics
			return m.rollback(held, bound)
		}()
		if rerr != nil {
			return nil, fmt.Errorf("scriptlock: lock %s: %w", m.name, errors.Join(nested(err), rerr))
		}
		if !errors.Is(err, ErrNotAcquired) {
			// Not contention: a Redis failure, a closed Client, ctx ending.
			return nil, fmt.Errorf("scriptlock: lock %s: %w", m.name, nested(err))
		}
		if wait == 0 || (wait > 0 && !time.Now().Before(deadline)) {
			return nil, fmt.Errorf("scriptlock: lock %s: %w", m.name, nested(err))
		}
		if err := retry.wait(ctx, deadline); err != nil {
			return nil, fmt.Errorf("scriptlock: lock %s: wait ended: %w", m.name, err)
		}
	}
}

// closedMember returns a member whose Client is closed (a RedLock's, so
// many of its nodes' that no majority is left), whose call fails with
// ErrClosed; nil if none.
func (m *MultiLock) closedMember() Locker {
	for _, l := range m.locks {
		if r, ok := l.(*RedLock); ok {
			if r.closedQuorum() {
				return l
			}
			continue
		}
		for _, c := range clientsOf(l) {
			if c.closed() {
				return l
			}
		}
	}
	return nil
}

// checkOwner applies every member's rule on the owner ids it accepts
// (RWMutex sides refuse one ending in ":write") to the owner ctx names.
func (m *MultiLock) checkOwner(ctx context.Context) error {
	for _, l := range m.locks {
		var err error
		switch l := l.(type) {
		case *RWMutex:
			err = checkOwner(ctx, &l.write)
		case readLocker:
			err = checkOwner(ctx, &l.rw.read)
		case *MultiLock:
			err = l.checkOwner(ctx)
		}
		if err != nil {
			return fmt.Errorf("member %q: %w", l.Name(), err)
		}
	}
	return nil
}

// attempt takes the members in order. It returns the contexts of the members
// it took, the name of the one that failed and why. With a cut (a wait's
// end, plus the overrun), no member's call runs past it: a member taken
// after the wait ended is tried once, which ctx alone would not bound.
func (m *MultiLock) attempt(ctx context.Context, wait time.Duration, deadline, cut time.Time) ([]context.Context, string, error) {
	held := make([]context.Context, 0, len(m.locks))
	for _, l := range m.locks {
		w := m.memberWait
		switch {
		case wait == 0:
			w = 0
		case wait > 0:
			w = max(min(w, time.Until(deadline)), 0)
		}
		mctx, wasCut, settle := ctx, func() bool { return false }, func(context.Context) {}
		if !cut.IsZero() {
			mctx, wasCut, settle = cutAt(ctx, cut)
		}
		lctx, err := m.tryMember(mctx, l, w, held, cut)
		cutFirst := wasCut()
		if err != nil {
			lctx = nil
		}
		settle(lctx)
		if cutFirst {
			if err == nil {
				held = append(held, lctx) // ended with the cut: give it back
			}
			var na error = ErrNotAcquired
			if err != nil && !errors.Is(err, ErrNotAcquired) {
				// The cut ended a call the server had not answered: no
				// holder was seen, as for a Mutex's wait so cut off.
				na = &NotAcquiredError{Name: l.Name(), Unanswered: true}
			}
			return held, l.Name(), fmt.Errorf("member %q: the wait ended: %w", l.Name(), errors.Join(na, err))
		}
		if err != nil {
			return held, l.Name(), err
		}
		held = append(held, lctx)
	}
	return held, "", nil
}

// tryMember is l.TryLock. Should it panic (an Observer's AcquireEnd, after
// the engine gave that member's grant back), the members held already are
// given back before the panic goes on: the caller never receives them.
func (m *MultiLock) tryMember(ctx context.Context, l Locker, wait time.Duration, held []context.Context, cut time.Time) (context.Context, error) {
	returned := false
	defer func() {
		if !returned {
			bound, stop := giveBackBound(context.Background(), cut)
			defer stop()
			_ = m.rollback(held, bound)
		}
	}()
	lctx, err := l.TryLock(context.WithValue(ctx, multiMemberKey{}, true), wait)
	returned = true
	return lctx, err
}

// multiMemberKey marks the context a MultiLock locks a member with: the
// member's lock context is the MultiLock's, which ends the set when that
// context ends, so an Unlock of the member given a context that only names
// the owner does not end it (hold.untrackOwned) but the owner's own.
type multiMemberKey struct{}

// errWaitCut ends a member's calls that ran past a wait's end and overrun.
var errWaitCut = errors.New("wait ended")

// cutByOuterWait reports a call that failed because ctx was ended by the
// wait of a MultiLock taking the lock as a member (cutAt), or by a RedLock
// node's timeout (errNodeTimeout), not by the caller.
func cutByOuterWait(ctx context.Context, err error) bool {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if ctx.Err() == nil {
		d, ok := ctx.Deadline()
		if !ok || time.Now().Before(d) || !errors.Is(err, context.DeadlineExceeded) {
			return false
		}
		if end, ok := ctx.Value(nodeDeadlineKey{}).(time.Time); ok && end.Equal(d) {
			// A RedLock node's timeout, not before the caller's deadline:
			// its timer, which may run well past it on a loaded machine,
			// ends ctx with errNodeTimeout.
			return true
		}
		// The call saw ctx's deadline pass before its timer fired, which
		// it is about to: then its cause tells whose deadline it was.
		// Bounded: a context of another package may report a deadline
		// it does not end at.
		t := time.NewTimer(10 * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			return false
		}
	}
	cause := context.Cause(ctx)
	return cause == errWaitCut || cause == errNodeTimeout
}

// cutAt returns ctx, cancelled at cut unless stop comes first; stop reports
// whether the cut came first. A lock context derived from it lives on after
// stop; settle, given the member's lock context (nil: none), ends the
// returned context once that one has ended: until then ctx keeps it among
// its children, and a long-lived ctx (a process's root context) would keep
// one per attempt for good.
func cutAt(ctx context.Context, cut time.Time) (_ context.Context, stop func() bool, settle func(lctx context.Context)) {
	cctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(time.Until(cut), func() { cancel(errWaitCut) })
	return cctx, func() bool { return !t.Stop() }, func(lctx context.Context) {
		if lctx == nil {
			cancel(nil)
			return
		}
		context.AfterFunc(lctx, func() { cancel(nil) })
	}
}

// openGiveBackBounds counts the bounds giveBackBound made whose stop has not
// run: each keeps its context and timers (one on the caller's context) until
// then, or until its cut. Tests read it.
var openGiveBackBounds atomic.Int64

// giveBackBound is what ends the caller's wait for the give-back of a
// failed attempt's members (nil: nothing, the caller waits for it): cut (a
// wait's, zero: none), or waitOverrun past the end of ctx (one that never ends: none), its
// deadline or a cancellation, also one that comes while the give-back runs,
// whichever comes first. Calls are bounded by ctx: a member whose server
// stopped answering kept the caller for its release timeout, each try, past
// a deadline the caller set or a cancellation. stop frees its timers.
func giveBackBound(ctx context.Context, cut time.Time) (bound <-chan struct{}, stop func()) {
	ends := ctx.Done() != nil
	if cut.IsZero() && !ends {
		return nil, func() {} // nothing ends it
	}
	var bctx context.Context
	var cancelCtx context.CancelFunc
	if cut.IsZero() {
		bctx, cancelCtx = context.WithCancel(context.Background())
	} else {
		bctx, cancelCtx = context.WithDeadline(context.Background(), cut)
	}
	openGiveBackBounds.Add(1)
	var once sync.Once
	cancel := func() {
		cancelCtx()
		once.Do(func() { openGiveBackBounds.Add(-1) })
	}
	if !ends {
		return bctx.Done(), cancel
	}
	var (
		mu      sync.Mutex
		t       *time.Timer
		stopped bool
	)
	after := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			t = time.AfterFunc(waitOverrun, cancel)
		}
	})
	return bctx.Done(), func() {
		after()
		mu.Lock()
		stopped = true
		if t != nil {
			t.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// rollback releases the members of a failed attempt, retrying briefly so a
// transient failure does not leave one held. Once bound ends (nil: never,
// see giveBackBound), a rollback still running goes on in the background (a
// Client of the members owns it, so Close waits for it), and its errors are
// not returned.
func (m *MultiLock) rollback(held []context.Context, bound <-chan struct{}) error {
	if bound == nil || len(held) == 0 {
		return m.release(held)
	}
	type result struct {
		err      error
		panicked bool
		value    any
		exited   bool // a member's release ended its goroutine (runtime.Goexit)
	}
	var (
		mu   sync.Mutex
		left bool // the caller stopped waiting: a panic is only logged
	)
	done := make(chan result, 1)
	// Owned by the Client of every member: it goes on through each of
	// them, and Close of any of them returned while it still did.
	runOwnedByAll(clientsOf(m), func() {
		var err error
		returned := false
		defer func() {
			if !returned {
				// A member's release ended the goroutine (runtime.Goexit,
				// gone on from release): no outcome, and it goes on on
				// the caller's goroutine should the caller still wait.
				done <- result{exited: true}
			}
		}()
		v, stack, panicked := catch(func() { err = m.release(held) })
		returned = true
		if !panicked {
			done <- result{err: err}
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if left {
			loggerOf(m.locks[0]).Error("panic recovered", "in", "giving back a failed MultiLock attempt's members", "panic", v, "stack", stack)
			return
		}
		done <- result{panicked: true, value: v}
	})
	var r result
	select {
	case r = <-done:
	case <-bound:
		mu.Lock()
		left = true
		mu.Unlock()
		select {
		case r = <-done: // a panic that came as the cut did
			r.err = nil
		default:
		}
	}
	if r.panicked {
		// A member's Unlock panicked (an Observer's ReleaseStart), every
		// member given back: the panic goes on on the caller's goroutine.
		panic(r.value)
	}
	if r.exited {
		runtime.Goexit()
	}
	return r.err
}

// release gives back the members of a failed attempt (see rollback), all at
// once, as Unlock does: one after another, a member whose node stopped
// answering (its release waiting out the release timeout, each try) kept
// those after it held as long, though their nodes answer. A member's Unlock
// that panics does not keep the others held: the panic goes on once every
// member has been given back.
func (m *MultiLock) release(held []context.Context) error {
	errs := make([]error, len(held))
	var caught firstPanic
	var wg sync.WaitGroup
	for i := range held {
		l := m.locks[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			caught.run(func() {
				var err error
				for try := 0; try < 3; try++ {
					if err = l.Unlock(held[i]); err == nil || errors.Is(err, ErrNotHeld) {
						return
					}
					time.Sleep(time.Duration(try+1) * 20 * time.Millisecond)
				}
				errs[i] = fmt.Errorf("release after a failed attempt: %w", nested(err))
			})
		}()
	}
	wg.Wait()
	if caught.set {
		caught.goOn()
	}
	// Reported last member first, as they were given back before.
	slices.Reverse(errs)
	return errors.Join(errs...)
}

// bind builds the MultiLock's context: cancelled when any member's context
// ends, carrying each member's fencing token (FenceOf), and the last
// member's as its Fence. A member lost (ErrLockLost,
// ErrClosed), or released through its own handle, makes it give the other
// members back.
func (m *MultiLock) bind(ctx context.Context, held []context.Context) context.Context {
	mctx, cancelCtx := context.WithCancelCause(ctx)
	owner, _ := OwnerFrom(ctx) // acquire made sure of one
	mh := &multiHeld{ctxs: held, givenBack: make(chan struct{})}
	cancel := func(cause error) { cancelCtx(cause); mh.stopWatching() }
	mh.cancel = cancel
	// lose ends the hold as lost through member i, unless it ended already.
	lose := func(i int, cause error) bool {
		err := fmt.Errorf("scriptlock: %s: member %q: %w", m.name, m.locks[i].Name(), cause)
		if !mh.state.CompareAndSwap(endNone, endLost) {
			return false
		}
		mh.lostBy = err
		multiOwned.lost(mh)
		cancel(err)
		m.giveBack(mh, i)
		return true
	}
	for i, lctx := range held {
		if tok, ok := FenceOf(lctx, m.locks[i].Name()); ok {
			mctx = withFence(mctx, m.locks[i].Name(), tok)
		} else {
			// A member without a token (a RedLock, an unfenced LeanMutex)
			// answers none, by its name and, taken last, as the most recent
			// lock (Fence): not the token of an earlier member or of a lock
			// enclosing ctx, drawn from another counter.
			mctx = context.WithValue(context.WithValue(mctx, fenceKey{m.locks[i].Name()}, nil), anyFenceKey{}, nil)
		}
		context.AfterFunc(lctx, func() {
			if ctx.Err() != nil {
				// The caller's context ended, and with it every member's
				// context: no member was lost. The members stay held until
				// Unlock, and their holds are watched from now on.
				cancelCtx(context.Cause(ctx))
				m.watchMember(mh, i, lose)
				return
			}
			// Lost, or released through its own handle (the MultiLock's
			// own Unlock ended the hold first): the set is not held, and
			// the other members are given back either way.
			lose(i, memberEnd(context.Cause(lctx)))
		})
	}
	multiOwned.own(ownedKey[multiKey]{m.key, owner}, mh)
	return &multiCtx{Context: mctx, key: m.key, mh: mh}
}

// multiCtx is a MultiLock's lock context: it carries the hold under the
// MultiLock's key, and as the innermost MultiLock hold of the context (a
// member's own look at its part: RedLock.HeldOn). One value, as
// context.WithValue's was.
type multiCtx struct {
	context.Context
	key multiKey
	mh  *multiHeld
}

// anyMultiKey finds the innermost MultiLock hold a context carries.
type anyMultiKey struct{}

func (c *multiCtx) Value(key any) any {
	switch key {
	case c.key, anyMultiKey{}:
		return c.mh
	}
	return c.Context.Value(key)
}

func (c *multiCtx) String() string {
	return fmt.Sprintf("%v.WithValue(scriptlock.MultiLock)", c.Context)
}

// watchMember calls lose once member i's hold is lost, whatever the context
// the MultiLock was locked with does: a hold whose member contexts ended with
// that context is still held, and a member lost must still give the others
// back. A member of another package cannot be watched so.
func (m *MultiLock) watchMember(mh *multiHeld, i int, lose func(int, error) bool) {
	var (
		done  context.Context
		cause func() error // why the hold ended (nil: the watch was stopped)
		stop  func()
	)
	if rc, ok := mh.ctxs[i].(*redCtx); ok {
		h := rc.h
		done, stop = h.life, func() {}
		cause = func() error {
			if h.state.Load() == endLost {
				return h.lostBy
			}
			return memberEnd(context.Canceled) // unlocked
		}
	} else {
		lc, _ := mh.ctxs[i].Value(lockCtxKey{}).(*lockCtx)
		if lc == nil || lc.hold == nil || lc.name != m.locks[i].Name() {
			return // not this package's lock context, or an enclosing lock's
		}
		wctx, wcancel := context.WithCancelCause(context.Background())
		w := &lockCtx{Context: wctx, owner: lc.owner, name: lc.name, hold: lc.hold}
		lc.hold.track(w, wcancel) // ended with the hold's cause, at once if it ended
		done, stop = w, func() { lc.hold.untrackLC(w) }
		cause = func() error {
			if !lc.hold.released() {
				return nil // stopped
			}
			return memberEnd(context.Cause(w))
		}
	}
	after := context.AfterFunc(done, func() {
		if err := cause(); err != nil {
			lose(i, err)
		}
	})
	unwatch := func() { after(); stop() }
	mh.watchMu.Lock()
	if mh.ended {
		mh.watchMu.Unlock()
		unwatch()
		return
	}
	mh.unwatch = append(mh.unwatch, unwatch)
	mh.watchMu.Unlock()
}

// memberEnd is why a member's hold ended, as the MultiLock's loss: a release
// through the member's own handle (context.Canceled) is one too.
func memberEnd(cause error) error {
	switch {
	case errors.Is(cause, ErrLockLost) || errors.Is(cause, ErrClosed):
		return cause
	case cause == nil || cause == context.Canceled:
		return fmt.Errorf("%w: released through its own handle", ErrLockLost)
	}
	return fmt.Errorf("%w: %w", ErrLockLost, cause) // a Locker of another package
}

// giveBack releases, in the background, every member of a lost MultiLock but
// the lost one: a member left held would be renewed until Unlock, which a
// caller that takes the lost context as the end may never call.
func (m *MultiLock) giveBack(mh *multiHeld, lost int) {
	var wg sync.WaitGroup
	for i, l := range m.locks {
		if i == lost {
			continue
		}
		wg.Add(1)
		// Owned by every Client of the member (a RedLock's nodes', a
		// MultiLock's members'): its Unlock goes on through each of them.
		runOwnedByAll(clientsOf(l), func() {
			defer wg.Done()
			// No caller to reach, and a panic here would crash the process.
			logged(loggerOf(l), "giving back a lost MultiLock's member", func() {
				_ = l.Unlock(givenBack(giveBackCtx(l, mh.ctxs[i])))
			})()
		})
	}
	go func() {
		wg.Wait()
		close(mh.givenBack)
	}()
}

// nestedGiveBackKey marks the context with which a lost MultiLock's
// give-back unlocks a member that releases its parts on goroutines of its
// own (a MultiLock, a RedLock; see giveBackCtx): those goroutines count as
// inside the give-back (goPart), and a MultiLock member lost too waits for
// its own give-back, as its Unlock does elsewhere: this one is no callback
// of it (see fromMultiGiveBack).
type nestedGiveBackKey struct{}

// giveBackCtx is the context with which a lost MultiLock's give-back, or a
// member's Unlock made by it, unlocks member l through lctx, l's hold.
func giveBackCtx(l Locker, lctx context.Context) context.Context {
	switch l.(type) {
	case *MultiLock, *RedLock:
		return context.WithValue(lctx, nestedGiveBackKey{}, true)
	}
	return lctx
}

// goPart runs release, an Unlock's release of one of its parts, on a
// goroutine of its own; for an Unlock made by a lost MultiLock's give-back
// (ctx marked), one that counts as inside that give-back (inMultiGiveBack):
// an Observer's ReleaseStart there is a callback of the give-back, which
// waits for it, as one on the give-back's own goroutine is.
func goPart(ctx context.Context, release func()) {
	if ctx.Value(nestedGiveBackKey{}) != nil {
		go releaseInGiveBack(release)
		return
	}
	go release()
}

// releaseInGiveBack is the frame inMultiGiveBack finds on a goroutine that
// goPart started for a give-back.
//
//go:noinline
func releaseInGiveBack(release func()) { release() }

// fromMultiGiveBack reports whether an Unlock with ctx runs inside the
// give-back of a lost MultiLock's members (an Observer's ReleaseStart
// there), which an Unlock of a lost hold must not wait for: the give-back
// waits for it. Not the give-back's own Unlock of a member that is a
// MultiLock, whose give-back does not wait for it.
func fromMultiGiveBack(ctx context.Context) bool {
	return ctx.Value(nestedGiveBackKey{}) == nil && inMultiGiveBack()
}

// runOwnedByAll runs f in a goroutine that every open Client in cs owns:
// Close of each of them waits for it. With none open, f runs unowned.
func runOwnedByAll(cs []*Client, f func()) {
	var owners []*Client
	for _, c := range cs {
		if !slices.Contains(owners, c) && c.own() {
			owners = append(owners, c)
		}
	}
	go func() {
		defer func() {
			for _, c := range owners {
				c.wg.Done()
			}
		}()
		f()
	}()
}

// loggerOf is the logger of a Client of l, or slog's default for a Locker
// without one.
func loggerOf(l Locker) *slog.Logger {
	if cs := clientsOf(l); len(cs) > 0 {
		return cs[0].log
	}
	return slog.Default()
}

// clientsOf lists the Clients l's calls go through.
func clientsOf(l Locker) []*Client {
	switch l := l.(type) {
	case *Mutex:
		return []*Client{l.c}
	case *FairMutex:
		return []*Client{l.m.c}
	case *LeanMutex:
		return []*Client{l.c}
	case *RWMutex:
		return []*Client{l.c}
	case readLocker:
		return []*Client{l.rw.c}
	case *RedLock:
		cs := make([]*Client, len(l.nodes))
		for i, n := range l.nodes {
			cs[i] = n.c
		}
		return cs
	case *MultiLock:
		var cs []*Client
		for _, ml := range l.locks {
			cs = append(cs, clientsOf(ml)...)
		}
		return cs
	}
	return nil
}

// gaveBack reports whether lctx, the lock context of member l (a lock of
// this package), no longer names a hold of l: an Unlock made with it went
// through. Not when its hold was lost or its release failed (an Unlock
// again asks it again, as without a panic). A member of another package, or a context
// that is not l's, is never taken for one given back.
func gaveBack(l Locker, lctx context.Context) bool {
	p, ok := l.(primitive)
	if !ok {
		return false
	}
	lc, _ := lctx.Value(lockCtxKey{}).(*lockCtx)
	return lc != nil && lc.hold != nil && lc.hold.prim == p && lc.hold.gaveBack(lc)
}

// Unlock releases every member and reports every failure (errors.Join). ctx
// should be the context Lock returned (or one derived from it), which knows
// each member's owner, through this MultiLock or another made over handles
// of the same locks. Given a context that only names the owner (WithOwner),
// it gives back that owner's most recent hold taken in this process, as
// that hold's context would (that hold lost while an earlier one lives:
// ErrNotHeld, releasing nothing, and the next such Unlock gives back the
// earlier one); an owner with none here (a lost one, given
// back already, included; with a Locker of another package, none taken
// through this handle) gets ErrNotHeld and no member is released, as one by
// owner would give up the owner's other holds of them. With any other ctx
// each member is unlocked with ctx itself. A member whose release failed (refused, as NO_PUBLISH is
// for an ACL user without its channel, or unanswered) may stay held until
// its lease ends: the error names it, and Unlock again with the same
// context asks those members again (each as its own Unlock made again
// does: by owner, unless the owner holds it anew), and no other; it fails
// with ErrNotHeld once none is left to ask. An Unlock made while another of
// the same hold is releasing it waits for that one's outcome, and is then
// an Unlock made again. A MultiLock that lost a member has given the others back already:
// Unlock waits for that and fails with ErrNotHeld, as for a lost Mutex (one
// made from an Observer callback of that give-back does not wait for it).
func (m *MultiLock) Unlock(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("scriptlock: unlock %s: %w", m.name, invalidf("nil context"))
	}
	mh, _ := ctx.Value(m.key).(*multiHeld)
	var ask []int // the members asked (nil: every one)
	if mh == nil {
		if owner, ok := OwnerFrom(ctx); ok {
			for {
				// The owner's most recent hold here, if any: given back as
				// through its own context. Its unlocking is taken before
				// it is marked, as with its context: an Unlock with its
				// context that took it first releases the members, and
				// this one waits for its outcome.
				var found int
				if mh, found, _ = multiOwned.ownedOrUnlocking(ownedKey[multiKey]{m.key, owner}); mh == nil {
					break
				}
				if found == ownedLost {
					// The owner's most recent hold here was lost, while an
					// earlier one lives: answered as its own context's
					// Unlock is, releasing nothing (the earlier hold is not
					// this one).
					if !fromMultiGiveBack(ctx) {
						<-mh.givenBack
					}
					return fmt.Errorf("scriptlock: unlock %s: %w (%v)", m.name, ErrNotHeld, mh.lostBy)
				}
				begun := mh.unreleased.begin()
				if mh.state.CompareAndSwap(endNone, endUnlocked) {
					if begun {
						defer mh.unreleased.end()
					}
					multiOwned.disown(mh)
					mh.cancel(context.Canceled)
					break
				}
				if mh.state.Load() == endUnlocked {
					// Released by another Unlock meanwhile: this is an
					// Unlock made again.
					if begun {
						defer mh.unreleased.end()
					}
					if ask = mh.unreleased.take(); len(ask) == 0 {
						return fmt.Errorf("scriptlock: unlock %s: %w (already unlocked)", m.name, ErrNotHeld)
					}
					break
				}
				// Lost meanwhile (disowned): the owner's holds are looked
				// at again.
				if begun {
					mh.unreleased.end()
				}
			}
			if mh == nil {
				// No hold of the owner here (one lost was dropped from
				// multiOwned). Releasing each member by owner would give
				// up the owner's other holds of them (its own, another
				// MultiLock's). Every hold of this MultiLock taken here, through any
				// handle (through this one only, with a Locker of another
				// package), is in multiOwned, and an owner names holds of
				// one Client's, this process's.
				return fmt.Errorf("scriptlock: unlock %s: %w (the owner holds it nowhere in this process)", m.name, ErrNotHeld)
			}
		}
	} else {
		// Taken before the state is: an Unlock made while another is still
		// releasing the members waits for its outcome, as a RedLock's does
		// (unreleasedParts.begin), rather than answer ErrNotHeld while
		// members it may not release hold their locks.
		if mh.unreleased.begin() {
			defer mh.unreleased.end()
		}
		if hook := m.unlockHook; hook != nil {
			hook()
		}
		if !mh.state.CompareAndSwap(endNone, endUnlocked) {
			if mh.state.Load() == endLost {
				// Answered: kept no longer as the marker of the owner's
				// most recent hold (see ownedHolds.lost).
				multiOwned.disown(mh)
				// Not from inside a give-back (an Observer's ReleaseStart
				// there), which waits for this Unlock.
				if !fromMultiGiveBack(ctx) {
					<-mh.givenBack
				}
				return fmt.Errorf("scriptlock: unlock %s: %w (%v)", m.name, ErrNotHeld, mh.lostBy)
			}
			// An Unlock that could not release some members: those are
			// asked again, through their own contexts, as a RedLock's
			// nodes are.
			if ask = mh.unreleased.take(); len(ask) == 0 {
				return fmt.Errorf("scriptlock: unlock %s: %w (already unlocked)", m.name, ErrNotHeld)
			}
		} else {
			// Our own release must not read as a lost member.
			multiOwned.disown(mh)
			mh.cancel(context.Canceled)
		}
	}
	if ask == nil {
		ask = make([]int, len(m.locks))
		for i := range ask {
			ask[i] = i
		}
	}
	errs := make([]error, len(m.locks))
	var caught firstPanic
	done := make(chan struct{})
	for _, i := range ask {
		l, lctx := m.locks[i], ctx
		if mh != nil {
			lctx = mh.ctxs[i]
			if ctx.Value(nestedGiveBackKey{}) != nil {
				// Made by a lost MultiLock's give-back: so is the member's,
				// and the member is given back, for the Observer.
				lctx = givenBack(giveBackCtx(l, lctx))
			}
		}
		goPart(ctx, func() {
			defer func() {
				if errs[i] == errReleasePanicked && gaveBack(l, lctx) {
					// Its release went through before the panic (an
					// Observer's ReleaseStart or ReleaseEnd): asked
					// again, it gave up another hold of the owner's.
					errs[i] = nil
				}
				done <- struct{}{}
			}()
			caught.run(func() {
				// Until it returns: a member's Unlock that panics or
				// ends its goroutine (Goexit) has no outcome, and the
				// member is kept for an Unlock again, as a RedLock's
				// node is, unless its hold is given back (gaveBack).
				// Taken for released, it stayed held (and renewed) for
				// an owner that could not release it.
				errs[i] = errReleasePanicked
				err := l.Unlock(lctx)
				errs[i] = nil
				if err != nil {
					errs[i] = nested(err)
				}
			})
		})
	}
	for range ask {
		<-done
	}
	var unreleased []int
	for i, err := range errs {
		if err != nil && !errors.Is(err, ErrNotHeld) {
			unreleased = append(unreleased, i)
		}
	}
	if mh != nil && len(unreleased) > 0 {
		// Their holds ended here (no watchdog renews them): kept for an
		// Unlock again, also when a member's panic (or Goexit) goes on
		// below, with the members whose Unlock it ended.
		mh.unreleased.keep(unreleased)
	}
	if caught.set {
		// A member's Unlock panicked (an Observer's ReleaseStart, that
		// release done): every member's release has run; the panic goes on
		// on the caller's goroutine.
		caught.goOn()
	}
	if err := errors.Join(errs...); err != nil {
		if mh != nil && len(unreleased) > 0 {
			names := make([]string, len(unreleased))
			for j, i := range unreleased {
				names[j] = m.locks[i].Name()
			}
			return fmt.Errorf("scriptlock: unlock %s: members %q may stay held until their leases end (Unlock again with this context asks them again): %w",
				m.name, names, err)
		}
		return fmt.Errorf("scriptlock: unlock %s: %w", m.name, err)
	}
	return nil
}
