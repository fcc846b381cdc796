package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RedLock is the Redlock algorithm over N independent Redis deployments (N
// odd, at least 3), each reached through its own Client: the lock is held
// when a majority of nodes granted it within its validity.
//
// An acquisition tries every node in parallel, each bounded by a per-node
// timeout much smaller than the lease, so a dead or frozen node costs at most
// that timeout. It succeeds only when a majority granted the lock and the
// validity, lease − elapsed − drift, is still positive; otherwise it releases
// the lock on every node that granted it, and each node that did not answer
// undoes, by owner, a grant that may still be in flight.
//
// On each node the lock is an ordinary Mutex (Redisson's layout), so renewal
// is that node's Client watchdog. The context Lock returns is cancelled with
// ErrLockLost once fewer than a majority of nodes still hold the lock, and
// when the validity runs out (with the watchdog, lease − drift from the
// renewals a majority confirmed last); the nodes that still
// hold it are then given back in the background, as a lost Mutex stops
// renewing on its own.
//
// Read "RedLock: what it does and does not guarantee" in docs/guarantees.md before
// relying on it for correctness: it assumes bounded clock drift and pauses,
// and its grants carry no fencing token that is ordered across nodes: Fence
// and FenceOf on its context answer none.
type RedLock struct {
	name  string
	id    redKey // what its lock contexts carry their hold under
	nodes []*Mutex
	// backNodes are the nodes' locks for give-backs nobody waits for (a
	// failed attempt's grants once its caller stopped waiting, a lost
	// RedLock's nodes): bounded by the release timeout of the node's
	// Client, not by the node timeout. A release held up past the node
	// timeout (a goroutine descheduled on a loaded machine, a slow link) is
	// not sent once its context has ended, and the grant then keeps every
	// owner off that node until its lease ends.
	backNodes   []*Mutex
	lease       time.Duration // 0: each node's watchdog
	nodeTimeout time.Duration
	driftFactor float64
	driftExtra  time.Duration
	// releaseHook, when set (by tests only, on their own RedLock), runs
	// before each node's release in releaseAll.
	releaseHook func(node int)
	// unlockHook, when set (by tests only, on their own RedLock), runs in
	// an Unlock with a hold's context once it has taken the hold's
	// unlocking (unreleasedParts.begin), before it marks the hold unlocked.
	unlockHook func()
	// shortenHook, when set (by tests only, on their own RedLock), runs in
	// Extend once it has found the validity to end past the new lease,
	// before it moves the validity to that lease.
	shortenHook func()
	// checkedUntil (monoNanos; 0: never) is when the last check that found
	// every node's server telling its run_id, and no two nodes reaching one
	// server, runs out (see checkDistinct): a node's server replaced since
	// (a restart at its address, its name resolving elsewhere) has a new
	// run_id, which the next check after then reads.
	checkedUntil atomic.Int64
}

// RedLockOption configures a RedLock (NewRedLock). Every LockOption is a
// RedLockOption: it configures the lock on each node (WithLease gives the
// RedLock a lease that expires on its own on every node, and its validity is
// measured against it). WithNodeTimeout and WithClockDrift are RedLock's own.
type RedLockOption interface {
	applyRedLock(*redLockConfig)
}

type redLockConfig struct {
	node        []LockOption // for the lock on each node
	releaseSet  bool         // node carries WithReleaseTimeout
	nodeTimeout time.Duration
	driftFactor float64
	driftExtra  time.Duration
	err         error
}

type redLockOption func(*redLockConfig)

func (o redLockOption) applyRedLock(r *redLockConfig) { o(r) }

func (r *redLockConfig) fail(format string, args ...any) {
	if r.err == nil {
		r.err = invalidf(format, args...)
	}
}

// WithNodeTimeout bounds each node's part of an acquisition or Unlock (an
// Unlock's by at least 50ms; WithReleaseTimeout given to NewRedLock bounds
// it instead, and the nodes' Clients' release timeout does not apply but to
// the give-backs nobody waits for: see WithReleaseTimeout).
// Default: lease/100, clamped to [10ms, 200ms], and at most half the lease
// (for a lease under 20ms). It must be below the lease (the watchdog's
// without WithLease): NewRedLock refuses one that is not.
func WithNodeTimeout(d time.Duration) RedLockOption {
	return redLockOption(func(r *redLockConfig) {
		if d <= 0 {
			r.fail("node timeout must be positive, got %s", d)
			return
		}
		r.nodeTimeout = d
	})
}

// WithClockDrift sets the allowance for clock drift between the nodes and
// this process: drift = lease × factor + extra (default 0.01 and 2 ms).
func WithClockDrift(factor float64, extra time.Duration) RedLockOption {
	return redLockOption(func(r *redLockConfig) {
		if !(factor >= 0 && factor < 1) || extra < 0 { // NaN too
			r.fail("clock drift needs 0 <= factor < 1 and extra >= 0, got %g and %s", factor, extra)
			return
		}
		r.driftFactor, r.driftExtra = factor, extra
	})
}

// NewRedLock returns a RedLock called name over clients, one per independent
// Redis deployment. Each Client's key prefix and watchdog settings apply on
// its node; LockOptions among opts override them on every node. Without
// WithLease the nodes' watchdogs renew the lock until Unlock. Fewer than 3
// nodes, an even number, a nil or repeated Client, Clients sharing one
// rueidis client, a clock drift allowance (WithClockDrift) that leaves the
// lease no validity (with the watchdog: less than its renewal interval), a
// node timeout (WithNodeTimeout) at or above the lease, an invalid name or
// option is an error (errors.Is ErrInvalidArgument or ErrInvalidName). Its
// first Lock or TryLock (and one once that check's run_ids, kept 10 s, ran
// out: a node's server may have been replaced) refuses, with
// ErrInvalidArgument, nodes whose
// Clients reach one Redis server (the same run_id, or the same address
// without run_ids, asked afresh, that tell two servers apart), and nodes
// whose servers refuse INFO (an ACL user without it), whose run_id cannot
// be compared, which NewRedLock, calling no server, leaves to them.
func NewRedLock(name string, clients []*Client, opts ...RedLockOption) (*RedLock, error) {
	r, err := newRedLock(name, clients, opts)
	if err != nil {
		return nil, fmt.Errorf("scriptlock: redlock %q: %w", name, err)
	}
	return r, nil
}

func newRedLock(name string, clients []*Client, opts []RedLockOption) (*RedLock, error) {
	cfg := redLockConfig{driftFactor: 0.01, driftExtra: 2 * time.Millisecond}
	for _, o := range opts {
		if o != nil {
			o.applyRedLock(&cfg)
		}
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	if len(clients) < 3 || len(clients)%2 == 0 {
		return nil, invalidf("needs an odd number of nodes, at least 3, got %d", len(clients))
	}
	for i, c := range clients {
		if c == nil {
			return nil, invalidf("client %d is nil", i)
		}
		for _, o := range clients[:i] {
			if o == c {
				return nil, invalidf("client %d given twice", i)
			}
			if sameClient(o.rc, c.rc) {
				// Each node would see the others' grants as another owner's
				// hold: no quorum, ever.
				return nil, invalidf("clients %d and %d share one Redis client: a RedLock needs independent nodes", slices.Index(clients, o), i)
			}
		}
	}
	r := &RedLock{name: name, nodeTimeout: cfg.nodeTimeout, driftFactor: cfg.driftFactor, driftExtra: cfg.driftExtra}
	ids := make([]string, len(clients))
	for i, c := range clients {
		ids[i] = c.id
	}
	r.id = redKey{name, strings.Join(ids, ",")}
	for i, c := range clients {
		m, err := c.newMutex(kindRedLock, name, cfg.node)
		if err != nil {
			// Unwrapped: NewRedLock names the lock.
			return nil, errors.Unwrap(err)
		}
		if i > 0 && m.cfg.lease != r.lease {
			return nil, invalidf("the nodes' Clients disagree on the lease (%s and %s): give WithLease to NewRedLock", r.lease, m.cfg.lease)
		}
		r.lease = m.cfg.lease
		r.nodes = append(r.nodes, m)
	}
	if lease := r.validityLease(); lease <= r.drift(lease) {
		// Every attempt would write the lock on every node and give it
		// back: no validity is ever left.
		return nil, invalidf("lease %s is within the clock drift allowance %s", lease, r.drift(lease))
	}
	for _, m := range r.nodes {
		if lease := m.cfg.watchdogLease; r.lease == 0 && m.cfg.watchdogEvery >= lease-r.drift(lease) {
			// The validity would run out between two renewals, each time.
			return nil, invalidf("watchdog renewals every %s leave the lease %s no validity after the clock drift allowance %s", m.cfg.watchdogEvery, lease, r.drift(lease))
		}
	}
	if lease := r.validityLease(); r.nodeTimeout >= lease {
		// A node may answer within its timeout after the lease has run out
		// on it: a majority counted so would hold no lock at all.
		return nil, invalidf("node timeout %s is not below the lease %s", r.nodeTimeout, lease)
	}
	if r.nodeTimeout == 0 {
		// Below the lease, as an explicit one must be: the 10ms floor is
		// not, for a lease under 20ms.
		lease := r.validityLease()
		r.nodeTimeout = min(max(lease/100, 10*time.Millisecond), 200*time.Millisecond, lease/2)
	}
	r.backNodes = r.nodes
	if !cfg.releaseSet {
		// An Unlock's releases are best effort per node: a node that does
		// not answer in time lets its lease expire (Unlock again asks it
		// again). Give-backs keep the Client's release timeout.
		r.backNodes = make([]*Mutex, len(r.nodes))
		for i, m := range r.nodes {
			back := *m
			r.backNodes[i] = &back
			cfg := *m.cfg // the node's Client's settings, shared with its other handles
			cfg.releaseTimeout = max(r.nodeTimeout, 50*time.Millisecond)
			m.cfg = &cfg
		}
	}
	return r, nil
}

// validityLease is the lease the validity is measured against: the explicit
// lease, or the shortest watchdog lease among the nodes' locks (their
// Clients' settings, or WithWatchdog given to NewRedLock).
func (r *RedLock) validityLease() time.Duration {
	if r.lease > 0 {
		return r.lease
	}
	var l time.Duration
	for _, m := range r.nodes {
		if l == 0 || m.cfg.watchdogLease < l {
			l = m.cfg.watchdogLease
		}
	}
	return l
}

// drift is the clock drift allowance for lease: lease × factor + extra, the
// longest Duration past that (an extra near it overflowed to a negative
// allowance, which left every validity check passing).
func (r *RedLock) drift(lease time.Duration) time.Duration {
	return addSat(time.Duration(float64(lease)*r.driftFactor), r.driftExtra)
}

var _ Locker = (*RedLock)(nil)

// Name returns the lock's name.
func (r *RedLock) Name() string { return r.name }

// Quorum is the number of nodes that must grant the lock: N/2 + 1.
func (r *RedLock) Quorum() int { return len(r.nodes)/2 + 1 }

// HeldOn reports, node by node in the order NewRedLock was given them, which
// nodes hold the lock for the hold lctx carries (a context Lock or TryLock
// returned, or one derived from it; a MultiLock's, for this RedLock among
// its members), as this process knows it: a node that
// granted it within the node timeout and whose hold there has not ended
// since (lost, or given back by Unlock); for a re-entrant Lock, the nodes
// that granted that re-entry, whose Unlock gives back those alone. A node
// that answered after the node timeout is not among them (its late grant is
// undone), so a Lock can stand on a bare quorum with every node up: one node
// less and it is lost. nil when lctx carries no hold of this RedLock.
func (r *RedLock) HeldOn(lctx context.Context) []bool {
	if lctx == nil {
		return nil
	}
	h, _ := lctx.Value(r.id).(*redHeld)
	if h == nil {
		// A MultiLock's: its RedLock member's own context carries it.
		mh, _ := lctx.Value(anyMultiKey{}).(*multiHeld)
		if mh == nil {
			return nil
		}
		for _, c := range mh.ctxs {
			if h, _ = c.Value(r.id).(*redHeld); h != nil {
				break
			}
		}
		if h == nil {
			return nil
		}
	}
	out := make([]bool, len(h.ctxs))
	for i, c := range h.ctxs {
		// Set when the attempt ended, before its context was returned;
		// each ends with the node's hold, or when this hold stops using it.
		out[i] = c != nil && c.Err() == nil
	}
	return out
}

// QuorumError reports an acquisition that did not reach a majority in time.
// errors.Is(err, ErrQuorum) is true; so is errors.Is(err, ErrNotAcquired) when
// at least one node refused because another owner holds the lock.
type QuorumError struct {
	Name     string
	Granted  int           // nodes that granted the lock in time
	Needed   int           // the quorum
	Nodes    int           // N
	Validity time.Duration // lease − elapsed − drift of the attempt (≤ 0: too slow)
	Errs     []error       // why the nodes that did not grant refused, in node order (ErrNotAcquired last when one was held by another owner)
}

func (e *QuorumError) Error() string {
	msg := fmt.Sprintf("scriptlock: redlock %q: %d of %d nodes granted, %d needed (validity %s)",
		e.Name, e.Granted, e.Nodes, e.Needed, e.Validity)
	if e.Validity <= 0 {
		// Said even when every node granted: then no node has an error.
		msg += ": the validity ran out (lease less elapsed time and clock drift) before the nodes answered"
	}
	if err := errors.Join(e.Errs...); err != nil {
		msg += ": " + err.Error()
	}
	return msg
}

// Unwrap makes errors.Is see ErrQuorum and each node's error.
func (e *QuorumError) Unwrap() []error {
	return append([]error{ErrQuorum}, e.Errs...)
}

// redOwned lists this process's RedLock holds by lock and owner.
var redOwned ownedHolds[redKey, *redHeld]

func (h *redHeld) registered() *ownedKey[redKey] { return &h.reg }
func (h *redHeld) endState() *atomic.Int32       { return &h.state }

type redHeld struct {
	owner  string
	reg    ownedKey[redKey]  // where redOwned registered it
	ctxs   []context.Context // per node; nil where not granted
	stops  []context.CancelCauseFunc
	cancel context.CancelCauseFunc
	// With an explicit lease: when the validity ends (monoNanos; Extend moves
	// it) and the timer that ends the context then.
	validUntil atomic.Int64
	validity   *time.Timer
	// mu orders an Extend's outcome with the end of the validity: the one
	// moves it, the other ends the hold, never both.
	mu sync.Mutex
	// extends counts the Extends in flight and extendSeq those sent
	// (guarded by mu): Extends that overlap run on the nodes in any order,
	// so one that another overlapped may not have set the leases the nodes
	// hold, and its outcome only moves the validity earlier.
	extends   int
	extendSeq uint64
	// state is endNone until Unlock (endUnlocked) or the loss of the quorum
	// or the validity (endLost) ends the hold, whichever comes first.
	state atomic.Int32
	// givenBack is closed once a lost hold's nodes are given back; lostBy
	// is why it was lost.
	givenBack chan struct{}
	lostBy    error
	// life ends with the hold (Unlock, or its loss, lostBy set first), not
	// with the context it was locked with.
	life context.Context
	// unreleased: the nodes whose release the last Unlock could not
	// confirm, which an Unlock again with the hold's context asks again.
	unreleased unreleasedParts
}

// unreleasedParts keeps the parts of a RedLock's or MultiLock's hold (its
// nodes, its members) whose release the last Unlock could not confirm
// (refused, as NO_PUBLISH is for an ACL user without the lock's channel, or
// unanswered): the hold has ended, and an Unlock made again with its
// context asks those parts again, and only those (a part released already
// may be held anew by its owner since).
type unreleasedParts struct {
	mu  sync.Mutex
	idx []int
	// unlocking is held by the Unlock that releases the hold's parts, and
	// by each Unlock made again: one made meanwhile waits for its outcome,
	// rather than answer ErrNotHeld while parts it may not release hold
	// their locks (begin).
	unlocking sync.Mutex
}

// begin takes unlocking for an Unlock of the hold, waiting for the Unlock
// that holds it, and reports whether it did (end gives it back). An Unlock
// made inside the package's own code (an Observer's callback, or a
// MultiLock's release of a RedLock member) while another holds it does not
// wait: that callback may be the holder's own, which waits for it.
func (u *unreleasedParts) begin() bool {
	if u.unlocking.TryLock() {
		return true
	}
	if calledBackFrom(isUnlock) {
		return false
	}
	u.unlocking.Lock()
	return true
}

// end gives back what begin took.
func (u *unreleasedParts) end() { u.unlocking.Unlock() }

// isUnlock reports the frame of a RedLock's or MultiLock's Unlock.
func isUnlock(fn string) bool {
	fn = strings.TrimSuffix(fn, "-fm")
	return strings.HasSuffix(fn, ".(*RedLock).Unlock") || strings.HasSuffix(fn, ".(*MultiLock).Unlock")
}

// keep records the parts an Unlock could not release (none: nothing left).
func (u *unreleasedParts) keep(idx []int) {
	u.mu.Lock()
	u.idx = idx
	u.mu.Unlock()
}

// take returns the parts to ask again and forgets them: an Unlock made
// again meanwhile finds none to ask (ErrNotHeld, as after a release).
func (u *unreleasedParts) take() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	idx := u.idx
	u.idx = nil
	return idx
}

// How a RedLock's or MultiLock's hold ended: first come, first served.
const (
	endNone     int32 = iota // held
	endUnlocked              // by Unlock
	endLost                  // lost, and given back
)

// validTill sets when the validity ends and re-arms the timer that ends the
// context then.
func (h *redHeld) validTill(until time.Time) {
	h.validUntil.Store(monoNanos(until))
	h.validity.Reset(time.Until(until))
}

// nodeLease is the lease an Extend with lease confirmed by the node hold
// lctx names leaves it: lease, or the shorter one of an Extend of that
// hold of unknown outcome, which may run after it (see
// Client.leaseUnknown).
func nodeLease(lctx context.Context, lease time.Duration) time.Duration {
	if lc, _ := lctx.(*lockCtx); lc != nil && lc.hold != nil {
		lc.hold.mu.Lock()
		if u := lc.hold.unknownLease; u > 0 && u < lease {
			lease = u
		}
		lc.hold.mu.Unlock()
	}
	return lease
}

// redCtx is a RedLock's context: its deadline is the validity, which
// Extend can move.
type redCtx struct {
	context.Context
	h    *redHeld
	name string
}

// Value answers no fencing token, for the RedLock's name or as the most
// recent lock's (Fence): a RedLock hands out none, and an enclosing lock's
// token, drawn from another counter, says nothing of the RedLock's holders.
func (c *redCtx) Value(key any) any {
	switch k := key.(type) {
	case anyFenceKey:
		return nil
	case fenceKey:
		if k.name == c.name {
			return nil
		}
	}
	return c.Context.Value(key)
}

func (c *redCtx) Deadline() (time.Time, bool) {
	ns := c.h.validUntil.Load()
	if ns == 0 {
		return c.Context.Deadline()
	}
	d := monoTime(ns)
	if pd, ok := c.Context.Deadline(); ok && pd.Before(d) {
		return pd, true
	}
	return d, true
}

// redKey names a RedLock's hold in its lock context: by the lock's name and
// its nodes' Clients, in order, so that every handle made for that RedLock
// (often one per request) finds the hold, as a Mutex handle finds one taken
// through another.
type redKey struct{ name, nodes string }

// Lock retries, with randomized backoff, until a majority grants the lock or
// ctx ends. Once so many of the nodes' Clients are closed that no majority
// is left, it fails with ErrClosed; once an attempt finds so many nodes
// refusing for good (another kind of lock holds the name there:
// ErrWrongKind; an ACL refuses the scripts: NOPERM; the password is
// refused: NOAUTH, WRONGPASS; any error reply a Mutex's Lock does not wait
// out; its Client is closed)
// that the others cannot make a majority, it fails with that attempt's
// *QuorumError, as a Mutex fails on such a node (TryLock with a wait too).
func (r *RedLock) Lock(ctx context.Context) (context.Context, error) {
	return r.acquire(ctx, -1)
}

// TryLock is Lock that gives up after wait (0: a single attempt) with a
// *QuorumError.
func (r *RedLock) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("redlock", r.name, invalidf("negative wait %s", wait))
	}
	return r.acquire(ctx, wait)
}

func (r *RedLock) acquire(ctx context.Context, wait time.Duration) (context.Context, error) {
	if ctx == nil {
		return nil, opError("redlock", r.name, invalidf("nil context"))
	}
	// Without an owner in ctx, every Lock call is a new owner.
	owner, ok := OwnerFrom(ctx)
	if !ok {
		owner = randomID()
	}
	var deadline, cut time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
		// As for a Mutex's wait: no call runs past this.
		cut = deadline.Add(addSat(waitOverrun, guardOverrun(r)))
	}
	// Each attempt checks, alongside, that no two nodes reach one server
	// (checkDistinct), until every node has been compared, and again once
	// that comparison has run out: the run_ids kept, a silent node
	// paused, a later one asks nothing, but a node not compared that
	// grants it is asked then.
	retry := backoff{cur: 10 * time.Millisecond, max: 250 * time.Millisecond}
	for {
		if r.closedQuorum() {
			// No majority can ever grant it: do not wait for ctx to end
			// (nor ask any server its run_id).
			return nil, opError("redlock", r.name, ErrClosed)
		}
		lctx, err := r.attempt(ctx, owner, cut, monoNow() >= r.checkedUntil.Load())
		if err == nil {
			return lctx, nil
		}
		var qe *QuorumError
		if !errors.As(err, &qe) {
			return nil, err
		}
		if r.closedQuorum() {
			return nil, fmt.Errorf("scriptlock: redlock %q: %w", r.name, errors.Join(ErrClosed, err))
		}
		if len(r.nodes)-refusedFor(qe) < r.Quorum() {
			// The others cannot make a majority: fail as a Mutex on such a
			// node does, not try again until ctx or the wait ends.
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("scriptlock: redlock %q: wait ended: %w", r.name, errors.Join(ctx.Err(), err))
		}
		if wait == 0 || (wait > 0 && !time.Now().Before(deadline)) {
			return nil, err
		}
		if werr := retry.wait(ctx, deadline); werr != nil {
			return nil, fmt.Errorf("scriptlock: redlock %q: wait ended: %w", r.name, errors.Join(werr, err))
		}
	}
}

// checkDistinct refuses a RedLock two of whose nodes reach one Redis server
// (Clients with rueidis clients of their own, to one address or to one
// Sentinel deployment): its majority would count that server more than
// once, and with the Clients' key prefixes apart, one server's grants would
// make the quorum. NewRedLock cannot tell (it calls no server); the first
// acquisition compares the nodes' servers' addresses (one address shared
// is one server unless run_ids asked afresh tell two apart), and asks each
// node's Client for its servers' run_id (INFO server, kept by the Client), within
// the node timeout (cut, when set, first) and ctx, while its attempt runs: a frozen node costs its timeout once, not
// once for the check and again for the attempt. The attempt's grants are
// handed out only once the check has passed. A node that does not answer is
// not compared (unless it grants the attempt the lock: attempt then asks it
// again, its pause aside, and gives its grant back, not counted, when it is
// silent again), and is asked again at a later attempt (after a pause,
// see Client.runIDs: a RedLock does without a minority of silent nodes),
// until every node has answered.
//
// It returns the nodes not compared. force: the nodes asked whatever their
// pause (they granted the lock: not silent).
func (r *RedLock) checkDistinct(ctx context.Context, cut time.Time, force []bool) ([]int, error) {
	begun := time.Now()
	end := begun.Add(r.nodeTimeout)
	if !cut.IsZero() && cut.Before(end) {
		end = cut
	}
	ctx, cancel := context.WithDeadlineCause(ctx, end, errNodeTimeout)
	defer cancel()
	// Nodes whose Clients name one address most often reach one server,
	// but not always: a DialCtxFn (a tunnel, an SNI proxy) may open each
	// Client's connections to a server of its own. Their run_ids, asked
	// afresh (not the ones a Client kept: a server restarted at the
	// address has a new one, which a Client made since reads while another
	// still has the old), decide.
	type sharing struct {
		j, i int
		addr string
	}
	var shared []sharing
	addrs := map[string]int{}
	fresh := make([]map[string]bool, len(r.nodes))
	for i, m := range r.nodes {
		if m.c.closed() {
			continue
		}
		for addr := range m.c.rc.Nodes() {
			j, ok := addrs[addr]
			if !ok {
				addrs[addr] = i
				continue
			}
			shared = append(shared, sharing{j, i, addr})
			for _, k := range []int{j, i} {
				if fresh[k] == nil {
					fresh[k] = map[string]bool{}
				}
				fresh[k][addr] = true
			}
		}
	}
	ids := make([]map[string]string, len(r.nodes))
	refused := make([]map[string]error, len(r.nodes))
	known := make([]bool, len(r.nodes))
	untils := make([]time.Time, len(r.nodes))
	var caught firstPanic
	var wg sync.WaitGroup
	for i, m := range r.nodes {
		if m.c.closed() {
			// It grants nothing, and a closed Client sends nothing more.
			known[i] = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			caught.run(func() { // goes on on the check's goroutine
				ids[i], refused[i], known[i], untils[i] = m.c.runIDs(ctx, fresh[i], force != nil && force[i])
			})
		}()
	}
	wg.Wait()
	if caught.set {
		// A node's INFO panicked (a client wrapper, say): the attempt
		// gives its grants back, and the panic reaches its caller.
		caught.goOn()
	}
	for i := range r.nodes {
		for addr, err := range refused[i] {
			// Without its run_id the node is compared with nothing: two
			// nodes refusing INFO, reached under two addresses, would
			// count one server twice. Not the Client's password refused
			// (a rotation under way) on a node that did not grant the
			// lock: asked again, as a silent node is.
			if !authRefused(err) || (force != nil && force[i]) {
				return nil, fmt.Errorf("%w: node %d: its server %s refused INFO server (%w): without its run_id a RedLock cannot tell whether two nodes reach one Redis server; allow the nodes' user INFO (ACL +info)", ErrInvalidArgument, i, addr, err)
			}
		}
	}
	for _, s := range shared {
		a, aok := ids[s.j][s.addr]
		b, bok := ids[s.i][s.addr]
		if !aok || !bok {
			continue // not told: not compared (and not known, asked again)
		}
		if a == "" || b == "" || a == b {
			// One address, and no run_ids that tell two servers apart.
			return nil, invalidf("nodes %d and %d reach one Redis server (address %s): a RedLock needs independent deployments", s.j, s.i, s.addr)
		}
	}
	seen := map[string]int{}
	for i := range r.nodes {
		for _, id := range ids[i] {
			if id == "" {
				continue
			}
			if j, ok := seen[id]; ok && j != i {
				return nil, invalidf("nodes %d and %d reach one Redis server (run_id %s): a RedLock needs independent deployments", j, i, id)
			}
			seen[id] = i
		}
	}
	var unknown []int
	for i, k := range known {
		if !k {
			unknown = append(unknown, i)
		}
	}
	if len(unknown) == 0 {
		// Good while the run_ids read are kept: once the first runs out,
		// a check asks its server again. Some may have been kept for a
		// while before this check (another RedLock over the Client asked
		// them): counted from their asking, not from this check.
		var until time.Time
		for _, u := range untils {
			if !u.IsZero() && (until.IsZero() || u.Before(until)) {
				until = u
			}
		}
		if until.IsZero() {
			// None read (every node's Client closed): asked again next time.
			until = begun
		}
		r.checkedUntil.Store(monoNanos(until))
	}
	return unknown, nil
}

// refusedFor counts the nodes of a failed attempt that refused for a reason
// trying again does not change, on which a Mutex's Lock fails at once:
// another kind of lock holds the name there, the call is invalid there, its
// Client is closed (with such a refusal on another node, closedQuorum alone
// does not see that no majority is left), or the node answered with an
// error no retry changes (refusedForGood: an ACL's NOPERM, the Client's
// password refused after a change, NOAUTH or WRONGPASS). Not the refusals
// that pass (retryLater: LOADING, MISCONF until a save succeeds again, ...),
// on which a RedLock that gave up would fail where waiting takes the lock.
func refusedFor(qe *QuorumError) int {
	n := 0
	for _, e := range qe.Errs {
		if errors.Is(e, ErrWrongKind) || errors.Is(e, ErrInvalidArgument) || errors.Is(e, ErrClosed) || refusedForGood(e) {
			n++
		}
	}
	return n
}

// closedQuorum reports whether so many nodes' Clients are closed that the
// others cannot make a majority.
func (r *RedLock) closedQuorum() bool {
	open := 0
	for _, m := range r.nodes {
		if !m.c.closed() {
			open++
		}
	}
	return open < r.Quorum()
}

// attempt is one round of the algorithm. When cut is set (TryLock with a
// wait), no node's call runs past it, and the release of the grants goes on
// in the background past it. With check, it asks the nodes' run_ids
// (checkDistinct) while the nodes are tried, and gives back every grant when
// two nodes reach one server.
func (r *RedLock) attempt(ctx context.Context, owner string, cut time.Time, check bool) (context.Context, error) {
	n := len(r.nodes)
	h := &redHeld{owner: owner, ctxs: make([]context.Context, n), stops: make([]context.CancelCauseFunc, n)}
	errs := make([]error, n)
	var caught firstPanic
	start := time.Now()
	type checkResult struct {
		unknown []int // the nodes not compared
		err     error
	}
	var checked chan checkResult
	if check {
		checked = make(chan checkResult, 1)
		go func() {
			var res checkResult
			defer func() { checked <- res }()
			caught.run(func() { // goes on on the caller's goroutine
				res.unknown, res.err = r.checkDistinct(ctx, cut, nil)
			})
		}()
	}
	var wg sync.WaitGroup
	for i, m := range r.nodes {
		h.stops[i] = func(error) {}
		wg.Add(1)
		go func() {
			defer wg.Done()
			caught.run(func() {
				// A deadline, not a cancellation: rueidis bounds a call on an idle
				// connection by the deadline only.
				end := time.Now().Add(r.nodeTimeout)
				if !cut.IsZero() && cut.Before(end) {
					end = cut
				}
				// Its cause tells the node's call that the RedLock, not the
				// caller, cut it off (observed as unanswered, not timed out).
				nctx, cancel := nodeCallContext(WithOwner(ctx, owner), end)
				tctx, err := m.TryLock(nctx, 0)
				cancel()
				if na := (*NotAcquiredError)(nil); errors.As(err, &na) && na.Unanswered {
					// The node timeout, the wait's end or that of a MultiLock
					// taking the RedLock cut the call off: the node did not
					// answer in time. Not ErrNotAcquired, which in a
					// QuorumError says another owner held a node.
					err = fmt.Errorf("lock %q: the server did not answer in time: %w", r.name, context.DeadlineExceeded)
				}
				if err != nil {
					errs[i] = fmt.Errorf("node %d: %w", i, nested(err))
					return
				}
				if lc, _ := tctx.Value(lockCtxKey{}).(*lockCtx); lc != nil && lc.hold != nil {
					lc.hold.untrack(tctx) // ended with nctx: forget it
				}
				// The context TryLock returned ends with nctx: tie a new one to
				// the node's hold instead, and to the hold alone: the RedLock
				// stays held when ctx ends, and must still see the node's loss.
				lctx, stop, ok := m.c.holdContext(context.WithoutCancel(ctx), m, owner)
				if !ok {
					errs[i] = fmt.Errorf("node %d: %w", i, ErrLockLost)
					return
				}
				h.ctxs[i], h.stops[i] = lctx, stop
			})
		}()
	}
	wg.Wait()
	var checkErr error
	var silent []int // granted, their run_id still untold
	if checked != nil {
		res := <-checked // within the node timeout too
		checkErr = res.err
		force := make([]bool, n)
		again := false
		for _, i := range res.unknown {
			// A node not compared (its INFO unanswered, or paused after
			// one was) that granted the lock answers: its grant counts
			// only once its run_id is compared too.
			if h.ctxs[i] != nil {
				force[i], again = true, true
			}
		}
		if checkErr == nil && again && !caught.set {
			// On a goroutine of its own, as the first check: a Goexit
			// there (a client wrapper's on INFO server, which nothing
			// stops) is kept, and goes on below once the grants are given
			// back. On this one it ended the caller at once, the grants
			// held and renewed for nobody.
			done := make(chan struct{})
			go func() {
				defer close(done)
				caught.run(func() { // goes on below
					var still []int
					still, checkErr = r.checkDistinct(ctx, cut, force)
					for _, i := range still {
						if force[i] {
							silent = append(silent, i)
						}
					}
				})
			}()
			<-done
		}
	}
	if caught.set {
		// A node's call panicked (an Observer's AcquireEnd, after that
		// node's grant was given back): the caller never receives the
		// others' grants either. The panic goes on on the caller's goroutine.
		func() {
			bound, stop := r.giveBackBound(context.Background(), cut)
			defer stop() // also when a release panics
			r.releaseAll(ctx, h, true, bound)
		}()
		caught.goOn()
	}
	if checkErr != nil {
		// Two nodes reach one server: whatever they granted is given back,
		// and the caller never holds it.
		func() {
			bound, stop := r.giveBackBound(ctx, cut)
			defer stop() // also when a release panics
			r.releaseAll(ctx, h, true, bound)
		}()
		return nil, opError("redlock", r.name, checkErr)
	}
	if len(silent) > 0 {
		// Asked again, a node that granted left its run_id untold: it may
		// reach a server another node reaches, and its grant counts as no
		// answer. Given back at once, as a grant that came too late.
		drop := &redHeld{owner: owner, ctxs: make([]context.Context, n), stops: make([]context.CancelCauseFunc, n)}
		for i := range drop.stops {
			drop.stops[i] = func(error) {}
		}
		for _, i := range silent {
			drop.ctxs[i], drop.stops[i] = h.ctxs[i], h.stops[i]
			h.ctxs[i], h.stops[i] = nil, func(error) {}
			errs[i] = fmt.Errorf("node %d: lock %q: the server did not tell its run_id in time (its grant is not counted): %w", i, r.name, context.DeadlineExceeded)
		}
		func() {
			bound, stop := r.giveBackBound(ctx, cut)
			defer stop() // also when a release panics
			r.releaseAll(ctx, drop, true, bound)
		}()
	}
	granted := 0
	for _, c := range h.ctxs {
		if c != nil {
			granted++
		}
	}
	lease := r.validityLease()
	drift := r.drift(lease)
	validity := lease - time.Since(start) - drift
	if granted >= r.Quorum() && validity > 0 && ctx.Err() == nil {
		return r.bind(ctx, h, start.Add(lease-drift)), nil
	}
	// Give back the grants. Where none came back in time the node's TryLock
	// undoes, by owner, what its attempt may have left. Not past ctx's end
	// (giveBackBound), a cancellation during the releases too: a node that
	// stopped answering would keep the caller for its release timeout.
	func() {
		bound, stop := r.giveBackBound(ctx, cut)
		defer stop() // also when a release panics
		r.releaseAll(ctx, h, true, bound)
	}()
	var nodeErrs []error
	contended := false
	for _, e := range errs {
		if e != nil {
			nodeErrs = append(nodeErrs, e)
			contended = contended || errors.Is(e, ErrNotAcquired)
		}
	}
	if contended {
		nodeErrs = append(nodeErrs, ErrNotAcquired)
	}
	return nil, &QuorumError{Name: r.name, Granted: granted, Needed: r.Quorum(), Nodes: n, Validity: validity, Errs: nodeErrs}
}

// bind builds the RedLock's context: cancelled with ErrLockLost when fewer
// than a quorum of nodes still hold the lock, or (explicit lease) when the
// validity ends.
func (r *RedLock) bind(ctx context.Context, h *redHeld, validUntil time.Time) context.Context {
	rctx, cancelCtx := context.WithCancelCause(WithOwner(ctx, h.owner))
	// life ends with the hold (Unlock, or its loss), not with ctx: a hold
	// whose ctx ended stays held until Unlock, and its validity and its
	// nodes are watched until then.
	life, endLife := context.WithCancel(context.Background())
	cancel := func(cause error) { cancelCtx(cause); endLife() }
	h.cancel, h.life = cancel, life
	h.givenBack = make(chan struct{})
	// end marks the hold lost, under h.mu, unless it ended already.
	end := func(cause error) bool {
		if !h.state.CompareAndSwap(endNone, endLost) {
			return false
		}
		h.lostBy = cause
		redOwned.lost(h)
		return true
	}
	// lose ends the hold as lost; closing: a node's Client was closed,
	// which ends its holds unlogged.
	lose := func(cause error, closing bool) {
		h.mu.Lock()
		lost := end(cause)
		h.mu.Unlock()
		if lost {
			// The context ends first, and the nodes still holding it are
			// given back (as releases, in the background): a log sink that
			// stalls must not keep the owner working under a lock that is
			// gone, nor their watchdogs renewing it for nobody.
			cancel(cause)
			r.giveBack(h)
			if !closing {
				// Logged as any loss is (on the first node's Client).
				r.nodes[0].c.log.Warn("lock lost", "lock", r.name, "redlock", true, "reason", cause.Error())
			}
		}
	}
	if r.lease > 0 {
		h.validUntil.Store(monoNanos(validUntil))
		h.validity = time.AfterFunc(time.Until(validUntil), func() {
			cause := fmt.Errorf("scriptlock: redlock %q: validity ended: %w", r.name, ErrLockLost)
			h.mu.Lock()
			// Unless Extend moved it while the timer fired.
			lost := monoNanos(r.clock()) >= h.validUntil.Load() && end(cause)
			h.mu.Unlock()
			if lost {
				cancel(cause)
				r.giveBack(h)
			}
		})
		context.AfterFunc(life, func() { h.validity.Stop() })
	} else {
		r.watchValidity(life, h, validUntil, lose)
	}
	var mu sync.Mutex
	live := 0
	for _, c := range h.ctxs {
		if c != nil {
			live++
		}
	}
	for i, c := range h.ctxs {
		if c == nil {
			continue
		}
		context.AfterFunc(c, func() {
			if lc, _ := c.(*lockCtx); lc == nil || !lc.hold.released() {
				return // stopped (a share of a re-entered hold given up), not the node's hold
			}
			cause := context.Cause(c)
			if !errors.Is(cause, ErrLockLost) && !errors.Is(cause, ErrClosed) {
				if h.state.Load() != endNone {
					return // released by Unlock, or given back
				}
				// Released through the node's own handle: not held there.
				cause = fmt.Errorf("%w: released through the node's own handle", ErrLockLost)
			}
			mu.Lock()
			live--
			left := live
			mu.Unlock()
			if left < r.Quorum() {
				lose(fmt.Errorf("scriptlock: redlock %q: %d of %d nodes still hold it, %d needed (node %d: %v): %w",
					r.name, left, len(r.nodes), r.Quorum(), i, cause, ErrLockLost), errors.Is(cause, ErrClosed))
			}
		})
	}
	redOwned.own(ownedKey[redKey]{r.id, h.owner}, h)
	return &redCtx{Context: context.WithValue(rctx, r.id, h), h: h, name: r.name}
}

// watchValidity ends a RedLock the watchdog renews (lose) once fewer than a
// quorum of nodes have confirmed a renewal within lease − drift. Each node's
// hold is presumed lost only at its lease less its own loss margin, which a
// wider drift allowance (WithClockDrift) outlasts: a node whose clock runs
// that much faster may have let the key expire and granted it to another
// owner while the context was still live. With a drift within the margin,
// the nodes' loss deadlines end it in time and nothing is watched.
// acquired is the validity the acquisition left. It watches until life
// (the hold) ends.
func (r *RedLock) watchValidity(life context.Context, h *redHeld, acquired time.Time, lose func(error, bool)) {
	type node struct {
		h     *hold
		extra time.Duration // drift beyond the hold's loss margin
	}
	var nodes []node
	wider := false
	for _, c := range h.ctxs {
		lc, _ := c.(*lockCtx)
		if lc == nil || lc.hold == nil {
			continue
		}
		extra := r.drift(lc.hold.lease) - lossMargin(lc.hold.lease)
		wider = wider || extra > 0
		nodes = append(nodes, node{lc.hold, max(extra, 0)})
	}
	if !wider {
		return
	}
	// validUntil is when the quorum-th latest node's validity ends; ok is
	// false once too few nodes hold it (their losses end the RedLock).
	validUntil := func() (time.Time, bool) {
		ends := make([]int64, 0, len(nodes))
		for _, n := range nodes {
			if n.h.released() {
				continue
			}
			at := n.h.lossAt.Load()
			end := at - int64(n.extra)
			if at == 0 {
				end = monoNanos(acquired) // not armed yet: the attempt's own
			}
			ends = append(ends, end)
		}
		if len(ends) < r.Quorum() {
			return time.Time{}, false
		}
		slices.Sort(ends)
		return monoTime(ends[len(ends)-r.Quorum()]), true
	}
	var (
		mu      sync.Mutex
		stopped bool
		t       *time.Timer
	)
	check := func() {
		until, ok := validUntil()
		if !ok {
			return
		}
		if !r.clock().Before(until) {
			lose(fmt.Errorf("scriptlock: redlock %q: fewer than %d of %d nodes confirmed a renewal within the validity (drift %s): %w",
				r.name, r.Quorum(), len(r.nodes), r.drift(r.validityLease()), ErrLockLost), false)
			return
		}
		mu.Lock()
		if !stopped {
			t.Reset(time.Until(until)) // a renewal moved it later
		}
		mu.Unlock()
	}
	until, ok := validUntil()
	if !ok {
		return
	}
	mu.Lock()
	t = time.AfterFunc(time.Until(until), check)
	mu.Unlock()
	context.AfterFunc(life, func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	})
}

// giveBackBound is giveBackBound for the give-back of a failed attempt's
// grants, cut at most a node timeout from now: the caller waits no longer
// than an Unlock's release of a node would, and the releases go on (bounded
// by their Clients' release timeouts, see backNodes) in the background.
func (r *RedLock) giveBackBound(ctx context.Context, cut time.Time) (<-chan struct{}, func()) {
	if end := time.Now().Add(r.nodeTimeout); cut.IsZero() || end.Before(cut) {
		cut = end
	}
	return giveBackBound(ctx, cut)
}

// giveBack releases, in the background of each node's Client (Close waits
// for it), the nodes that still hold a lost RedLock: their watchdogs would
// otherwise keep a minority of nodes locked until Unlock, which a caller
// that takes the lost context as the end may never call.
func (r *RedLock) giveBack(h *redHeld) {
	var wg sync.WaitGroup
	for i, m := range r.nodes {
		nctx := h.ctxs[i]
		if nctx == nil {
			continue
		}
		if lc, _ := nctx.(*lockCtx); lc != nil && lc.hold.released() {
			h.stops[i](context.Canceled) // lost there: nothing to give back
			continue
		}
		wg.Add(1)
		release := func() {
			defer wg.Done()
			defer h.stops[i](context.Canceled)
			// No caller to reach.
			observerCall(m.c.log, "ReleaseStart", func() { _ = r.backNodes[i].Unlock(givenBack(nctx)) })
		}
		if !m.c.background(release) {
			go release() // Close has begun: it ends the hold anyway
		}
	}
	go func() {
		wg.Wait()
		close(h.givenBack)
	}()
}

// inGiveBack reports whether its caller runs inside the give-back of a
// lost RedLock's nodes (giveBack: an Observer's ReleaseStart there), which
// an Unlock of that hold must not wait for: the give-back waits for it.
func inGiveBack() bool { return inFrame(".(*RedLock).giveBack.") }

// inMultiGiveBack is inGiveBack for the give-back of a lost MultiLock's
// members, also on a goroutine a member's Unlock made by it started to
// release one of its own parts (goPart), and in a RedLock's give-back of
// its nodes, which that of a MultiLock waits for when its RedLock member,
// given back, was lost too.
func inMultiGiveBack() bool {
	return inFrame(".(*MultiLock).giveBack.", ".releaseInGiveBack", ".(*RedLock).giveBack.")
}

// inFrame reports whether a function of the package whose name contains
// one of fns is among its caller's callers.
func inFrame(fns ...string) bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(3, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if path.Dir(f.File) == ownDir && slices.ContainsFunc(fns, func(fn string) bool { return strings.Contains(f.Function, fn) }) {
			return true
		}
		if !more {
			return false
		}
	}
}

// firstPanic keeps the first panic of several goroutines, or the first
// runtime.Goexit that ended one of them, to go on with it on their caller's
// goroutine once they are all done (goOn): a goroutine's work that ended it
// left no outcome, and its zero value would pass for one.
type firstPanic struct {
	mu     sync.Mutex
	set    bool // a panic or a Goexit was kept
	exited bool // what was kept is a Goexit
	value  any
}

// run runs f, one of the goroutines' work, and keeps its panic (catch) or
// its Goexit.
func (p *firstPanic) run(f func()) {
	p.watch(func() {
		if v, _, panicked := catch(f); panicked {
			p.keep(v)
		}
	})
}

// runIn is run for a goroutine that runs under ctx: the panic's stack is
// kept there too (keepPanicStackAt), for a log once it has gone on on the
// caller's goroutine.
func (p *firstPanic) runIn(ctx context.Context, f func()) {
	p.watch(func() {
		if v, stack, panicked := catch(f); panicked {
			keepPanicStackAt(ctx, v, stack)
			p.keep(v)
		}
	})
}

// watch runs f, which recovers any panic, and keeps its Goexit, which goes
// on ending the goroutine.
func (p *firstPanic) watch(f func()) {
	returned := false
	defer func() {
		if !returned {
			p.exit()
		}
	}()
	f()
	returned = true
}

// exit keeps a Goexit of one of the goroutines' work.
func (p *firstPanic) exit() {
	p.mu.Lock()
	if !p.set {
		p.set, p.exited = true, true
	}
	p.mu.Unlock()
}

// goOn goes on with what was kept (set): its panic, or a Goexit, which
// ends the caller's goroutine as the work would have made on it.
func (p *firstPanic) goOn() {
	p.mu.Lock()
	exited, v := p.exited, p.value
	p.mu.Unlock()
	if exited {
		runtime.Goexit()
	}
	panic(v)
}

func (p *firstPanic) keep(v any) {
	p.mu.Lock()
	if !p.set {
		p.set, p.value = true, v
	}
	p.mu.Unlock()
}

// panicStackKey is the context key of a panicStack.
type panicStackKey struct{}

// panicStack is where the stacks of the panics recovered under a context
// are kept (withPanicStack), each by the goroutine that recovers it first
// before carrying it on to its caller's (cuttable, a guarded batch's slot
// groups): the stack taken where it is logged at last does not name the
// client wrapper that panicked. Each is kept with its panic: of several
// (a guarded batch's slot groups), the one carried on is the first to
// reach the batch, not always the first recovered.
type panicStack struct {
	mu   sync.Mutex
	kept []keptPanic
}

type keptPanic struct {
	v     any
	stack string
}

// keptPanics bounds the stacks a panicStack keeps.
const keptPanics = 16

// withPanicStack returns ctx carrying a new panicStack.
func withPanicStack(ctx context.Context) (context.Context, *panicStack) {
	p := &panicStack{}
	return context.WithValue(ctx, panicStackKey{}, p), p
}

// keepPanicStackAt keeps stack, taken where panic v was recovered, in
// ctx's panicStack, if it has one and none was kept for v.
func keepPanicStackAt(ctx context.Context, v any, at string) {
	if p, _ := ctx.Value(panicStackKey{}).(*panicStack); p != nil {
		p.keep(v, at)
	}
}

func (p *panicStack) keep(v any, stack string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range p.kept {
		if samePanic(k.v, v) {
			return // the first recovered is where it was raised
		}
	}
	if len(p.kept) < keptPanics {
		p.kept = append(p.kept, keptPanic{v, stack})
	}
}

// of is the stack kept for panic v, else stack's.
func (p *panicStack) of(v any, stack func() []byte) string {
	p.mu.Lock()
	for _, k := range p.kept {
		if samePanic(k.v, v) {
			p.mu.Unlock()
			return k.stack
		}
	}
	p.mu.Unlock()
	return string(stack())
}

// samePanic reports whether a and b are the same panic value: false for
// values Go cannot compare (whose == panics).
func samePanic(a, b any) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// errNodeTimeout ends a RedLock node's call at its node timeout (or the
// wait's end).
var errNodeTimeout = errors.New("node timeout")

// nodeCallContext is ctx ended at end, a node's call's timeout, with the
// cause errNodeTimeout. It carries end (nodeDeadlineKey): a call that sees
// end pass before the context's timer has run (late on a loaded machine)
// tells the node timeout from the caller's deadline by it (cutByOuterWait).
func nodeCallContext(ctx context.Context, end time.Time) (context.Context, context.CancelFunc) {
	nctx, cancel := context.WithDeadlineCause(ctx, end, errNodeTimeout)
	return context.WithValue(nctx, nodeDeadlineKey{}, end), cancel
}

// nodeDeadlineKey holds the node timeout of a RedLock node's call's context.
type nodeDeadlineKey struct{}

// clock is its first node's Client's clock (see Client.clock).
func (r *RedLock) clock() time.Time { return r.nodes[0].c.clock() }

// releaseAll unlocks on every node in parallel and returns each node's error.
// A hold of this RedLock (known: an attempt's, or the one an Unlock's
// context names) is given back only where it was granted. Elsewhere the
// node's TryLock has undone whatever its attempt may have left (by owner,
// keeping the holds the Client knows of), and a release by owner there could
// give up a hold that a goroutine sharing the owner registers meanwhile,
// while that goroutine's RedLock context stays live. Releases still running
// once bound ends (nil: never, see giveBackBound) go on in the background of
// their node's Client; the errors are then not known and not returned. A
// release's panic reaches the caller once every release is done, unless the
// caller stopped waiting at bound first: it is then logged.
// With bound nil the panic is returned (a node's release that panicked
// errs with errReleasePanicked, unless its hold was given back:
// panickedRelease), for Unlock to keep the nodes to ask again first
// (unlockedAll).
func (r *RedLock) releaseAll(ctx context.Context, h *redHeld, known bool, bound <-chan struct{}) ([]error, releasePanic) {
	errs := make([]error, len(r.nodes))
	var caught firstPanic
	var (
		mu   sync.Mutex
		left bool // the caller stopped waiting at bound
	)
	var wg sync.WaitGroup
	hook := r.releaseHook // read once: releases may outlive the call
	for i, m := range r.nodes {
		uctx := h.ctxs[i]
		if uctx == nil {
			if known {
				errs[i] = ErrNotHeld
				continue
			}
			if m.c.holdsLocally(m, h.owner) {
				// The owner holds the node through a RedLock context: that
				// context's Unlock gives it up. Not released here.
				errs[i] = ErrNotHeld
				continue
			}
			uctx = WithOwner(context.WithoutCancel(ctx), h.owner)
		}
		if ctx.Value(givenBackKey{}) != nil {
			// This RedLock is a member given back by a lost MultiLock: so
			// are its nodes' holds, for the Observer.
			uctx = givenBack(uctx)
		}
		wg.Add(1)
		release := func() {
			defer wg.Done()
			defer h.stops[i](context.Canceled)
			returned := false
			defer func() {
				if returned {
					return
				}
				// The release ended its goroutine (runtime.Goexit): its
				// outcome unknown, as a panic's, and the Goexit goes on on
				// the caller's goroutine. No caller left: nothing to reach.
				mu.Lock()
				if !left {
					errs[i] = panickedRelease(m, uctx)
					caught.exit()
				}
				mu.Unlock()
			}()
			var err error
			v, stack, panicked := catch(func() {
				if hook != nil {
					hook(i)
				}
				if bound != nil {
					// Nobody waits past bound: the Client's release timeout.
					err = r.backNodes[i].Unlock(uctx)
				} else {
					err = m.Unlock(uctx)
				}
			})
			returned = true
			mu.Lock()
			defer mu.Unlock()
			switch {
			case panicked && left:
				// No caller left to reach.
				m.c.log.Error("Observer panicked; event dropped", "method", "ReleaseStart", "panic", v, "stack", stack)
			case panicked:
				// Its outcome unknown, unless its hold was given back:
				// asked again by an Unlock again.
				errs[i] = panickedRelease(m, uctx)
				caught.keep(v)
			case !left:
				errs[i] = err
			}
		}
		if bound == nil || !m.c.background(release) {
			goPart(ctx, release)
		}
	}
	if bound == nil {
		wg.Wait()
		// A node's release panicked (an Observer's ReleaseStart, the
		// release itself done): every node's release has run.
		return errs, releasePanic{&caught}
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-bound:
		mu.Lock()
		left = true
		mu.Unlock()
	}
	caught.mu.Lock()
	set := caught.set
	caught.mu.Unlock()
	if set {
		// A node's release panicked (an Observer's ReleaseStart, the
		// release itself done), or ended its goroutine, before the caller
		// stopped waiting.
		caught.goOn()
	}
	return nil, releasePanic{}
}

// panickedRelease is the outcome of node m's release with uctx that
// panicked or ended its goroutine: errReleasePanicked, for an Unlock again
// to ask the node again, unless the node's hold uctx names was given back
// before (an Observer's ReleaseStart or ReleaseEnd, the release made and
// recorded): asked again, it would give up another hold of the owner's
// there (a re-entrant Lock of the RedLock), whose context lives on.
func panickedRelease(m *Mutex, uctx context.Context) error {
	if gaveBack(m, uctx) {
		return nil
	}
	return errReleasePanicked
}

// releasePanic is the panic (or Goexit) of a node's release, if any (nil:
// none), which goes on to Unlock's caller once the nodes whose release
// failed are kept.
type releasePanic struct {
	caught *firstPanic
}

// errReleasePanicked is the outcome of a node's release that panicked.
var errReleasePanicked = errors.New("release panicked")

// unlockedAll is unlocked, then the panic of a node's release, if any,
// goes on: the nodes whose release failed are kept for an Unlock again
// first.
func (r *RedLock) unlockedAll(held, h *redHeld, errs []error, p releasePanic) error {
	err := r.unlocked(held, h, errs)
	if p.caught != nil && p.caught.set {
		p.caught.goOn()
	}
	return err
}

// Unlock releases the lock on every node. ctx should be the context Lock
// returned (or one derived from it), through this handle or another made
// for the same name and Clients in the same order. A context that only names
// the owner (WithOwner) gives back that owner's most recent hold of the
// RedLock taken in this process, as its context would (that hold lost
// while an earlier one lives: ErrNotHeld, releasing nothing, and the next
// such Unlock gives back the earlier one), or else what the owner holds on
// the nodes that this process does not hold. It fails with
// ErrNotHeld when no node held the lock, and otherwise reports the nodes that held it but could not
// be reached or refused the release (their lease runs out on its own; not
// ErrNotHeld, even when no node could be reached). Unlock again with the
// same context asks those nodes again (once the ACL user may publish the
// release, say), releasing the lock there by owner if it is still held; it
// fails with ErrNotHeld once no node is left to ask. An Unlock made while
// another of the same hold is releasing it waits for that one's outcome,
// and is then an Unlock made again (one that only names the owner too,
// when that hold is the owner's most recent). A RedLock whose context ended
// with ErrLockLost has given its nodes back already: Unlock waits for that
// and fails with ErrNotHeld, as for a lost Mutex (one made from an Observer
// callback of that give-back does not wait for it).
func (r *RedLock) Unlock(ctx context.Context) error {
	if ctx == nil {
		return opError("unlock redlock", r.name, invalidf("nil context"))
	}
	h, _ := ctx.Value(r.id).(*redHeld)
	known := h != nil
	if h == nil {
		owner, ok := OwnerFrom(ctx)
		if !ok {
			return fmt.Errorf("scriptlock: unlock redlock %q: %w (the context names no owner: pass the context Lock returned)", r.name, ErrNotHeld)
		}
		for {
			var found int
			if h, found, _ = redOwned.ownedOrUnlocking(ownedKey[redKey]{r.id, owner}); h == nil {
				break
			}
			if found == ownedLost {
				// The owner's most recent hold here was lost, while an
				// earlier one lives: answered as its own context's Unlock
				// is, releasing nothing (the earlier hold is not this one).
				if !inGiveBack() {
					<-h.givenBack
				}
				return fmt.Errorf("scriptlock: unlock redlock %q: %w (%v)", r.name, ErrNotHeld, h.lostBy)
			}
			unlocking := found == ownedUnlocking
			// The hold's unlocking is taken before it is marked, as with
			// its context: an Unlock with its context that took it first
			// releases the nodes, and this one waits for its outcome.
			begun := h.unreleased.begin()
			if !unlocking && r.startUnlock(h) {
				// The owner's most recent hold here: given back as
				// through its own context.
				known = true
				defer redOwned.doneUnlock(h)
				if begun {
					defer h.unreleased.end()
				}
				h.cancel(context.Canceled)
				break
			}
			if unlocking || h.state.Load() == endUnlocked {
				// Being released, or released, by another Unlock: its
				// outcome is waited for, and this is an Unlock made again,
				// as one with the hold's context is (its nodes still held
				// here would read as not held).
				if begun {
					defer h.unreleased.end()
				}
				return r.unlockAgain(ctx, h)
			}
			// Lost meanwhile (disowned): the owner's holds are looked at
			// again.
			if begun {
				h.unreleased.end()
			}
		}
		if h == nil {
			h = &redHeld{owner: owner, ctxs: make([]context.Context, len(r.nodes)), stops: make([]context.CancelCauseFunc, len(r.nodes))}
			for i := range h.stops {
				h.stops[i] = func(error) {}
			}
		}
	} else if begun := h.unreleased.begin(); !r.startUnlock(h) {
		// Taken before the state is: an Unlock made meanwhile finds the
		// outcome of the one still releasing the nodes.
		if begun {
			defer h.unreleased.end()
		}
		if h.state.Load() == endLost {
			// Answered: kept no longer as the marker of the owner's most
			// recent hold (see ownedHolds.lost).
			redOwned.disown(h)
			if !inGiveBack() {
				<-h.givenBack
			}
			return fmt.Errorf("scriptlock: unlock redlock %q: %w (%v)", r.name, ErrNotHeld, h.lostBy)
		}
		return r.unlockAgain(ctx, h)
	} else {
		defer redOwned.doneUnlock(h)
		if begun {
			defer h.unreleased.end()
		}
		h.cancel(context.Canceled)
	}
	errs, p := r.releaseAll(ctx, h, known, nil)
	if !known {
		return r.unlockedAll(nil, h, errs, p)
	}
	return r.unlockedAll(h, h, errs, p)
}

// startUnlock is redOwned.startUnlock, after unlockHook.
func (r *RedLock) startUnlock(h *redHeld) bool {
	if hook := r.unlockHook; hook != nil {
		hook()
	}
	return redOwned.startUnlock(h)
}

// unlockAgain is an Unlock made again of h, unlocked already: the nodes
// whose release the last Unlock could not confirm are asked again, by their
// holds' contexts (by owner, unless the owner holds the node anew), as a
// Mutex's Unlock made again is; none left is ErrNotHeld.
func (r *RedLock) unlockAgain(ctx context.Context, h *redHeld) error {
	redOwned.againUnlock(h) // an Unlock by owner meanwhile waits for it too
	defer redOwned.doneUnlock(h)
	again := h.unreleased.take()
	if len(again) == 0 {
		return fmt.Errorf("scriptlock: unlock redlock %q: %w (already unlocked)", r.name, ErrNotHeld)
	}
	retry := &redHeld{owner: h.owner, ctxs: make([]context.Context, len(r.nodes)), stops: make([]context.CancelCauseFunc, len(r.nodes))}
	for i := range retry.stops {
		retry.stops[i] = func(error) {}
	}
	for _, i := range again {
		retry.ctxs[i] = h.ctxs[i]
	}
	errs, p := r.releaseAll(ctx, retry, true, nil)
	return r.unlockedAll(h, retry, errs, p)
}

// unlocked reports the releases of Unlock (errs, by node) of the nodes
// asked (h's: those granted when known, or every node), and keeps, on
// held (nil: none to keep them on), the nodes whose release failed for an
// Unlock again.
func (r *RedLock) unlocked(held, h *redHeld, errs []error) error {
	known := held != nil
	released := 0
	var unreleased []int
	var failed []error
	for i, err := range errs {
		switch {
		case err == nil:
			released++
		case errors.Is(err, ErrNotHeld):
		case known && h.ctxs[i] == nil:
			// Not granted at acquisition: the release there was a courtesy
			// for a grant that may have landed late.
		default:
			failed = append(failed, fmt.Errorf("node %d: %w", i, nested(err)))
			unreleased = append(unreleased, i)
		}
	}
	if released == 0 && len(failed) == 0 {
		return fmt.Errorf("scriptlock: unlock redlock %q: %w", r.name, ErrNotHeld)
	}
	if len(failed) > 0 {
		// Not ErrNotHeld, even when no node confirmed: the nodes that could
		// not be reached, or refused, may hold the lock until their lease
		// ends (their holds here ended: no watchdog renews it).
		if !known {
			return fmt.Errorf("scriptlock: unlock redlock %q: %w", r.name, errors.Join(failed...))
		}
		held.unreleased.keep(unreleased)
		return fmt.Errorf("scriptlock: unlock redlock %q: nodes %v may hold it until its lease ends there (Unlock again with this context asks them again): %w",
			r.name, unreleased, errors.Join(failed...))
	}
	return nil
}

// holdsLocally reports whether this Client holds m for owner.
func (c *Client) holdsLocally(m *Mutex, owner string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holds[holdID(m.key, c.id+":"+owner)] != nil
}

// holdContext returns a context, derived from parent, that the hold of m by
// owner ends (with ErrLockLost when the lock is lost, context.Canceled when
// released); ok is false when this Client holds no such lock.
func (c *Client) holdContext(parent context.Context, m *Mutex, owner string) (context.Context, context.CancelCauseFunc, bool) {
	c.mu.Lock()
	h := c.holds[holdID(m.key, c.id+":"+owner)]
	c.mu.Unlock()
	if h == nil {
		return nil, nil, false
	}
	cctx, cancel := context.WithCancelCause(parent)
	// A lock context of this hold: tracked under it, so that stopping it also
	// forgets it (a hold re-entered many times does not pile up contexts),
	// and naming the hold, so that an Unlock made with it after the hold
	// ended finds that out instead of releasing by owner a newer hold the
	// same owner took since. No token: a RedLock hands out no Fence.
	lc := &lockCtx{Context: cctx, owner: owner, name: m.name, hold: h}
	h.track(lc, cancel)
	return lc, func(cause error) { h.untrackLC(lc); cancel(cause) }, true
}

// guardOverrun is how long past its wait's end an attempt on l may still be
// waiting for the failover guard (its timeout where the guard is on).
func guardOverrun(l Locker) time.Duration {
	var cfgs []*config
	switch l := l.(type) {
	case *Mutex:
		cfgs = append(cfgs, l.cfg)
	case *FairMutex:
		cfgs = append(cfgs, l.m.cfg)
	case *LeanMutex:
		cfgs = append(cfgs, l.cfg)
	case *RWMutex:
		cfgs = append(cfgs, l.cfg)
	case readLocker:
		cfgs = append(cfgs, l.rw.cfg)
	case *RedLock:
		for _, m := range l.nodes {
			cfgs = append(cfgs, m.cfg)
		}
	case *MultiLock:
		var d time.Duration
		for _, m := range l.locks {
			d = max(d, guardOverrun(m))
		}
		return d
	}
	var d time.Duration
	for _, cfg := range cfgs {
		if cfg.guard {
			d = max(d, cfg.guardTimeout)
		}
	}
	return d
}

// checkLease refuses an Extend the RedLock could never grant: its holds are
// the watchdog's, or lease leaves no validity after the drift allowance.
func (r *RedLock) checkLease(lease time.Duration) error {
	if r.lease == 0 {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, errWatchdogHold)
	}
	if lease < time.Millisecond {
		return invalidf("lease must be at least 1ms, got %s", lease)
	}
	if err := checkLease(lease); err != nil {
		// Every node's Extend would refuse it: refuse before the validity
		// is shortened for a lease no node will apply.
		return err
	}
	if drift := r.drift(lease); lease <= drift {
		// No quorum could leave any validity: refuse before shortening the
		// lock on every node.
		return invalidf("lease %s is within the clock drift allowance %s", lease, drift)
	}
	return nil
}

func (r *RedLock) extendCheck(_ context.Context, lease time.Duration) error {
	if err := r.checkLease(lease); err != nil {
		return opError("extend redlock", r.name, err)
	}
	return nil
}

// Extend gives the RedLock, taken with an explicit lease (WithLease), lease
// from now on every node that holds it (Mutex.Extend, each bounded by the
// node timeout), and moves its validity to lease − elapsed − drift from now
// when a majority of nodes confirmed in time. Otherwise the error errors.Is
// ErrQuorum (and ErrNotHeld when nodes no longer held it), and the validity
// only ever moves earlier: to the new lease where that is sooner, since some
// nodes may have applied it. A node whose hold had an Extend of unknown
// outcome (cut off by the node timeout, say), which may still run there
// after this one, counts with that Extend's lease where it is shorter. An
// Extend that another Extend of the RedLock overlapped (the two run on the
// nodes in either order) only moves the validity earlier. A RedLock lost (or unlocked) before the nodes'
// answers are counted is not extended, whatever they answered: the error is
// ErrNotHeld; one whose context ended only with the context it was locked
// with is still held, and is extended. lctx must be the context Lock
// returned (or one derived from it). Without an explicit lease the nodes' watchdogs renew the
// lock and Extend fails with ErrInvalidArgument.
func (r *RedLock) Extend(ctx, lctx context.Context, lease time.Duration) error {
	fail := func(err error) error { return opError("extend redlock", r.name, err) }
	if ctx == nil || lctx == nil {
		return fail(invalidf("nil context"))
	}
	if err := r.checkLease(lease); err != nil {
		return fail(err)
	}
	h, _ := lctx.Value(r.id).(*redHeld)
	if h == nil {
		return fail(fmt.Errorf("%w (pass the context Lock returned)", ErrNotHeld))
	}
	if h.state.Load() != endNone {
		// Lost or unlocked. Not lctx.Err(): a lock context that ended with
		// the context it was locked with is still held on its nodes.
		return fail(ErrNotHeld)
	}
	start := time.Now()
	drift := r.drift(lease)
	until := start.Add(lease - drift)
	h.mu.Lock()
	h.extends++
	h.extendSeq++
	seq, alone := h.extendSeq, h.extends == 1
	if monoNanos(until) < h.validUntil.Load() {
		// A shorter lease is in force on a node as soon as its script runs,
		// before the replies are back: the validity must not outlive it.
		// Read and moved under mu: another Extend moving it earlier between
		// the two would be undone.
		if r.shortenHook != nil {
			r.shortenHook()
		}
		h.validTill(until)
	}
	h.mu.Unlock()
	errs := make([]error, len(r.nodes))
	var caught firstPanic
	var wg sync.WaitGroup
	for i, m := range r.nodes {
		if h.ctxs[i] == nil {
			errs[i] = ErrNotHeld // not granted at acquisition
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			caught.run(func() { // goes on on the caller's goroutine
				nctx, cancel := context.WithTimeout(ctx, r.nodeTimeout)
				defer cancel()
				errs[i] = m.Extend(nctx, h.ctxs[i], lease)
			})
		}()
	}
	wg.Wait()
	if caught.set {
		// A node's Extend panicked (in its Redis client, say): every node's
		// Extend has run. The validity was only moved earlier, if at all.
		h.mu.Lock()
		h.extends--
		h.mu.Unlock()
		caught.goOn()
	}
	// Each node extended has lease from now, or, where an Extend of its
	// hold was of unknown outcome and may still run after this one, that
	// Extend's shorter lease (nodeLease): the validity is the lease a
	// majority of nodes has.
	leases := make([]time.Duration, 0, len(r.nodes))
	for i, err := range errs {
		if err == nil {
			leases = append(leases, nodeLease(h.ctxs[i], lease))
		}
	}
	extended := len(leases)
	valid := until
	if extended >= r.Quorum() {
		slices.Sort(leases)
		if l := leases[extended-r.Quorum()]; l < lease {
			valid = start.Add(l - r.drift(l))
		}
	}
	validity := time.Until(valid)
	ok := extended >= r.Quorum() && validity > 0 && ctx.Err() == nil
	h.mu.Lock()
	h.extends--
	// Another Extend in flight at any time during this one may have run
	// last on the nodes, with a shorter lease: the validity then only
	// moves earlier. Decided under mu with the validity set, so an Extend
	// sent after this one ended sets its own after it.
	solo := alone && h.extendSeq == seq
	st, lostBy := h.state.Load(), h.lostBy
	if st == endNone && (ok && (solo || monoNanos(valid) < h.validUntil.Load()) || monoNanos(until) < h.validUntil.Load()) {
		h.validTill(valid)
	}
	h.mu.Unlock()
	if ok && st != endNone {
		// Lost (or unlocked) while the nodes were called: whatever they
		// answered, the hold is over and its nodes are given back.
		if st == endLost {
			return fail(fmt.Errorf("%w (%v)", ErrNotHeld, lostBy))
		}
		return fail(fmt.Errorf("%w (unlocked)", ErrNotHeld))
	}
	if !ok {
		return fail(fmt.Errorf("%d of %d nodes extended, %d needed (validity %s): %w",
			extended, len(r.nodes), r.Quorum(), validity, errors.Join(ErrQuorum, nodeErrors(errs))))
	}
	return nil
}
