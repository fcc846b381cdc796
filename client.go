package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/rueidisopt"
)

// Client creates lock handles that share one identity, one watchdog, one
// pub/sub connection and one set of defaults. Create one per process (or per
// Redis deployment) and Close it on shutdown.
type Client struct {
	rc  rueidis.Client
	cfg config
	id  string
	// ownerPrefix and owners make the fresh owner ids of Lock calls that
	// name no owner: <ownerPrefix><owners in base 36>.
	ownerPrefix string
	owners      atomic.Uint64
	log         *slog.Logger
	// testReserved, when set (tests only, before use), runs in
	// reservedCall between the reservation and the call.
	testReserved func()
	// testGiveBack, when set (tests only, before use), runs in a
	// Semaphore's background give-back before it starts.
	testGiveBack func()

	// givingBack holds, per semaphore key, this Client's give-backs of
	// permits still running in the background (Semaphore.undoLater), each
	// by the channel closed at its end: a DrainPermits waits for those
	// started before it (givenBack).
	givingBackMu sync.Mutex
	givingBack   map[string]map[chan struct{}]struct{}

	// The hooks below are set by tests only, on their own Client, so that
	// tests using them run in parallel with the others.
	//
	// grantHook runs between an attempt the server granted and the grant's
	// registration. Atomic: a test's goroutine sets it while acquisitions
	// of the Client run.
	grantHook atomic.Pointer[func()]
	// leaseMarkHook runs once a call that sets a hold's lock expiry is
	// marked, before it is sent.
	leaseMarkHook atomic.Pointer[func()]
	// testHookForced runs in forced between taking the holds out of the
	// registry and ending them.
	testHookForced func()
	// testHookAttempt runs in waitOn before each attempt of a subscribed
	// waiter and after it (after), with the wait's context.
	testHookAttempt atomic.Pointer[func(ctx context.Context, after bool)]
	// testHookFallback runs in waitOn when a subscribed waiter's fallback
	// timer fires, before the wait reads what happened meanwhile.
	testHookFallback func(ctx context.Context)
	// testHookLeaveLate runs in the undo of an attempt of unknown outcome
	// once it found the owner no longer waiting, before it leaves the line.
	testHookLeaveLate func()
	// eagerLockCtx: lock contexts make their cancellable context at Lock,
	// not on first use (lockCtx.lazy). Set by tests only, before the first
	// Lock: the reference a lazily made lock context is compared with.
	eagerLockCtx bool
	// clockHook, when set, is what clock reads instead of time.Now.
	clockHook atomic.Pointer[func() time.Time]

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	subs *subscriptions
	wd   *watchdog
	// rep delivers, in order, the reports of the goroutines serving many
	// holds (the watchdog's rounds, the replica count): Close stops it.
	rep *reporter

	// mutexCtl: MutexAcquire's usual ctl values for the Client's settings,
	// formatted once rather than per call.
	mutexCtl *mutexCtl
	// fairCtl: FairAcquire's, likewise.
	fairCtl *fairCtl

	shardedOff atomic.Bool   // the server has no sharded pub/sub
	requests   atomic.Uint64 // numbers release requests (latch keys)
	// recordTTL is how long the record of a Semaphore or latch call lives
	// (recordTTL; shorter in tests).
	recordTTL time.Duration
	// guardStall: see guardStall (shorter in tests).
	guardStall   time.Duration
	releaseBound atomic.Pointer[sharedBound] // the deadline releases beginning now share
	lossTimers   sync.Pool                   // stopped *lossTimer, for the next holds
	leanPX       atomic.Pointer[msText]      // the last PX argument a LeanMutex sent (see pxText)
	shardedOnce  sync.Once
	// mixedChecked: unix ns of the last check for the other fair-queue
	// protocol's waiters, per slot of lock names (see noteMixedQueues).
	mixedChecked [mixedSlots]atomic.Int64

	mu        sync.Mutex
	holds     map[holdKey]*hold
	writeHold int           // RWMutex write holds in holds (guarded by mu): with none, a read release looks for none of its owner
	closing   bool          // Close has begun; guarded by mu
	closeDone chan struct{} // closed when Close has finished
	inflight  flight        // acquisitions in flight, which Close waits for
	// releases: observed releases in flight, whose ReleaseEnd Close waits
	// for (each is bounded by the release timeout).
	releases flight
	// acquiring counts the acquisitions in flight per hold whose owner came
	// from the caller's context (only those can share an owner), and
	// acquired is signalled when one of them registers or ends; see grant.
	// Guarded by mu.
	acquiring map[holdKey]int
	// excluding counts, per such hold, its acquisitions that wait for the
	// others and are not counted meanwhile (see inFlightLocked). Guarded by mu.
	excluding map[holdKey]int
	acquired  sync.Cond
	// undoWatch: per such hold, the changes of its hold count an undo
	// reading that count must not miss (see undoKeeping); watching counts
	// its entries, so an Unlock with none skips mu. Guarded by mu.
	undoWatch map[holdKey]*undoWatch
	watching  atomic.Int32
	// undoLatches: per hold, the latch of an undo's release whose outcome
	// is unknown (see undoKeeping), and when it was drawn. Guarded by mu.
	undoLatches map[holdKey]undoLatch
	// latchSweep: when (monoNanos) an acquisition's end next sweeps
	// undoLatches (sweepUndoLatches).
	latchSweep atomic.Int64
	// marking counts, per hold, the background undos reading the mark of
	// an ended hold that drew no token (LeanMutex.undoMark): acquisitions of
	// the owner wait for them. Guarded by mu.
	marking map[holdKey]int
	// waiting counts the waits in progress per such hold and line:
	// goroutines of one owner share its place in a waiter queue or set,
	// which the last of them to give up leaves. Guarded by mu.
	waiting map[lineKey]sharedWaits
	// extending bounds, per hold, the Extends in flight: one whose hold
	// ends before its script runs may run on the owner's next hold (the
	// same field), whose loss deadline grant then keeps within it; and the
	// re-entries sent beside an acquisition of their owner in flight (see
	// acquire), which may set their lease on the hold it is granted.
	// Guarded by mu.
	extending map[holdKey]extendsInFlight
	// unsent bounds, per hold, the owner's next holds by the Extends of
	// unknown outcome whose script names the owner, not the hold (see
	// unknownSent). Guarded by mu.
	unsent map[holdKey]unknownExtend
	// unsentOrder lists unsent's records as made, oldest first, for their
	// removal once run out (see pruneUnsentLocked). Guarded by mu.
	unsentOrder []unsentAt
	// unknownKeepFor, when set (by tests only), replaces unknownKeep.
	unknownKeepFor time.Duration
	// forcing marks, per lock key, this Client's ForceUnlocks in flight and
	// the last forceSeq drawn as one of them began or ended; a grant whose
	// attempt one may have deleted is given back (see forcedSince). Guarded
	// by mu; forceSeq and forceActive (ForceUnlocks in flight) are read
	// without it, so that grants on a Client that force-unlocks nothing
	// look no further.
	forcing     map[string]forceMark
	forcePruned uint64 // the latest seq of a forcing entry dropped; guarded by mu
	forceSeq    atomic.Uint64
	forceActive atomic.Int32
	forceKept   atomic.Int32 // len(forcing), stored under mu: the last acquisition out prunes it
	// timerRuns counts the loss timers' callbacks running, which may end a
	// hold and report it to the Observer: Close waits for them, and once it
	// has ended every hold (timersClosed) no new one runs. Guarded by mu.
	timerRuns    int
	timersClosed bool
	// closed when Close begins: waits end with ErrClosed.
	closingCtx context.Context
	closeWaits context.CancelFunc
	// cutCtx ends closeUndoMax after Close began (or once it has no
	// acquisition in flight to wait for): the attempts of waits still in
	// flight then are cut off (see waitOn).
	cutCtx      context.Context
	cutAttempts context.CancelFunc
	isClosing   atomic.Bool

	guard guardState
	// panicPaths counts the panics (a client wrapper's) of the Client's own
	// goroutines that repeat on their own (see panicPath).
	panicPaths struct{ eviction, replicas, subscription panicPath }

	// runIDs: the run_id (INFO server) of each node of the Client's
	// deployment that told it, by address ("" for a node that refused
	// INFO for good), and until when it is kept; see runIDs. Guarded by
	// runMu.
	runMu    sync.Mutex
	runIDsOf map[string]keptRunID
	// runAsk: when a node that did not tell its run_id is asked again, and
	// the pause after that (see runIDs). Guarded by runMu.
	runAsk map[string]runPause
	// runAsked: the INFO server in flight to each node, which the calls
	// that need its run_id wait for (see runIDs). Guarded by runMu.
	runAsked map[string]*runAsking
	// runKeep, when set (by tests only), replaces runIDKeep.
	runKeep time.Duration
}

// runPause is when a node that did not answer INFO is asked again (at), and
// the pause after that ask should it fail too (next).
type runPause struct {
	at   time.Time
	next time.Duration
}

// keptRunID is a node's run_id and until when it is kept; refused: the
// node refused INFO for good (id "").
type keptRunID struct {
	id      string
	refused error
	until   time.Time
}

// runIDKeep is how long a node's run_id is kept before it is asked again: a
// server restarted at that address has a new one, which a Client made since
// (under another address, say) reads, and a RedLock over both, comparing it
// with the old one, would take one server's grants for a majority.
const runIDKeep = 10 * time.Second

// runAskMin and runAskMax bound the pause before a node that did not tell
// its run_id is asked again: an acquisition waits for the answer (up to the
// node timeout), and a RedLock is made to do without a minority of nodes
// that do not answer, so it is not asked at every acquisition.
const (
	runAskMin = time.Second
	runAskMax = time.Minute
)

// New returns a Client using rc. The Client never closes rc. A nil rc, an
// invalid option (a WithKeyPrefix without a complete hash tag, a WithLease
// or WithWatchdog out of bounds, ...) and a rueidis Sentinel client made with
// ReplicaOnly, which sends every command to a replica, where no lock can be
// taken, and a rueidis client made with ConnLifetime, which sends again a
// call still unanswered when its connection reaches its lifetime, though
// Redis may have run it (a lock or permit taken or given back twice), are
// refused with ErrInvalidArgument. New sends nothing to Redis: a
// server that cannot be reached shows at the first call.
func New(rc rueidis.Client, opts ...Option) (*Client, error) {
	if rc == nil {
		return nil, fmt.Errorf("scriptlock: new client: %w", invalidf("nil rueidis client"))
	}
	// Read once: a rueidis client's mode never changes, and a wrapper's
	// Mode that panics must do so here, to New's caller, not on the
	// Client's own goroutines (the watchdog's rounds, subscriptions), which
	// ask it at every call.
	mode := rc.Mode()
	if replicaOnly(rc, mode) {
		return nil, fmt.Errorf("scriptlock: new client: %w", invalidf("the rueidis client sends every command to a replica (Sentinel with ReplicaOnly), which refuses every write with READONLY: no lock can be taken through it; use a client of the primary (SendToReplicas sends reads alone to replicas)"))
	}
	if rueidisopt.ReplaysWrittenCalls(rc) {
		return nil, fmt.Errorf("scriptlock: new client: %w", invalidf("%s, and a lock or permit taken or given back twice breaks the lock's guarantees; give scriptlock a rueidis client without ConnLifetime", rueidisopt.Why))
	}
	cfg := defaultConfig()
	cfg.apply(opts)
	if cfg.err != nil {
		return nil, fmt.Errorf("scriptlock: new client: %w", cfg.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// A handler's panic is dropped with its record (unpanickedHandler).
	log := slog.New(unpanickedHandler{cfg.logger.Handler()}).With("component", "scriptlock")
	rc = sharedDial{Client: rc, log: log, mode: mode}
	c := &Client{
		rc:  rc,
		cfg: cfg,
		id:  clientID(),
		// 64 random bits: no id an application picks by hand looks like it.
		ownerPrefix: randomID()[:16] + ".",
		log:         log,
		ctx:         ctx,
		cancel:      cancel,
		holds:       map[holdKey]*hold{},
		recordTTL:   recordTTL,
		guardStall:  guardStall,
	}
	c.acquired.L = &c.mu
	c.mutexCtl = newMutexCtl(cfg.fenceIdle, cfg.waiterTTL())
	c.fairCtl = newFairCtl(cfg.waiterTTL(), cfg.fenceIdle)
	c.closingCtx, c.closeWaits = context.WithCancel(context.Background())
	c.cutCtx, c.cutAttempts = context.WithCancel(context.Background())
	c.closeDone = make(chan struct{})
	c.inflight.drained = make(chan struct{})
	c.releases.drained = make(chan struct{})
	c.subs = newSubscriptions(ctx, rc, c.id, c.sharded, c.subscribePlainly)
	c.subs.panicked = c.callPanickedAt
	c.subs.panics = &c.panicPaths.subscription
	c.guard.evictionEvery = evictionRefresh
	c.wd = newWatchdog(rc, c.lostLater, c.renewed, c.renewalSent, c.renewalDone)
	c.wd.onUnknown = func(h *hold, sent time.Time) {
		c.unknownSent(h, holdID(h.key, h.field), h.lease, lossDeadline(sent, h.lease))
	}
	c.rep = newReporter(c.log)
	c.wd.obs, c.wd.log, c.wd.rep = cfg.observer, c.log, c.rep
	c.wd.replicas, c.wd.sendGuarded, c.wd.nodeOf = c.replicasNow, c.sendGuardedBatch, c.nodeOf
	c.wd.ownerID = c.ownerID
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.wd.run(ctx)
	}()
	return c, nil
}

// replicaOnly reports a rueidis Sentinel client made with ReplicaOnly: it
// sends every command to a replica, which answers every write with
// READONLY, and the Client, which retries READONLY as a failover it has not
// seen yet, would retry each Lock until its context ended. rueidis tells
// that only through the client's unexported field, read here; a client
// whose type or field is not as this rueidis version has it (a wrapper of
// the client, another version) is taken as it is.
func replicaOnly(rc rueidis.Client, mode rueidis.ClientMode) bool {
	if mode != rueidis.ClientModeSentinel {
		return false
	}
	v := reflect.ValueOf(rc)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	v = v.Elem()
	if v.Kind() != reflect.Struct || v.Type().PkgPath() != "github.com/redis/rueidis" || v.Type().Name() != "sentinelClient" {
		return false
	}
	f := v.FieldByName("replica")
	return f.IsValid() && f.Kind() == reflect.Bool && f.Bool()
}

// sharedDial is the rueidis client a Client calls Redis through. rueidis
// opens a connection once for every call waiting on it, with the context of
// the first: when that call's context is canceled (its caller gave up), the
// opening fails for all of them with that error ("dial tcp: ... operation
// was canceled"), though their own contexts live and Redis may be fine. Such a call never
// left this process (rueidis returns a call's context error only for its
// own context otherwise), so it is made again, on a new connection, while
// its own context lives: a TryLock without a wait would fail as if Redis
// were down (the lock middleware answering 503, or running the request
// without its lock when failing open), a renewal would count as failed. A
// few times at most: a dialer that cancels by itself must not hold a call.
type sharedDial struct {
	rueidis.Client
	log  *slog.Logger       // the Client's: a call's panic after its caller has left (cuttable)
	mode rueidis.ClientMode // read once in New ("": ask the client, a node's)
}

// Mode is the client's mode as New read it: a wrapper's Mode is not called
// again (see New).
func (s sharedDial) Mode() rueidis.ClientMode {
	if s.mode != "" {
		return s.mode
	}
	return s.Client.Mode()
}

// baseClient is the rueidis client rc wraps (a Client's sharedDial carries
// the Client's logger too, so two Clients' wrappers of one rueidis client
// differ).
func baseClient(rc rueidis.Client) rueidis.Client {
	if s, ok := rc.(sharedDial); ok {
		return s.Client
	}
	return rc
}

// sameClient reports whether a and b are one rueidis client under the
// Clients' wrappers (baseClient). A client of a type == cannot compare (a
// wrapper value with a func or slice field, say) panics there: it is taken
// as not the same, as one behind such a wrapper cannot be told apart.
func sameClient(a, b rueidis.Client) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return baseClient(a) == baseClient(b)
}

// cutCallKey marks the context of a call Close cuts off (a waiting call's
// attempt after its first, see waitOn): sharedDial returns such a call as
// soon as its context ends (cuttable).
type cutCallKey struct{}

// cuttable runs call on a goroutine of its own and returns its result, or
// fail(ctx.Err()) as soon as ctx ends while call still runs. rueidis sends a
// call synchronously on a connection with no other call in flight (every
// pooled connection of a client made with DisableAutoPipelining, and a
// pipelining one that never had two calls at once), watching its deadline
// but not its cancellation: an attempt Close cut off there on a server that
// stopped answering would hang until rueidis gives the connection up
// (ConnWriteTimeout, 10 s by default), and Close with it. The goroutine ends
// when rueidis returns the call, within that bound; what the call may do on
// the server is undone as for any attempt cut off.
// A panic of call (a client wrapper's, even a panic(nil) under
// GODEBUG=panicnil=1) goes on on the caller's goroutine, as an uncut call's
// does: on call's own it crashed the process; a runtime.Goexit of call ends
// the caller's goroutine. One after the
// caller has left is logged, as in what. The one mechanism for every call
// run on a goroutine of its own that its caller may stop waiting for (also
// callBounded, sendBounded).
func cuttable[T any](ctx context.Context, log *slog.Logger, what string, call func() T, fail func(error) T) T {
	type outcome struct {
		r        T
		caught   any // call's panic
		panicked bool
		exited   bool // call ended its goroutine (runtime.Goexit)
	}
	done := make(chan outcome, 1)
	var mu sync.Mutex
	left := false // the caller has returned without call's outcome
	go func() {
		var o outcome
		var stack string
		returned := false
		defer func() {
			// Neither returned nor recovered below: call ended its
			// goroutine, and this runs as it unwinds.
			o.exited = !returned && !o.panicked
			mu.Lock()
			gone := left
			if !gone && o.panicked {
				// Kept for the panic carried to the caller alone (whose
				// goroutine does not name the wrapper): one logged here
				// would have a panic carried later logged with its stack.
				keepPanicStackAt(ctx, o.caught, stack)
			}
			done <- o
			mu.Unlock()
			if gone && o.panicked && log != nil {
				log.Error("panic recovered", "in", what, "panic", o.caught, "stack", stack)
			}
		}()
		func() {
			defer func() {
				if !returned {
					// A panic, or Goexit (goOnAfter): the value is not
					// the test.
					o.caught, stack = recover(), string(debug.Stack())
				}
			}()
			o.r = call()
			returned = true
		}()
		// Only a return or a recovered panic comes this far.
		o.panicked = !returned
	}()
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		mu.Lock()
		select {
		case o = <-done: // both at once: the call's own outcome
		default:
			left = true
		}
		mu.Unlock()
		if left {
			return fail(ctx.Err())
		}
	}
	if o.panicked {
		panic(o.caught)
	}
	if o.exited {
		// No outcome: its zero value would pass for one. The caller's
		// goroutine ends as it would with call made on it.
		runtime.Goexit()
	}
	return o.r
}

// cutAttempt is what a panic logged by cuttable in sharedDial was in.
const cutAttempt = "a waiting call's attempt let go as Close cut it off"

// sharedDialAgain bounds how many times one call is made again.
const sharedDialAgain = 8

// canceledByOther reports a call's error that is another call's context
// ending: context.Canceled, no reply from Redis, while ctx lives.
func canceledByOther(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || !errors.Is(err, context.Canceled) {
		return false
	}
	_, replied := rueidis.IsRedisErr(err)
	return !replied
}

// keptWhole is cmd, pinned when rueidis may send it again after a broken
// connection (a retryable command: a read, a script declared retryable, a
// SUBSCRIBE). rueidis fails the calls of a connection that broke while its
// writer may still be copying one of them out, makes a retryable one again
// on a new connection and, answered there, hands the command's memory back
// to its pool, where the next command built reuses it under the old writer's
// reads (a data race, seen as a background undo's read, then an acquisition's
// EVALSHA, when connections dropped during a wait). A pinned command is never
// handed back; the others are handed back only once answered on the one
// connection they were sent on, after its writer was done with them.
// Pinned are the calls that go through that writer because the Client queues
// them there (queuedCallKey: a background undo, a count) and those of a wait
// after its first attempt (cutCallKey), at one allocation or two each; an
// uncontended Lock and Unlock keeps its pooled commands.
func keptWhole(cmd rueidis.Completed) rueidis.Completed {
	if cmd.IsRetryable() {
		return cmd.Pin()
	}
	return cmd
}

// queuedCallKey marks the context of a call the Client has rueidis queue
// (withoutDeadline, cancelAfter): its retryable commands are pinned
// (keptWhole).
type queuedCallKey struct{}

// keptWhenQueued is cmd pinned (keptWhole) when ctx is a queued call's.
func keptWhenQueued(ctx context.Context, cmd rueidis.Completed) rueidis.Completed {
	if cmd.IsRetryable() && ctx.Value(queuedCallKey{}) != nil {
		return cmd.Pin()
	}
	return cmd
}

func (s sharedDial) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if ctx.Value(cutCallKey{}) != nil {
		cmd = keptWhole(cmd)
		return cuttable(ctx, s.log, cutAttempt, func() rueidis.RedisResult { return s.do(ctx, cmd) }, rueidis.NewErrorResult)
	}
	return s.do(ctx, keptWhenQueued(ctx, cmd))
}

func (s sharedDial) do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	r := s.Client.Do(ctx, cmd)
	// rueidis keeps a command that failed without a reply (it may be sent
	// again), so cmd can be made again.
	for i := 0; i < sharedDialAgain && canceledByOther(ctx, r.NonRedisError()); i++ {
		r = s.Client.Do(ctx, cmd)
	}
	return r
}

// Receive subscribes with subscribe kept whole (keptWhole): rueidis makes
// a SUBSCRIBE again after its connection broke, as a retryable call.
func (s sharedDial) Receive(ctx context.Context, subscribe rueidis.Completed, fn func(rueidis.PubSubMessage)) error {
	return s.Client.Receive(ctx, keptWhole(subscribe), fn)
}

// Nodes returns the nodes' clients made again the same way: a node's calls
// (the failover guard's replica count, INFO) wait for the connections the
// Client's other calls open, which are the same ones (on one server, the
// node is the client itself). A count failed so counted no replica, and an
// acquisition on a server without any waited for one and failed.
func (s sharedDial) Nodes() map[string]rueidis.Client {
	nodes := s.Client.Nodes()
	out := make(map[string]rueidis.Client, len(nodes))
	for addr, n := range nodes {
		out[addr] = sharedDial{Client: n, log: s.log}
	}
	return out
}

func (s sharedDial) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if ctx.Value(cutCallKey{}) != nil {
		for i := range multi {
			multi[i] = keptWhole(multi[i])
		}
		return cuttable(ctx, s.log, cutAttempt, func() []rueidis.RedisResult { return s.doMulti(ctx, multi) }, func(err error) []rueidis.RedisResult {
			rs := make([]rueidis.RedisResult, len(multi))
			for i := range rs {
				rs[i] = rueidis.NewErrorResult(err)
			}
			return rs
		})
	}
	for i := range multi {
		multi[i] = keptWhenQueued(ctx, multi[i])
	}
	return s.doMulti(ctx, multi)
}

func (s sharedDial) doMulti(ctx context.Context, multi []rueidis.Completed) []rueidis.RedisResult {
	rs := s.Client.DoMulti(ctx, multi...)
	for range sharedDialAgain {
		var again []int
		for i, r := range rs {
			if canceledByOther(ctx, r.NonRedisError()) {
				again = append(again, i)
			}
		}
		if len(again) == 0 {
			break
		}
		// The calls of one connection fail together: those on others
		// (another Cluster node) keep their replies.
		cmds := make([]rueidis.Completed, len(again))
		for k, i := range again {
			cmds[k] = multi[i]
		}
		for k, r := range s.Client.DoMulti(ctx, cmds...) {
			rs[again[k]] = r
		}
	}
	return rs
}

// handleConfig applies a handle's options over the Client's settings and
// derives the handle's key. The error names the handle.
func (c *Client) handleConfig(k kind, name string, opts []LockOption) (*config, string, error) {
	return c.handleConfigNames(k, name, opts, nil)
}

// handleConfigNames is handleConfig that also names the keys derived from
// the lock's key, as lockNames does, in the key's allocation (prefixes
// empty: none).
func (c *Client) handleConfigNames(k kind, name string, opts []LockOption, out []string, prefixes ...string) (*config, string, error) {
	cfg, err := c.handleOptions(k, opts)
	var key string
	if err == nil {
		if len(prefixes) > 0 {
			key, err = lockNames(out, cfg.prefix, name, prefixes...)
		} else {
			key, err = lockKey(cfg.prefix, name)
		}
	}
	if err != nil {
		return cfg, "", handleError(k, name, err)
	}
	return cfg, key, nil
}

// handleOptions is a handle's settings: the Client's, or a copy with opts
// applied (and their error).
func (c *Client) handleOptions(k kind, opts []LockOption) (*config, error) {
	// A handle without options shares the Client's settings, which never
	// change after New: handles are often made per request, and a copy
	// would be most of one's size.
	if len(opts) == 0 {
		return &c.cfg, nil
	}
	cfg := withLockOptions(c.cfg, k, opts)
	return cfg, cfg.err
}

// handleError is the error of a handle refused for its name or options.
func handleError(k kind, name string, err error) error {
	return fmt.Errorf("scriptlock: %s %q: %w", k, name, err)
}

// withLockOptions applies a handle's options to a copy of cfg.
func withLockOptions(cfg config, k kind, opts []LockOption) *config {
	cfg.err = nil
	cfg.applyLock(k, opts)
	return &cfg
}

// ID is the Client's identity, a random version-8 UUID (122 random bits),
// the first half of every lock field it writes (<client-id>:<owner-id>).
func (c *Client) ID() string { return c.id }

// Close ends the Client. New acquisitions fail with ErrClosed and waits under
// way end with it; Close waits for acquisition calls in flight (each bounded
// by its caller's deadline) and gives back any grant that arrives after it
// began. With an Observer, it also waits for the releases it reports that
// are in flight (each bounded by the release timeout), and for an Unlock
// begun after it began that ends a hold before Close does (its HoldEnd is
// reported), and nothing is reported once it returns: calls begun after
// Close began are not reported.
// It then stops the watchdog and every subscription, cancels the contexts
// of the locks still held with cause ErrClosed, and delivers what the
// watchdog left to log and report before it reports their ends (a logger or
// Observer that never returns keeps Close from returning, not the holds
// from ending). It does not release
// those locks: their leases run out on the server, unless the holder's
// Unlock, which still works after Close, releases them. An acquisition of unknown
// outcome (its reply lost), in flight or with its undo still failing, gets an
// attempt to undo it, bounded by the release timeout and by a second, which
// Close waits for; an undo that needs longer (a slow link, a connection to
// reopen first) is let go, and what it was to give back is left to its
// lease (a Semaphore's permits, which have none, are logged as maybe lost).
// Close leaves rc open, and what a caller holds can still
// be given back after it: Semaphore.Release, PermitSemaphore.Release and
// CountDownLatch.CountDown work as before (the other calls of those handles
// fail with ErrClosed).
// Close is safe to call more than once, and from several goroutines: each
// call returns once the Client is closed (one called from an Observer
// callback excepted, below).
//
// Close may also be called from an Observer callback (a service that shuts
// down when a hold is lost, say). Such a callback is itself part of what
// Close waits for (a loss timer, the watchdog, an acquisition or release in
// flight, or Close ending the holds), so a Close called from one does not
// wait: the Client is closing when it returns (new acquisitions fail with
// ErrClosed), and the rest of the close (ending the holds, reporting their
// ends, stopping the watchdog) completes once the callback has returned,
// on a goroutine of the Client's. Callbacks may run meanwhile; a Close
// called elsewhere, before or after, waits for all of it, and nothing is
// reported once that Close has returned.
func (c *Client) Close() error {
	inside := calledBack()
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		if !inside {
			<-c.closeDone // another Close is under way: return once it is done
		}
		return nil
	}
	c.closing = true
	c.isClosing.Store(true)
	busy := c.inflight.close() // under mu, as closing: no acquisition enters after
	releasing := c.releases.close()
	c.acquired.Broadcast()
	c.mu.Unlock()
	c.closeWaits()
	if inside {
		// Waiting here would wait for this goroutine. The Client owns the
		// rest: every other Close waits for it (closeDone).
		go c.closeRest(busy, releasing)
		return nil
	}
	c.closeRest(busy, releasing)
	return nil
}

// closeRest is Close once the Client is closing: it waits for what is in
// flight, stops the Client's goroutines and ends every hold; busy and
// releasing say whether acquisitions and observed releases were in flight.
func (c *Client) closeRest(busy, releasing bool) {
	defer close(c.closeDone)
	if busy {
		// The attempts of waits still in flight a second from now are cut
		// off (see waitOn): the server has stopped answering them.
		cut := time.AfterFunc(closeUndoMax, c.cutAttempts)
		<-c.inflight.drained
		cut.Stop()
	}
	c.cutAttempts()
	if releasing {
		<-c.releases.drained
	}
	c.cancel()
	c.wg.Wait()
	c.subs.close()
	c.mu.Lock()
	holds := make([]*hold, 0, len(c.holds))
	for _, h := range c.holds {
		c.forgetLocked(h)
		holds = append(holds, h)
	}
	c.mu.Unlock()
	// Every hold ends before the Observer hears of any: a slow HoldEnd must
	// not leave the others' contexts live, their leases no longer renewed.
	obs := make([]*holdObs, 0, len(holds))
	for _, h := range holds {
		if o := c.endUnreported(h, ErrClosed); o != nil {
			obs = append(obs, o)
		}
	}
	// What the watchdog's rounds and the Client's goroutines left to report
	// is delivered before the ends of these holds, once they have ended: a
	// logger or Observer that blocks must not leave them live, renewed no
	// more since the watchdog stopped.
	c.rep.close()
	for _, o := range obs {
		o.ended(ErrClosed)
	}
	// A loss timer that fired meanwhile may be ending a hold of its own,
	// which Close no longer finds, and report it: no Observer callback runs
	// after Close returns.
	c.mu.Lock()
	c.timersClosed = true
	for c.timerRuns > 0 {
		c.acquired.Wait()
	}
	c.mu.Unlock()
}

// ownDir is the directory of the package's source files as the binary names
// them (runtime file names use '/', with or without -trimpath).
var ownDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return path.Dir(file)
}()

// calledBack reports whether Close (its caller) runs inside the package's
// own code: in something the engine called out to (an Observer callback, or
// the logger), on one of its goroutines or on a caller's in an acquisition
// or release, all of which Close waits for. Go has no goroutine identity to
// ask; the stack is it, and Close reads it once per call. It does not say
// whose callback it is: a Close of one Client from another's callback does
// not wait either.
//
// A Close in a function deferred while a panic unwinds (a caller that
// recovers a panic of its Lock, say) has the panicking frames below it,
// though the ones between the panic and the function that deferred the call
// have run their own deferred calls (the engine's ending of the call among
// them): those are not what Close runs inside, and are passed over when that
// function can be told from the deferred call's name (a closure or a
// deferred call's wrapper of it).
func calledBack() bool {
	return calledBackFrom(func(fn string) bool {
		return strings.HasSuffix(fn, ".(*Client).Close") || strings.HasSuffix(fn, ".(*Client).Close-fm")
	})
}

// calledBackFrom is calledBack for the call whose frames isEntry reports
// (a method value's wrapper, name-fm, among them).
func calledBackFrom(isEntry func(fn string) bool) bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(1, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
	var fs []runtime.Frame
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		fs = append(fs, f)
		if !more {
			break
		}
	}
	below := false // past Close's own frame
	for i := 0; i < len(fs); i++ {
		f := fs[i]
		// Close itself, and the wrapper of a method value c.Close, are
		// not what called it. (A Close that runs Close, through a
		// callback, has the rest of the engine between them.)
		isClose := isEntry(f.Function)
		switch {
		case !below:
			below = isClose
		case f.Function == "runtime.gopanic" || f.Function == "runtime.Goexit":
			if j := deferredBy(fs, i); j > i {
				i = j - 1 // the frames in between have returned in effect
			}
		case !isClose && path.Dir(f.File) == ownDir && !strings.HasSuffix(f.File, "_test.go"):
			return true
		}
	}
	return false
}

// deferredBy returns the index in fs of the frame that deferred the call
// fs[i] (runtime.gopanic or runtime.Goexit) is running, fs[i-1], or -1 when
// it cannot be told: the call is a closure (F.func1, F.func1.2) or a deferred
// call's wrapper (F.deferwrap1) of a function F found below fs[i].
func deferredBy(fs []runtime.Frame, i int) int {
	if i == 0 {
		return -1
	}
	name := fs[i-1].Function
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return -1
	}
	last := strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(name[dot+1:], "func"), "deferwrap"), "0123456789")
	if last != "" || name[dot+1:] == "func" || name[dot+1:] == "deferwrap" {
		return -1
	}
	parent := name[:dot]
	for j := i + 1; j < len(fs); j++ {
		if fs[j].Function == parent {
			return j
		}
	}
	return -1
}

// timerStart counts in a loss timer's callback, or another call that ends
// holds outside what Close otherwise waits for (ForceUnlock, Extend); false
// once Close has ended every hold (the call then has nothing to end).
func (c *Client) timerStart() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timersClosed {
		return false
	}
	c.timerRuns++
	return true
}

// timerDone counts out what timerStart counted in.
func (c *Client) timerDone() {
	c.mu.Lock()
	c.timerRuns--
	if c.timerRuns == 0 && c.timersClosed {
		c.acquired.Broadcast()
	}
	c.mu.Unlock()
}

func (c *Client) closed() bool { return c.isClosing.Load() }

// flight counts the acquisitions in flight, which Close waits for, without a
// lock on every acquisition's path: the top bit marks a closing Client.
type flight struct {
	n       atomic.Int64
	drained chan struct{} // closed by the last acquisition out once closing
}

const flightClosing = int64(1) << 62

// enter counts an acquisition in; false once closing.
func (f *flight) enter() bool {
	for {
		v := f.n.Load()
		if v&flightClosing != 0 {
			return false
		}
		if f.n.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

// done counts an acquisition out, and returns the count left (with
// flightClosing once closing).
func (f *flight) done() int64 {
	n := f.n.Add(-1)
	if n == flightClosing {
		close(f.drained)
	}
	return n
}

// close refuses new acquisitions and reports whether some are in flight
// (Close then waits for drained). Called once.
func (f *flight) close() bool {
	return f.n.Or(flightClosing) != 0
}

// sharded reports whether lock channels use sharded pub/sub.
func (c *Client) sharded() bool {
	switch c.cfg.sharded {
	case shardedOn:
		return true
	case shardedOff:
		return false
	}
	if c.rc.Mode() != rueidis.ClientModeCluster || c.shardedOff.Load() {
		return false
	}
	c.shardedOnce.Do(func() {
		// Sharded pub/sub arrived in Redis 7.0; ask once rather than let a
		// release script fail halfway on an unknown SPUBLISH.
		if !c.askSharded() {
			c.shardedOff.Store(true)
		}
	})
	return !c.shardedOff.Load()
}

// askingSharded is what a panic logged while the nodes are asked whether
// they have sharded pub/sub was in.
const askingSharded = "asking whether the nodes have sharded pub/sub"

// askSharded asks every node of the Cluster at once whether it has SPUBLISH
// and returns the first answer, within 2 seconds (true when none answers):
// one node asked alone, picked at random, could be a frozen one, and every
// caller that needs the answer (the first release, the first wait) would
// wait the 2 seconds for it, past its own deadline, whatever node its lock
// is on. The asks run on goroutines of the Client's own, each bounded by
// the 2 seconds and not cut short at the first answer: rueidis dials a
// node's connection once for every call that needs it, under the context of
// the call that asked first, and cancelling that context fails the others'
// calls (a Lock's among them) with it.
func (c *Client) askSharded() bool {
	const bound = 2 * time.Second
	nodes := c.nodesOf(askingSharded)
	type answer struct {
		has bool
		err error
	}
	answers := make(chan answer, len(nodes))
	for _, n := range nodes {
		if !c.background(func() {
			// A panic of the call (a client wrapper's) has no caller to
			// reach: logged, as a node that did not answer. So is a Goexit
			// (catchOwn), which left the ask waiting out its bound.
			var a answer
			if v, stack, panicked, exited := catchOwn(func() {
				ctx, cancel := context.WithTimeout(c.ctx, bound)
				defer cancel()
				info, err := n.Do(ctx, n.B().CommandInfo().CommandName("spublish").Build()).ToArray()
				a = answer{has: err == nil && len(info) > 0 && !info[0].IsNil(), err: err}
			}); panicked || exited {
				a = answer{err: c.callFailedAt(askingSharded, v, stack, exited)}
			}
			answers <- a
		}) {
			answers <- answer{err: ErrClosed}
		}
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	for range nodes {
		select {
		case a := <-answers:
			if a.err == nil {
				return a.has
			}
		case <-t.C:
			return true
		}
	}
	return true
}

// publishPlainly reports whether err is the server's refusal of sharded
// publishing (a script's SPUBLISH; used is the publish command the call was
// given) and the Client, having chosen sharded pub/sub itself, publishes
// plainly from now on: the call is to be made again. Every call refused so
// is, also those sent before the first refusal came back and switched the
// Client. A Client forced onto it (WithShardedPubSub(true)) keeps it, so the
// call fails rather than repeat the same refusal.
func (c *Client) publishPlainly(err error, used string) bool {
	if used != "spublish" || !isUnknownCommand(err) || c.cfg.sharded == shardedOn {
		return false
	}
	c.shardedOff.Store(true)
	return true
}

// publishing runs call, a script that publishes after writes a repeat finds
// done (expired permits reclaimed, dead queue heads evicted), with the
// Client's publish command, and once more with PUBLISH when the server
// refused its SPUBLISH and the Client switched (publishPlainly). The repeat
// finds the writes done and, unless call tells it to (the rewake of
// FairMutex's and PermitSemaphore's acquisitions), publishes nothing:
// whoever the first attempt was to tell learns of it at its next call.
func publishing[T any](c *Client, call func(publish string) (T, error)) (T, error) {
	publish := c.publishCommand()
	v, err := call(publish)
	if err != nil && c.publishPlainly(err, publish) {
		v, err = call(c.publishCommand())
	}
	return v, err
}

// publishingAgain is publishing for a call whose repeat does not find by
// itself that its first attempt was to publish (an Extend to a shorter
// lease finds the expiry it set, as a later one would; a reclaim of permits
// whose lease ended finds none left): again tells the repeat, whose first
// attempt failed at its publish, to publish.
func publishingAgain[T any](c *Client, call func(publish string, again bool) (T, error)) (T, error) {
	again := false
	return publishing(c, func(publish string) (T, error) {
		v, err := call(publish, again)
		again = true
		return v, err
	})
}

// subscribePlainly is called when the server refused a sharded subscribe:
// the Client, having chosen sharded pub/sub itself, uses plain pub/sub from
// now on and the subscribe is made again. A Client forced onto it keeps it,
// and the wait fails with the refusal rather than subscribe again at once
// until its context ends.
func (c *Client) subscribePlainly() bool {
	if c.cfg.sharded == shardedOn {
		return false
	}
	c.shardedOff.Store(true)
	return true
}

func (c *Client) publishCommand() string {
	if c.sharded() {
		return "spublish"
	}
	return "publish"
}

// guardState caches how many replicas the primary has, for the failover guard.
// Every acquisition reads it: atomics, not a lock all of them share.
type guardState struct {
	// waitRefused: the error reply of the guard's last WAIT that the server
	// refused (an ACL user without WAIT), which the error of a write it
	// could not vouch for names (guardFailed); nil once one answered.
	waitRefused atomic.Pointer[error]

	checked  atomic.Int64 // when the count was taken (countClock); 0: never
	replicas atomic.Int64
	// shards: on a Cluster, each primary's count by the slots it serves, so
	// that a shard without replicas turns the guard off for its own locks
	// only; nil until counted (replicas, every primary's minimum, decides).
	shards atomic.Pointer[[]slotReplicas]
	// owners: on a Cluster, the slot map last read (sorted by slot), which
	// tells the watchdog which node a hold's renewals wait on (nodeOf).
	owners atomic.Pointer[[]slotOwner]
	// moves counts the slots movedSlot gave another count: a count that
	// read the slot map before one of them is not stored over it.
	moves atomic.Int64
	// countSeq numbers the counts as they start; storedSeq (under
	// storeMu) is the number of the count stored last. A count that
	// started before it is not stored: with a primary frozen, a count
	// waits for it until its deadline while later counts end sooner, and
	// it would put back what they found changed (a replica gone).
	countSeq  atomic.Int64
	storeMu   sync.Mutex
	storedSeq int64
	// primaries: on a Cluster, each counted primary's count by address,
	// for a write redirected to one of them (redirect).
	primaries atomic.Pointer[map[string]int]
	// ids: on a Cluster, the address of each primary of the slot map last
	// read by node ID, for a write that reached another primary than the
	// one its count was of (rerouted).
	ids        atomic.Pointer[map[string]string]
	refreshing atomic.Bool
	// replicated: a count found a primary with replicas. A primary then
	// counted without any is one a failover or a lost link has just left
	// so (refreshReplicas), not a server run without replicas.
	replicated atomic.Bool
	// evictionWarned holds the eviction policies the log was warned of
	// (see warnEviction), under evictionMu: every policy the primaries
	// have, not the last only, which primaries of different policies
	// took turns to replace, warned of again at every count.
	evictionMu     sync.Mutex
	evictionWarned map[string]bool
	// evictionStarted: checkEviction, which looks at the policy for
	// acquisitions without the guard, has started; evictionChecks counts
	// its looks.
	evictionStarted atomic.Bool
	evictionChecks  atomic.Int64
	// evictionEvery is how often the look is made again (evictionRefresh;
	// shorter in tests).
	evictionEvery time.Duration
	// uncountedWarned: the log was warned that a node refused the count's
	// INFO (warnUncounted).
	uncountedWarned atomic.Bool
}

// guardRefresh: a replica count older than this is taken again in the
// background; guardIdle: one older than this (no acquisition has asked since
// it was guardRefresh old) is taken again before the acquisition is sent;
// guardRecheck: one older than this is taken again in the background after
// a WAIT that fell short (recountSoon), and at every call whose WAIT asks
// for the count itself (countAge).
const (
	guardRefresh = 5 * time.Second
	guardIdle    = 2 * guardRefresh
	guardRecheck = time.Second
)

// countClock reads the time the replica count's age is measured on: the
// monotonic clock (monoNanos), never 0. On the wall clock, a step back made
// the count seem taken in the future, and it was not taken again (a replica
// gone failing every guarded write, one attached leaving them unguarded)
// until the wall clock caught up.
func (c *Client) countClock() int64 { return max(c.monoClock(), 1) }

// slotReplicas is the replica count of the primary serving slots start..end.
type slotReplicas struct {
	start, end uint16
	replicas   int32
}

// replicas returns the cached count of online replicas of the primary
// serving key (on a Cluster, the primary of key's slot; every primary's
// minimum when the slot map could not be read), refreshing it in the
// background when stale. The very
// first call waits for the answer so the first lock is already guarded, and
// so does a call that finds the count older than guardIdle: no acquisition
// has refreshed it for that long, and a failover or a replica attached or
// gone since must not decide this one (fail it with ErrNotReplicated, or
// send it without WAIT). want is the call's WithGuardReplicas, which sets how
// old the count may grow before it is taken again (countAge).
// A count that cannot be taken (no primary answers) is not a count of zero:
// a refresh keeps the last count, and a first call guards the acquisition
// and asks again next time, so a primary that stalls during a failover does
// not turn the guard off.
func (c *Client) replicas(ctx context.Context, key string, want int) int {
	n, _ := c.replicasFor(ctx, key, want)
	return n
}

// replicasFor is replicas that also reports the node ID of the primary the
// count returned is of, on a Cluster whose slot map was read with IDs (""
// otherwise): the connection may send the write elsewhere (rerouted).
func (c *Client) replicasFor(ctx context.Context, key string, want int) (n int, owner string) {
	g := &c.guard
	checked := g.checked.Load()
	now := c.countClock()
	if checked == 0 || now-checked > int64(guardIdle) {
		return c.countFor(ctx, key, checked)
	}
	// The slot map before the count: one stored between the two loads
	// names the primary the count is of, or one the count was given to
	// since (movedSlot), never an older one.
	owner = c.ownerID(key)
	return c.refreshReplicas(checked, now, key, want), owner
}

// unackedWaitError reports whether the wait goes on, and the error of an
// acquisition on key whose grant the guard gave back for want of
// acknowledgements (undone: given back at once). A waiting call (wait != 0)
// whose grant was given back takes the replica count of key's primary again,
// now (within ctx): when it asks for fewer acknowledgements than guard's WAIT did, the
// count guard came from was taken before a failover or a replica's leaving,
// and the wait goes on with the new count (a settledError) instead of ending
// at the first release after the failover. A count that cannot be taken
// keeps the last one, which asks for as many.
func (c *Client) unackedWaitError(ctx context.Context, cfg *config, key string, guard guardWait, wait time.Duration, undone bool) (again bool, err error) {
	err = c.notReplicated(guard)
	if !undone || wait == 0 {
		return false, err
	}
	if n, _ := c.countFor(ctx, key, c.guard.checked.Load()); cfg.guardWait(n).acks >= guard.needed() {
		return false, err
	}
	return true, settledError{err}
}

// countFor takes the count for replicas, which was taken at checked (0:
// never), and returns key's: as soon as the primary serving key has
// answered, on a Cluster whose slot map was read, while the count of the
// others goes on in the background (a frozen primary would otherwise cost
// an acquisition on every other primary its whole context). The count runs
// under the Client's context and the caller's deadline, or guardRefresh
// without one: a deadline is what ends a command rueidis sends on an idle
// connection (askInfo).
func (c *Client) countFor(ctx context.Context, key string, checked int64) (int, string) {
	var cctx context.Context
	var cancel context.CancelFunc
	if d, ok := ctx.Deadline(); ok {
		cctx, cancel = context.WithDeadline(c.ctx, d)
	} else {
		cctx, cancel = context.WithTimeout(c.ctx, guardRefresh)
	}
	own := make(chan slotCount, 1)
	done := make(chan bool, 1)
	if !c.background(func() {
		defer cancel()
		moves := c.guard.moves.Load()
		seq := c.guard.countSeq.Add(1)
		n, shards, primaries, owners, ok := c.countReplicasFor(cctx, key, own)
		// Not over a slot moved meanwhile (the next acquisition counts
		// again): the caller may have returned long before, and a MOVED
		// since then have corrected the slot map this count read.
		if ok && c.guard.moves.Load() == moves && c.storeCountFrom(seq, n, shards, primaries, owners) {
			c.guard.checked.Store(c.countClock())
		}
		done <- ok
	}) {
		cancel()
		done <- false // closing: the acquisition fails with ErrClosed
	}
	stored := func() (int, string) {
		owner := c.ownerID(key)
		return c.replicasOf(key), owner
	}
	uncounted := func() (int, string) {
		if checked == 0 {
			return 1, ""
		}
		return stored()
	}
	select {
	case k := <-own:
		return k.n, k.id
	case ok := <-done:
		if !ok {
			return uncounted()
		}
		return stored()
	case <-ctx.Done():
		return uncounted()
	}
}

// slotCount is the count of the primary serving a key's slot, and its node
// ID ("" when the slot map named none).
type slotCount struct {
	n  int
	id string
}

// replicasNow is replicas for the watchdog, which waits for no count: a
// stalled node would keep every renewal of the round from being sent while
// INFO waited on it. A stale count is taken again in the background; before
// any count was taken (the acquisitions' failed), renewals are guarded.
func (c *Client) replicasNow(key string, want int) int {
	checked := c.guard.checked.Load()
	if checked == 0 {
		return 1
	}
	return c.refreshReplicas(checked, c.countClock(), key, want)
}

// storeCount keeps a count: a slot map that could not be read keeps the
// last one.
func (c *Client) storeCount(n int, shards []slotReplicas, primaries map[string]int) {
	c.guard.replicas.Store(int64(n))
	if shards != nil {
		c.guard.shards.Store(&shards)
		c.guard.primaries.Store(&primaries)
	}
}

// storeCountFrom is storeCount for the count numbered seq (countSeq), unless
// a count that started after it was stored already; it reports whether it
// stored.
func (c *Client) storeCountFrom(seq int64, n int, shards []slotReplicas, primaries map[string]int, owners []slotOwner) bool {
	g := &c.guard
	g.storeMu.Lock()
	defer g.storeMu.Unlock()
	if seq < g.storedSeq {
		return false
	}
	g.storedSeq = seq
	c.storeCount(n, shards, primaries)
	if owners != nil {
		// The slot map the count read goes with it, never over a newer
		// count's (nodeOf).
		ids := make(map[string]string, len(owners))
		for _, o := range owners {
			if o.id != "" {
				ids[o.id] = o.addr
			}
		}
		g.ids.Store(&ids)
		g.owners.Store(&owners)
	}
	return true
}

// replicasAt is the count of the primary at addr on a Cluster; ok is false
// when it was not counted.
func (c *Client) replicasAt(addr string) (n int, ok bool) {
	if m := c.guard.primaries.Load(); m != nil {
		n, ok = (*m)[addr]
	}
	return n, ok
}

// movedSlot gives slot the count n of the primary a MOVED named: the slot
// map the count was taken with gave it to another primary, and the next
// count may be seconds away. A write there must wait for its new
// primary's replicas, not for the old one's number.
func (c *Client) movedSlot(slot uint16, n int) {
	g := &c.guard
	for {
		old := g.shards.Load()
		if old == nil {
			return
		}
		next, changed := withSlotCount(*old, slot, int32(n))
		if !changed {
			return
		}
		if g.shards.CompareAndSwap(old, &next) {
			g.moves.Add(1)
			return
		}
	}
}

// withSlotCount returns a copy of rs (sorted, disjoint ranges) with slot
// given count n, splitting its range; changed is false (rs returned) when
// no range holds slot or its count is n already.
func withSlotCount(rs []slotReplicas, slot uint16, n int32) (out []slotReplicas, changed bool) {
	i, found := slices.BinarySearchFunc(rs, slot, func(r slotReplicas, s uint16) int {
		switch {
		case r.end < s:
			return -1
		case r.start > s:
			return 1
		}
		return 0
	})
	if !found || rs[i].replicas == n {
		return rs, false
	}
	r := rs[i]
	out = make([]slotReplicas, 0, len(rs)+2)
	out = append(out, rs[:i]...)
	if r.start < slot {
		out = append(out, slotReplicas{start: r.start, end: slot - 1, replicas: r.replicas})
	}
	out = append(out, slotReplicas{start: slot, end: slot, replicas: n})
	if slot < r.end {
		out = append(out, slotReplicas{start: slot + 1, end: r.end, replicas: r.replicas})
	}
	return append(out, rs[i+1:]...), true
}

// replicasOf is the cached count for key: its slot's primary's on a Cluster
// whose slot map was read, else replicas.
func (c *Client) replicasOf(key string) int {
	g := &c.guard
	if t := g.shards.Load(); t != nil && c.rc.Mode() == rueidis.ClientModeCluster {
		slot := keySlot(key)
		rs := *t
		lo, hi := 0, len(rs)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if rs[m].end < slot {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < len(rs) && rs[lo].start <= slot {
			return int(rs[lo].replicas)
		}
	}
	return int(g.replicas.Load())
}

// nodeOf is the address of the primary serving key's slot in the slot map
// last read, or "" when none was read (not a Cluster, or not yet counted).
func (c *Client) nodeOf(key string) string {
	t := c.guard.owners.Load()
	if t == nil {
		return ""
	}
	return ownerOf(*t, keySlot(key))
}

// ownerID is the node ID of the primary serving key's slot in the slot
// map last read, or "" when none was read or it named no ID.
func (c *Client) ownerID(key string) string {
	t := c.guard.owners.Load()
	if t == nil {
		return ""
	}
	if i, found := ownerIndex(*t, keySlot(key)); found {
		return (*t)[i].id
	}
	return ""
}

// countOfNode is the count of the primary whose node ID is id; ok is false
// when it was not counted, and then the count is taken again soon (a
// primary added since) unless no IDs were read.
func (c *Client) countOfNode(id string) (n int, ok bool) {
	m := c.guard.ids.Load()
	if m == nil || len(*m) == 0 {
		return 0, false
	}
	if addr, known := (*m)[id]; known {
		if n, ok = c.replicasAt(addr); ok {
			return n, true
		}
	}
	c.recountSoon()
	return 0, false
}

// ownerOf is the address of the primary serving slot in owners (sorted by
// slot), or "" when none does.
func ownerOf(owners []slotOwner, slot uint16) string {
	i, found := ownerIndex(owners, slot)
	if !found {
		return ""
	}
	return owners[i].addr
}

// ownerIndex is the index of the range of owners (sorted by slot) that
// holds slot; found is false when none does.
func ownerIndex(owners []slotOwner, slot uint16) (i int, found bool) {
	return slices.BinarySearchFunc(owners, slot, func(o slotOwner, s uint16) int {
		switch {
		case o.end < s:
			return -1
		case o.start > s:
			return 1
		}
		return 0
	})
}

// refreshReplicas returns the cached count for key (replicasOf) and counts
// replicas again in the background when the count, taken at checked
// (countClock), is older at now than countAge for a call wanting want.
func (c *Client) refreshReplicas(checked, now int64, key string, want int) int {
	n := c.replicasOf(key)
	age := countAge(want, n)
	if n == 0 && c.guard.replicated.Load() {
		// Counted without replicas in a deployment that has them: most
		// often a promoted replica counted before the demoted primary
		// came back as its replica, within a second. Its writes go out
		// unguarded until the next count, and the next failover loses
		// what they granted: that count comes after guardRecheck, not
		// guardRefresh.
		age = guardRecheck
	}
	c.refreshOlder(checked, now, age)
	return n
}

// countAge is how old the count may grow before a call to a primary with n
// counted replicas, wanting want acknowledgements (WithGuardReplicas), has it
// taken again: guardRecheck when the number its WAIT asks for is the count
// (GuardAllReplicas, or more than one wanted and fewer counted), for a
// replica that came online since is then one the call's WAIT should have
// asked for, and a failover may promote it while it lacks the write; else
// guardRefresh, as a new replica changes nothing the call waits for. The
// default, one replica, on a primary without any is left at guardRefresh:
// nothing guards that primary's writes, and every Client of a server
// without replicas would ask it for INFO each second (refreshReplicas
// makes it guardRecheck where a count found replicas before).
func countAge(want, n int) time.Duration {
	if want == GuardAllReplicas || want > 1 && n < want {
		return guardRecheck
	}
	return guardRefresh
}

// cancelAfter is ctx, ended d from now without a deadline, for a call made
// in the background that nobody waits for. rueidis sends a call whose
// context has a deadline at once on a connection with no other call in
// flight, queues the calls that come meanwhile behind it, and closes the
// connection when that deadline passes, failing them all: a renewal sent
// just after a count on a link slower than the count's bound failed with
// it. A call whose context only ends is queued instead (the connection
// pipelines from then on), and ending it drops its reply alone; a
// connection that stopped answering is rueidis's to close (its PING).
func cancelAfter(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithValue(ctx, queuedCallKey{}, true))
	t := time.AfterFunc(d, cancel)
	return ctx, func() {
		t.Stop()
		cancel()
	}
}

// withoutDeadline is ctx reporting no deadline: it ends as ctx does, with
// ctx's error (context.DeadlineExceeded when its deadline passed), for a
// call on the Client's connection bounded by a deadline of the Client's
// own that nobody waits for (a background undo). rueidis closes a
// connection whose synchronous call's deadline passes, failing the calls
// queued behind it (see cancelAfter), a renewal among them on a link
// slower than that bound; a call that reports none is queued instead, and
// its end drops its reply alone. The connection pipelines from then on:
// its retryable calls are pinned (keptWhole), as rueidis's writer of a
// broken connection may still read them when they are answered on another.
func withoutDeadline(ctx context.Context) context.Context { return noDeadline{ctx} }

type noDeadline struct{ context.Context }

func (noDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value marks ctx as a queued call's (keptWhenQueued).
func (n noDeadline) Value(key any) any {
	if key == (queuedCallKey{}) {
		return true
	}
	return n.Context.Value(key)
}

// recountSoon has the replica count taken again in the background unless
// it is younger than guardRecheck (a stalled replica stays connected, and
// every write meets it): a WAIT answered with fewer replicas than a call
// needed, so a replica the count includes may be gone, failing every
// guarded write to its primary until the next count; or a MOVED named a
// primary the count has not seen.
func (c *Client) recountSoon() {
	if checked := c.guard.checked.Load(); checked != 0 {
		c.refreshOlder(checked, c.countClock(), guardRecheck)
	}
}

// refreshOlder counts replicas again in the background when the count,
// taken at checked (countClock), is older than age at now.
func (c *Client) refreshOlder(checked, now int64, age time.Duration) {
	g := &c.guard
	if now-checked > int64(age) && g.refreshing.CompareAndSwap(false, true) {
		if !c.background(func() {
			rctx, cancel := cancelAfter(c.ctx, 2*time.Second)
			moves := g.moves.Load()
			seq := g.countSeq.Add(1)
			m, shards, primaries, owners, ok := c.countReplicasFor(rctx, "", nil)
			cancel()
			if ok && g.moves.Load() == moves {
				c.storeCountFrom(seq, m, shards, primaries, owners)
			}
			g.checked.Store(c.countClock())
			g.refreshing.Store(false)
		}) {
			g.refreshing.Store(false)
		}
	}
}

// countReplicas asks every node for INFO replication (and memory, for
// warnEviction). count is the smallest replica count among primaries; on a
// Cluster, shards is each primary's count by the slots it serves (CLUSTER
// SLOTS), nil when the slot map could not be read: a shard without replicas
// (WAIT for one that does not exist would stall every lock there) must not
// turn the guard off on the others. primaries is each counted primary's
// count by address, with shards. ok is false when no node answered, or
// only replicas did.
func (c *Client) countReplicas(ctx context.Context) (count int, shards []slotReplicas, primaries map[string]int, ok bool) {
	count, shards, primaries, _, ok = c.countReplicasFor(ctx, "", nil)
	return count, shards, primaries, ok
}

// countReplicasFor is countReplicas that also sends on own, once, the count
// of the primary serving key as soon as that primary has answered (on a
// Cluster whose slot map was read; own nil: none), and returns the slot map
// it read (nil: none), to be stored with the count (storeCountFrom).
func (c *Client) countReplicasFor(ctx context.Context, key string, own chan<- slotCount) (count int, shards []slotReplicas, primaries map[string]int, slots []slotOwner, ok bool) {
	least := -1
	answered := false
	cluster := c.rc.Mode() == rueidis.ClientModeCluster
	var counts map[string]int // per primary address, on a Cluster
	if cluster {
		counts = map[string]int{}
	}
	seen := c.panicPaths.replicas.begin()
	nodes := c.nodesOf(countingReplicas) // on the count's goroutine (countFor, refreshOlder)
	answers := c.askInfo(ctx, nodes)
	var owners []slotOwner     // the slot map, once read
	heard := map[string]bool{} // the nodes that answered or failed to
wait:
	for range nodes {
		var a nodeInfo
		select {
		case a = <-answers:
		case <-ctx.Done():
			break wait // the nodes not heard from are not counted
		}
		heard[a.addr] = true
		primary := false
		if a.err != nil {
			// A server that refuses INFO (an ACL without it, or a proxy
			// without the command) is up but cannot be counted:
			// unguarded, as before there was a guard. No answer at all is
			// not a count, nor is an error that passes (BUSY while someone's
			// script runs, NOAUTH after a password rotation): a count of
			// none would leave that primary's acquisitions unguarded until
			// the next count.
			_, isReply := rueidis.IsRedisErr(a.err)
			isReply = isReply && !infoPasses(a.err)
			answered = answered || isReply
			if isReply {
				c.warnUncounted(a.addr, a.err)
				if cluster {
					counts[a.addr] = 0
				}
			}
		} else if !strings.Contains(a.info, "role:slave") {
			// (A replica, on a Sentinel client a demoted primary the
			// client has not yet left, counts no primary's replicas.)
			answered = true
			if primary = strings.Contains(a.info, "role:master"); primary {
				c.warnEviction(a.info)
				if k, ok := onlineReplicas(a.info); ok {
					if k > 0 {
						c.guard.replicated.Store(true)
					}
					if least < 0 || k < least {
						least = k
					}
					if cluster {
						counts[a.addr] = k
					}
				}
			}
		}
		if !cluster {
			if primary {
				break wait // one primary: its count is the count
			}
			continue
		}
		if _, counted := counts[a.addr]; counted && owners == nil {
			owners = c.slotMapOf(ctx, a.addr, nodes[a.addr])
		}
		if own != nil && owners != nil {
			if i, found := ownerIndex(owners, keySlot(key)); found {
				if k, counted := counts[owners[i].addr]; counted {
					own <- slotCount{k, owners[i].id} // room for one
					own = nil
				}
			}
		}
		if owners != nil && allHeard(owners, heard) {
			// Every primary answered: a stalled replica, whose answer
			// would only say it is one, is not waited for.
			break wait
		}
	}
	if owners != nil {
		shards = make([]slotReplicas, 0, len(owners))
		for _, o := range owners {
			// A primary that was not counted (it did not answer) counts
			// one replica: no count is not a count of zero.
			k, ok := counts[o.addr]
			if !ok {
				k = 1
			}
			shards = append(shards, slotReplicas{start: o.start, end: o.end, replicas: int32(k)})
		}
	}
	if answered {
		c.panicPaths.replicas.ended(seen) // unless a call of this count panicked
	}
	return max(least, 0), shards, counts, owners, answered
}

// runIDs returns the run_id of each node of the Client's deployment
// (rueidis's Nodes: the server, a Sentinel deployment's primary, a
// Cluster's nodes) by address, asking INFO server, within ctx, of the nodes
// that have not told it yet, the nodes that refused INFO (refused: an ACL
// without it, whose "" tells nothing), and whether every node has told it
// or refused it for good (not the Client's password refused). The
// answers are kept runIDKeep: the RedLocks over the Client made meanwhile
// ask once. One INFO at a time is asked of a node: calls that find one in
// flight wait for its answer (within their ctx) instead of sending their
// own, so that the acquisitions begun as a kept run_id runs out send it one
// INFO, not one each. A node that did
// not answer within the node timeout (ctx's cause errNodeTimeout) is asked
// again after a pause, from runAskMin doubling to runAskMax while it stays
// silent, not at every call: each would wait for it until ctx ended. The
// nodes whose addresses are in fresh are asked again whatever was kept
// (unless paused, or asked already: the answer of an INFO in flight is as
// fresh), and what they tell kept. With force, nodes paused are asked too
// (the caller knows they answer). until is when the first of the run_ids
// returned stops being kept (zero: none returned): a server replaced since
// is asked no sooner.
func (c *Client) runIDs(ctx context.Context, fresh map[string]bool, force bool) (ids map[string]string, refused map[string]error, known bool, until time.Time) {
	nodes := c.rc.Nodes() // a map of its own (sharedDial): those paused are taken out
	ids = make(map[string]string, len(nodes))
	refused = map[string]error{}
	now := time.Now()
	kept := func(u time.Time) {
		if until.IsZero() || u.Before(until) {
			until = u
		}
	}
	paused := 0 // nodes not asked now
	keep := runIDKeep
	if c.runKeep > 0 {
		keep = c.runKeep
	}
	asks := map[string]*runAsking{} // the INFO in flight this call waits for, by node
	var start []*runAsking          // those this call sends
	c.runMu.Lock()
	for addr, n := range nodes {
		if k, ok := c.runIDsOf[addr]; ok && now.Before(k.until) && !fresh[addr] {
			ids[addr] = k.id
			kept(k.until)
			if k.refused != nil {
				refused[addr] = k.refused
			}
		} else if p, ok := c.runAsk[addr]; ok && now.Before(p.at) && !force {
			delete(nodes, addr)
			paused++
		} else if a := c.runAsked[addr]; a != nil {
			a.waiting++
			asks[addr] = a
		} else {
			if c.runAsked == nil {
				c.runAsked = map[string]*runAsking{}
			}
			a := &runAsking{addr: addr, n: n, done: make(chan struct{}), waiting: 1}
			c.runAsked[addr] = a
			asks[addr] = a
			start = append(start, a)
		}
	}
	c.runMu.Unlock()
	if len(asks) == 0 {
		return ids, refused, paused == 0, until
	}
	// Asked at once, and not waited for past ctx: a call held in rueidis's
	// opening of a connection does not watch it (see callBounded). Each
	// goroutine ends with its call. Its context is ctx's deadline, not
	// ctx: the calls that wait for it too are not cut off when this one's
	// caller goes.
	for _, a := range start {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if d, ok := ctx.Deadline(); ok {
			actx, cancel = context.WithDeadlineCause(context.WithoutCancel(ctx), d, errNodeTimeout)
		}
		go c.askRunID(actx, cancel, a, keep)
	}
	for _, a := range asks {
		select {
		case <-a.done:
		case <-ctx.Done(): // each one after at once
		}
	}
	var caught firstPanic
	c.runMu.Lock()
	for addr, a := range asks {
		select {
		case <-a.done:
			if a.ok {
				ids[addr] = a.id
				kept(a.until)
			}
			if a.refused != nil {
				refused[addr] = a.refused
			}
			if a.panicked {
				caught.keep(a.value)
			}
			if a.exited {
				caught.exit()
			}
		default:
			a.waiting-- // left: a panic then has no caller to reach
		}
	}
	if caught.set {
		// A node's call panicked (a client wrapper, say), or ended its
		// goroutine: it goes on on the caller's goroutine, nothing kept.
		c.runMu.Unlock()
		caught.goOn()
	}
	// A caller's context that ended (not the node timeout, errNodeTimeout)
	// tells nothing of the nodes: they are asked at the next call.
	pause := ctx.Err() == nil || errors.Is(context.Cause(ctx), errNodeTimeout)
	if c.runAsk == nil {
		c.runAsk = map[string]runPause{}
	}
	for addr := range nodes {
		if _, ok := ids[addr]; !ok && pause {
			p := c.runAsk[addr]
			p.next = min(max(p.next, runAskMin), runAskMax)
			p.at = time.Now().Add(p.next)
			p.next *= 2
			c.runAsk[addr] = p
		}
	}
	c.runMu.Unlock()
	return ids, refused, len(ids) == len(nodes) && paused == 0, until
}

// runAsking is an INFO server in flight to a node (runIDs), which the
// calls that need that node's run_id meanwhile wait for. Its outcome is
// set before done is closed.
type runAsking struct {
	addr    string
	n       rueidis.Client
	done    chan struct{}
	waiting int // calls waiting for it; guarded by Client.runMu
	id      string
	ok      bool      // told (or refused INFO for good: id "")
	until   time.Time // when ok: until when the answer is kept
	// refused: the node's refusal of INFO (an ACL without it: NOPERM),
	// which leaves it not compared; ok unless it refused the Client's
	// password (NOAUTH, WRONGPASS), which a rotation under way gives only
	// until it ends: asked again, not kept.
	refused  error
	panicked bool // the call panicked (a client wrapper, say) with value
	value    any
	exited   bool // the call ended its goroutine (runtime.Goexit)
}

// askRunID asks a's node its run_id under ctx, keeps the answer keep, and
// ends a.
func (c *Client) askRunID(ctx context.Context, cancel context.CancelFunc, a *runAsking, keep time.Duration) {
	defer cancel()
	var (
		v        any
		stack    string
		panicked bool
		returned bool
	)
	// Deferred: a Goexit of the call must still end a, and reach the
	// callers waiting for it, as a panic does: it told nothing.
	defer func() {
		c.runMu.Lock()
		if panicked {
			a.panicked, a.value = true, v
		}
		a.exited = !returned
		if a.ok {
			if c.runIDsOf == nil {
				c.runIDsOf = map[string]keptRunID{}
			}
			a.until = time.Now().Add(keep)
			c.runIDsOf[a.addr] = keptRunID{a.id, a.refused, a.until}
			delete(c.runAsk, a.addr)
		}
		if c.runAsked[a.addr] == a {
			delete(c.runAsked, a.addr)
		}
		waiting := a.waiting
		close(a.done)
		c.runMu.Unlock()
		if panicked && waiting == 0 {
			// No caller left to reach.
			c.log.Error("panic recovered", "in", "INFO server", "panic", v, "stack", stack)
		}
	}()
	v, stack, panicked = catch(func() {
		info, err := a.n.Do(ctx, a.n.B().Info().Section("server").Build()).ToString()
		switch {
		case err == nil:
			a.id, a.ok = infoField(info, "run_id"), true
		case refusedForGood(err):
			a.refused, a.ok = err, !authRefused(err)
		}
	})
	returned = true
}

// nodeInfo is one node's answer to askInfo.
type nodeInfo struct {
	addr string
	info string
	err  error
}

// askInfo asks every node of nodes for INFO replication and memory at once,
// each on a goroutine of the Client's own, so that a stalled node costs the
// count its own answer only; the answers come on the channel returned, which
// has room for all of them. Each ask runs under ctx itself, the count's,
// which ends the asks the count no longer waits for. A foreground count's
// has the caller's deadline, which ends a command rueidis sends on an idle
// connection (synchronously) by closing it; a background count's only ends
// (cancelAfter), so that it closes no connection a renewal shares.
func (c *Client) askInfo(ctx context.Context, nodes map[string]rueidis.Client) <-chan nodeInfo {
	out := make(chan nodeInfo, len(nodes))
	for addr, n := range nodes {
		if !c.background(func() {
			// A panic of the call (a client wrapper's) has no caller to
			// reach: logged, and the node is not counted, as one that
			// did not answer.
			// So is one that ends the call's goroutine (Goexit): on this
			// one, nothing was sent and the count waited for the node
			// until its context ended.
			var a nodeInfo
			if v, stack, panicked, exited := catchOwn(func() {
				a.info, a.err = n.Do(ctx, n.B().Info().Section("replication", "memory").Build()).ToString()
			}); panicked || exited {
				a.err = c.callFailedAt(countingReplicas, v, stack, exited)
			}
			a.addr = addr
			out <- a
		}) {
			out <- nodeInfo{addr: addr, err: ErrClosed}
		}
	}
	return out
}

// slotOwner is the address of the primary serving slots start..end, and
// its node ID ("" when CLUSTER SLOTS named none).
type slotOwner struct {
	start, end uint16
	addr       string
	id         string
}

// allHeard reports whether every primary of the slot map has answered (or
// failed to).
func allHeard(owners []slotOwner, heard map[string]bool) bool {
	for _, o := range owners {
		if !heard[o.addr] {
			return false
		}
	}
	return true
}

// countingReplicas is what a panic logged while the replica count is taken
// was in.
const countingReplicas = "counting replicas for the failover guard"

// errCallPanicked is the error of a call on a goroutine of the Client's own
// whose client wrapper panicked (callPanicked).
var errCallPanicked = errors.New("scriptlock: the call panicked (a client wrapper's panic, logged)")

// errCallExited is the error of a call on a goroutine of the Client's own
// that ended it (a client wrapper's runtime.Goexit): it has no outcome.
var errCallExited = errors.New("scriptlock: the call ended its goroutine (a client wrapper's runtime.Goexit)")

// callPanicked logs v, a client wrapper's panic on a goroutine of the
// Client's own that no caller waits on, in what, by the reporter (a log
// sink that stalls must not hold the goroutine up), and returns the error
// the call is taken to have failed with. Called from the deferred function
// that recovered v, so that the stack is the panic's.
func (c *Client) callPanicked(what string, v any) error {
	return c.callPanickedAt(what, v, string(debug.Stack()))
}

// callPanickedAt is callPanicked with the panic's stack, taken where it
// was recovered first.
func (c *Client) callPanickedAt(what string, v any, stack string) error {
	record := func() { c.log.Error("panic recovered", "in", what, "panic", v, "stack", stack) }
	if p := c.panicPathOf(what); p != nil {
		if n := p.n.Add(1); n > 1 {
			record = func() { c.log.Debug("panic recovered again", "in", what, "panic", v, "panics", n) }
		}
	}
	if c.rep != nil {
		c.rep.logLater(record)
	} else {
		record()
	}
	return fmt.Errorf("%w: %v", errCallPanicked, v)
}

// callFailedAt is callPanickedAt for a call that panicked, or that ended
// its goroutine (exited: a client wrapper's runtime.Goexit), logged as a
// panic of errCallExited and taken to have failed with it.
func (c *Client) callFailedAt(what string, v any, stack string, exited bool) error {
	if !exited {
		return c.callPanickedAt(what, v, stack)
	}
	_ = c.callPanickedAt(what, errCallExited, stack)
	return errCallExited
}

// panicPath counts the panics of one path of the Client's own goroutines
// that runs again on its own (the eviction-policy check every minute on
// every node, the replica count at every acquisition while none could be
// taken, a wait's subscription at every attempt) since a run of it last
// went through without one: the first is logged at ERROR with its stack,
// the others at DEBUG (callPanickedAt). A wrapper that panics at every
// call logged an ERROR at every run.
type panicPath struct{ n atomic.Int64 }

// begin is taken as a run of the path starts, for ended.
func (p *panicPath) begin() int64 { return p.n.Load() }

// ended is called as a run that began at seen ends without a panic of its
// own: when no run of the path panicked since seen either, the path went
// through, and its next panic is news again.
func (p *panicPath) ended(seen int64) {
	if seen != 0 {
		p.n.CompareAndSwap(seen, 0)
	}
}

// panicPathOf is the path a panic logged in what counts in; nil: every
// panic is logged at ERROR.
func (c *Client) panicPathOf(what string) *panicPath {
	switch what {
	case checkingEviction:
		return &c.panicPaths.eviction
	case countingReplicas:
		return &c.panicPaths.replicas
	case waitSubscription:
		return &c.panicPaths.subscription
	}
	return nil
}

// nodesOf is the client's nodes (Nodes) on a goroutine of the Client's
// own: a panic there (a client wrapper's) is logged as in what, and no node
// given, as none that answers. So for a Goexit there (catchOwn), which
// ended the goroutine of the count an acquisition waits for, or of the
// eviction check, for good.
func (c *Client) nodesOf(what string) (nodes map[string]rueidis.Client) {
	if v, stack, panicked, exited := catchOwn(func() { nodes = c.rc.Nodes() }); panicked || exited {
		_ = c.callFailedAt(what, v, stack, exited)
		return nil
	}
	return nodes
}

// slotMapOf is slotMap on a goroutine of the Client's own: a panic of its
// call (a client wrapper's), or a Goexit (nodesOf), is logged, and the slot
// map taken as not read.
func (c *Client) slotMapOf(ctx context.Context, addr string, n rueidis.Client) (owners []slotOwner) {
	if v, stack, panicked, exited := catchOwn(func() { owners = slotMap(ctx, addr, n) }); panicked || exited {
		_ = c.callFailedAt(countingReplicas, v, stack, exited)
		return nil
	}
	return owners
}

// slotMap reads the slot map (CLUSTER SLOTS) from node n at addr, sorted by
// slot; nil when it could not be read.
func slotMap(ctx context.Context, addr string, n rueidis.Client) []slotOwner {
	if n == nil {
		return nil
	}
	ranges, err := n.Do(ctx, n.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		return nil
	}
	out := make([]slotOwner, 0, len(ranges))
	for _, r := range ranges {
		f, err := r.ToArray()
		if err != nil || len(f) < 3 {
			continue
		}
		start, err1 := f[0].AsInt64()
		end, err2 := f[1].AsInt64()
		primary, err3 := f[2].ToArray()
		if err1 != nil || err2 != nil || err3 != nil || len(primary) < 2 {
			continue
		}
		host, _ := primary[0].ToString()
		switch host {
		case "":
			// No endpoint named (cluster-preferred-endpoint-type
			// unknown-endpoint, or a node of a one-node Cluster that
			// does not know its address): clients use the host they
			// asked, and so do the Client's slot map and Nodes.
			host, _, _ = net.SplitHostPort(addr)
		case "?":
			// Hostnames preferred and this primary announces none:
			// rueidis skips its slots (no endpoint to reach it by), so
			// neither Nodes nor any call has it. Named "?", it would be
			// a primary the count waits to hear from and never does.
			continue
		}
		port, _ := primary[1].AsInt64()
		var id string
		if len(primary) > 2 {
			id, _ = primary[2].ToString()
		}
		out = append(out, slotOwner{start: uint16(start), end: uint16(end), addr: net.JoinHostPort(host, strconv.FormatInt(port, 10)), id: id})
	}
	slices.SortFunc(out, func(a, b slotOwner) int { return int(a.start) - int(b.start) })
	return out
}

// warnEviction logs a warning, once per policy, when a primary may evict
// keys under memory pressure: every lock key has a TTL, so any policy but
// noeviction can take a held lock, which its holder learns of at the next
// renewal only, while another owner may already have it.
func (c *Client) warnEviction(info string) {
	policy := infoField(info, "maxmemory_policy")
	if policy == "" || policy == "noeviction" || infoField(info, "maxmemory") == "0" {
		return
	}
	// Primaries are read at once: of those with the same policy, one warns.
	g := &c.guard
	g.evictionMu.Lock()
	if g.evictionWarned[policy] {
		g.evictionMu.Unlock()
		return
	}
	if g.evictionWarned == nil {
		g.evictionWarned = map[string]bool{}
	}
	g.evictionWarned[policy] = true
	g.evictionMu.Unlock()
	// Written by the reporter: a logger that blocks must not hold up the
	// count, which the first acquisitions wait for.
	maxmemory := infoField(info, "maxmemory")
	if !c.rep.logLater(func() {
		c.log.Warn("Redis may evict lock keys when it reaches maxmemory: a lock whose key is evicted is lost while its holder still runs; set maxmemory-policy noeviction (docs/operations.md)",
			"maxmemory_policy", policy, "maxmemory", maxmemory)
	}) {
		// Dropped (the logger blocks): said at a later look, not never.
		g.evictionMu.Lock()
		delete(g.evictionWarned, policy)
		g.evictionMu.Unlock()
	}
}

// infoPasses reports an error reply to INFO that says nothing of the
// server's replicas and passes: BUSY (someone's script runs past
// busy-reply-threshold), LOADING, MASTERDOWN, or an authentication the
// server refuses (NOAUTH, WRONGPASS: a password rotation, which fails
// every call until the Client's password is right again).
func infoPasses(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	if !ok {
		return false
	}
	msg := re.Error()
	for _, p := range []string{"BUSY ", "LOADING ", "MASTERDOWN ", "NOAUTH ", "WRONGPASS "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// warnUncounted logs a warning, once per Client, that the node at addr
// answered the replica count's INFO with err (an ACL user refused INFO):
// with no count the guard sends that primary's acquisitions without WAIT,
// as on a primary without replicas, whatever replicas it has, and the
// eviction policy goes unread.
func (c *Client) warnUncounted(addr string, err error) {
	if c.guard.uncountedWarned.Swap(true) {
		return
	}
	// Written by the reporter, as warnEviction's; said at a later count
	// when it was dropped.
	if !c.rep.logLater(func() {
		c.log.Warn("the failover guard cannot count replicas: the server refused INFO, so acquisitions on that primary are not guarded against a failover (no WAIT) and its eviction policy is not checked; allow the user INFO, or turn the guard off (WithFailoverGuard(false, 0))",
			"node", addr, "error", err.Error())
	}) {
		c.guard.uncountedWarned.Store(false)
	}
}

// onlineReplicas is the number of replicas INFO replication lists as
// online. A replica still in its initial sync (wait_bgsave, send_bulk),
// which connected_slaves counts, acknowledges no WAIT until the sync ends,
// minutes on a big dataset, and holds no copy a failover could promote:
// waiting for it would fail every guarded write meanwhile. connected_slaves
// is the count only when no slaveN line gives a state. ok is false when
// neither can be read.
func onlineReplicas(info string) (n int, ok bool) {
	for line := range strings.Lines(info) {
		name, fields, found := strings.Cut(strings.TrimSpace(line), ":")
		num, isSlave := strings.CutPrefix(name, "slave")
		if !found || !isSlave || num == "" || strings.Trim(num, "0123456789") != "" {
			continue
		}
		for f := range strings.SplitSeq(fields, ",") {
			if state, isState := strings.CutPrefix(f, "state="); isState {
				ok = true
				if state == "online" {
					n++
				}
				break
			}
		}
	}
	if ok {
		return n, true
	}
	n, err := strconv.Atoi(infoField(info, "connected_slaves"))
	return n, err == nil
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// givingBackStart records a give-back of the permits of the semaphore at
// key starting; the function it returns records its end.
func (c *Client) givingBackStart(key string) func() {
	done := make(chan struct{})
	c.givingBackMu.Lock()
	defer c.givingBackMu.Unlock()
	running := c.givingBack[key]
	if running == nil {
		if c.givingBack == nil {
			c.givingBack = map[string]map[chan struct{}]struct{}{}
		}
		running = map[chan struct{}]struct{}{}
		c.givingBack[key] = running
	}
	running[done] = struct{}{}
	var once sync.Once
	return func() {
		once.Do(func() {
			c.givingBackMu.Lock()
			defer c.givingBackMu.Unlock()
			delete(running, done)
			if len(running) == 0 {
				delete(c.givingBack, key)
			}
			close(done)
		})
	}
}

// givenBack waits until the give-backs of the permits of the semaphore at
// key that this Client started before the call have ended, or ctx ends (its
// cause), or Close begins (ErrClosed: the caller, a drain, must not take
// permits once the Client is closing, as a waiting acquisition does not).
// Those started meanwhile are not waited for: give-backs that kept
// overlapping would keep the caller waiting as long as they did.
func (c *Client) givenBack(ctx context.Context, key string) error {
	c.givingBackMu.Lock()
	running := make([]chan struct{}, 0, len(c.givingBack[key]))
	for done := range c.givingBack[key] {
		running = append(running, done)
	}
	c.givingBackMu.Unlock()
	for _, done := range running {
		select {
		case <-done:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-c.closingCtx.Done():
			return ErrClosed
		}
	}
	if len(running) > 0 && c.closed() {
		return ErrClosed // the give-back ended as Close began
	}
	return nil
}
