package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// subscriptions multiplexes lock-release notifications: one Redis subscription
// per channel on the Client's shared pub/sub connection, reference-counted by
// the waiters that need it, with a dispatcher that hands each message to
// waiters in arrival order.
type subscriptions struct {
	// panicked logs a client wrapper's panic on the subscriptions'
	// goroutines and returns the error the call failed with
	// (Client.callPanicked); nil: not logged.
	panicked func(what string, v any, stack string) error
	rc       rueidis.Client
	id       string // the Client's id: names its own wake channels
	sharded  func() bool
	// panics counts the panics logged in waitSubscription (see panicPath);
	// nil: none counted.
	panics *panicPath
	// onFail is called when the server refuses a sharded subscribe; it
	// reports whether the Client switched to plain pub/sub (it does unless
	// forced onto sharded pub/sub).
	onFail func() bool
	ctx    context.Context

	// Set by tests only, on their own Client's subscriptions:
	// testHookJoin runs in join between registering the waiter and waiting
	// for the server's confirmation of the subscription; testHookReceive
	// in a subscription's receive goroutine before it subscribes;
	// testHookUnsubscribe in leave when the last waiter of a channel is
	// about to start its unsubscribe; testHookEnded in a receive goroutine
	// whose subscription ended, once it has woken the channel's waiters.
	testHookJoin        func(channel string, ready, done <-chan struct{})
	testHookReceive     func(channel string)
	testHookUnsubscribe func(channel string)
	testHookEnded       func(channel string)

	mu    sync.Mutex
	chans map[string]*channelSub
	// open counts chans, so a Lock with no subscription open (the usual
	// uncontended case) skips mu.
	open    atomic.Int32
	wg      sync.WaitGroup
	stopped bool // close began: no more background unsubscribes

	// handoffs: when a release by this client, or a wake heard by it, last
	// handed a lock to a Go waiter, by the client's wake channel of the
	// lock; entries older than handoffGrace are dropped as others are added.
	// nHandoffs counts them, so a Lock on a client with none skips mu.
	handoffs  map[string]time.Time
	nHandoffs atomic.Int32
}

// Targeted wake-ups (Mutex): a release publishes Redisson's "0" on the lock's
// channel and then, when a Go waiter is registered, "<score>:<field>" on that
// waiter's client's own wake channel, scriptlock_lock_wake:{name}:<client-id>.
// Go waiters listen for "0" only while the holder is not a scriptlock client
// (a Redisson holder's release sends nothing else), so a release reaches one
// waiting process, not all of them.
const (
	// subscriptionLinger keeps a targeted subscription open this long after
	// its last waiter left: a contended lock is usually waited for again at
	// once, and SUBSCRIBE/UNSUBSCRIBE per acquisition would cost more server
	// commands than the acquisition itself.
	subscriptionLinger = time.Second
	// handoffGrace: for this long after a release woke a Go waiter by name,
	// a newcomer on the same client queues behind it rather than take the
	// lock from under it (see MutexAcquire's polite). It covers the woken
	// waiter's wake-up and round trip on a loaded machine.
	handoffGrace = 10 * time.Millisecond
)

type channelSub struct {
	name    string
	refs    int
	ready   chan struct{} // closed once the server confirmed the subscription
	done    chan struct{} // closed when the receive loop ended
	err     error         // why the subscription failed (set before ready/done close)
	waiters []*waiter     // FIFO
	stop    context.CancelFunc
	sharded bool
	closing bool     // the last waiter left; UNSUBSCRIBE under way
	mode    wakeMode // how many waiters a message wakes

	// Targeted mode: the channel is this client's wake channel of a lock,
	// and every message names one waiter.
	targeted bool
	idle     *time.Timer // lingering without waiters: unsubscribes when it fires
	handoff  time.Time   // when a release last woke a Go waiter by name

	// Counted mode (a PermitSemaphore's channel): the soonest end of a
	// permit's lease known to this client, when a waiter is woken (see
	// leaseEnds).
	lease   *time.Timer
	leaseAt time.Time
}

// wakeMode says how many of a channel's waiters one message wakes.
type wakeMode uint8

const (
	// wakeOne: the longest-waiting waiter without a signal pending (a lock
	// hand-off).
	wakeOne wakeMode = iota
	// wakeCounted: as many waiters without a signal pending, longest
	// waiting first, as the number the message carries (a semaphore's
	// permits free after a release, or those added), as Redisson's
	// SemaphorePubSub wakes min(waiters, number).
	wakeCounted
	// wakeAll: every waiter (a latch reaching zero, a read lock freed).
	wakeAll
)

// waiter is one goroutine waiting for a lock; wake has room for one signal.
type waiter struct {
	wake  chan struct{}
	sub   *channelSub
	id    string       // targeted mode: the name releases wake it by
	since atomic.Int64 // targeted mode: the score of the wake that woke it
	// shared: wake is another waiter's (a targeted waiter that also listens
	// for Redisson's "0"), so a signal left unused is not passed on.
	shared bool
}

// takeSince returns the score of the targeted wake last received (0: none)
// and forgets it.
func (w *waiter) takeSince() int64 { return w.since.Swap(0) }

func newSubscriptions(ctx context.Context, rc rueidis.Client, id string, sharded func() bool, onFail func() bool) *subscriptions {
	return &subscriptions{rc: rc, id: id, sharded: sharded, onFail: onFail, ctx: ctx, chans: map[string]*channelSub{}}
}

// ownWake is this client's wake channel for a lock whose wake channels start
// with prefix (scriptlock_lock_wake:{name}).
func (s *subscriptions) ownWake(prefix string) string { return prefix + ":" + s.id }

// joinWith registers a waiter on channel and returns once the server has
// confirmed the subscription, so a message published after it returns is
// never missed. A message wakes the longest-waiting waiter (a lock hand-off),
// or every waiter when all is set (a latch reaching zero, a read lock freed).
func (s *subscriptions) joinWith(ctx context.Context, channel string, all bool) (*waiter, error) {
	mode := wakeOne
	if all {
		mode = wakeAll
	}
	return s.join(ctx, channel, false, "", mode, nil)
}

// joinCounted is joinWith for a semaphore's waiter: a message wakes as many
// waiters as the number of permits it announces (wakeCounted).
func (s *subscriptions) joinCounted(ctx context.Context, channel string) (*waiter, error) {
	return s.join(ctx, channel, false, "", wakeCounted, nil)
}

// joinTargeted is joinWith for a waiter woken by name: releases name the
// waiter id on this client's wake channel of the lock (see ownWake).
func (s *subscriptions) joinTargeted(ctx context.Context, wakePrefix, id string) (*waiter, error) {
	return s.join(ctx, s.ownWake(wakePrefix), true, id, wakeOne, nil)
}

// joinZero makes targeted waiter w also hear Redisson's "0" on channel (its
// lock is held by a Redisson client), with w's own wake-up channel.
func (s *subscriptions) joinZero(ctx context.Context, channel string, w *waiter) (*waiter, error) {
	return s.join(ctx, channel, false, "", wakeOne, w.wake)
}

// joinIfReady registers a targeted waiter without a round trip when the
// subscription is already confirmed (a lingering one), else returns nil.
// Joining before the first attempt means a wake for it cannot be missed, so
// no second attempt is needed after subscribing.
func (s *subscriptions) joinIfReady(wakePrefix, id string) *waiter {
	if s.open.Load() == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chans[s.ownWake(wakePrefix)]
	if cs == nil || cs.closing || !cs.targeted || s.ctx.Err() != nil {
		return nil
	}
	select {
	case <-cs.ready:
	default:
		return nil
	}
	select {
	case <-cs.done:
		return nil
	default:
	}
	return s.addLocked(cs, id, nil)
}

// rewake makes shared waiter zw wake w's channel: zw's targeted waiter was
// made again as w (its subscription ended).
func (s *subscriptions) rewake(zw, w *waiter) {
	s.mu.Lock()
	zw.wake = w.wake
	s.mu.Unlock()
}

// noteHandoff records that a release by this client woke a Go waiter of the
// lock whose wake channels start with wakePrefix.
func (s *subscriptions) noteHandoff(wakePrefix string) {
	s.mu.Lock()
	s.handedOffLocked(s.ownWake(wakePrefix), time.Now())
	s.mu.Unlock()
}

// handedOffLocked records a hand-off of the lock whose wake channel on this
// client is wake (s.mu held).
func (s *subscriptions) handedOffLocked(wake string, now time.Time) {
	if cs := s.chans[wake]; cs != nil {
		cs.handoff = now
	}
	if s.handoffs == nil {
		s.handoffs = map[string]time.Time{}
	}
	for k, t := range s.handoffs {
		if now.Sub(t) >= handoffGrace {
			delete(s.handoffs, k)
		}
	}
	s.handoffs[wake] = now
	s.nHandoffs.Store(int32(len(s.handoffs)))
}

// handingOff reports whether a release by this client, or one this client
// heard of, woke a Go waiter of the lock less than handoffGrace ago: that
// waiter may not have taken the lock yet.
func (s *subscriptions) handingOff(wakePrefix string) bool {
	if s.nHandoffs.Load() == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.handoffs[s.ownWake(wakePrefix)]
	return ok && time.Since(t) < handoffGrace
}

// handedOffSince reports whether a Go waiter of w's lock was woken by name
// after t.
func (s *subscriptions) handedOffSince(w *waiter, t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return w.sub.handoff.After(t)
}

// addLocked registers a waiter on cs, woken on wake (nil: a channel of its
// own) (s.mu held).
func (s *subscriptions) addLocked(cs *channelSub, id string, wake chan struct{}) *waiter {
	if cs.idle != nil {
		// If it already fired, idleOut sees the new waiter and does nothing.
		cs.idle.Stop()
		cs.idle = nil
	}
	cs.refs++
	w := &waiter{wake: wake, sub: cs, id: id, shared: wake != nil}
	if wake == nil {
		w.wake = make(chan struct{}, 1)
	}
	cs.waiters = append(cs.waiters, w)
	return w
}

func (s *subscriptions) join(ctx context.Context, channel string, targeted bool, id string, mode wakeMode, wake chan struct{}) (*waiter, error) {
	for {
		s.mu.Lock()
		if err := s.ctx.Err(); err != nil {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		cs := s.chans[channel]
		if cs != nil && cs.closing {
			// The last waiter is unsubscribing: wait for that to finish so
			// its UNSUBSCRIBE cannot end the subscription we are about to make.
			s.mu.Unlock()
			select {
			case <-cs.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		}
		if cs == nil {
			cs = s.start(channel, targeted)
		}
		cs.mode = max(cs.mode, mode)
		w := s.addLocked(cs, id, wake)
		s.mu.Unlock()
		if s.testHookJoin != nil {
			s.testHookJoin(channel, cs.ready, cs.done)
		}

		select {
		case <-cs.ready:
			return w, nil
		case <-cs.done:
			select {
			case <-cs.ready:
				// Confirmed, then ended (by the server when a Cluster slot
				// moves, say) before we looked: a dead subscription, which
				// the wait makes again.
				return w, nil
			default:
			}
			err := cs.err
			s.leave(w)
			if err == errShardedRefused {
				continue // start again with a plain subscription
			}
			if err == nil && s.ctx.Err() == nil {
				// Ended by the server before it confirmed: an UNSUBSCRIBE
				// of the channel on the same connection, which another
				// Client on the same rueidis client sends when its last
				// waiter leaves. Subscribe again, unless the caller is gone:
				// a subscription made for nobody would be ended again by an
				// UNSUBSCRIBE that can end the other Client's too.
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				continue
			}
			if err == nil {
				err = ErrClosed
			}
			return nil, err
		case <-ctx.Done():
			s.leave(w)
			return nil, ctx.Err()
		}
	}
}

var errShardedRefused = &subscribeError{"sharded pub/sub refused by the server"}

type subscribeError struct{ msg string }

func (e *subscribeError) Error() string { return "scriptlock: " + e.msg }

// start begins the receive loop for channel (targeted: this client's wake
// channel of a lock). Called with s.mu held.
func (s *subscriptions) start(channel string, targeted bool) *channelSub {
	ctx, cancel := context.WithCancel(s.ctx)
	cs := &channelSub{name: channel, targeted: targeted, ready: make(chan struct{}), done: make(chan struct{}), stop: cancel, sharded: s.sharded()}
	s.chans[channel] = cs
	s.open.Add(1)
	var cmd rueidis.Completed
	if cs.sharded {
		cmd = s.rc.B().Ssubscribe().Channel(channel).Build()
	} else {
		cmd = s.plainSlot(s.rc.B().Subscribe().Channel(channel).Build(), channel)
	}
	var confirmed atomic.Bool
	hookCtx := rueidis.WithOnSubscriptionHook(ctx, func(ps rueidis.PubSubSubscription) {
		if (ps.Kind != "subscribe" && ps.Kind != "ssubscribe") || ps.Channel != channel {
			return
		}
		if confirmed.CompareAndSwap(false, true) {
			close(cs.ready)
			return
		}
		// rueidis subscribed again on a new connection after the old one
		// broke, without ending Receive: whatever was published in between
		// is lost, so every waiter calls again now rather than at its
		// fallback.
		s.mu.Lock()
		for _, w := range cs.waiters {
			signal(w.wake)
		}
		s.mu.Unlock()
	})
	// on: the connection the subscription was last made on. rc routes an
	// UNSUBSCRIBE by the channel's slot, which may have moved to another
	// node since a plain SUBSCRIBE went out (a Cluster does not end those
	// when their slot moves, as it ends sharded ones).
	var on rueidis.CommandClient
	hookCtx = rueidis.WithOnReceiveReturnHook(hookCtx, func(err error, cc rueidis.CommandClient) error {
		on = cc // called on the receive goroutine, before Receive returns
		return err
	})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if s.testHookReceive != nil {
			s.testHookReceive(channel)
		}
		// end ends the subscription with err; deferred too: a Goexit of
		// the client (a wrapper's runtime.Goexit, which nothing stops)
		// ends it as one that failed, as a panic does, or it stayed open
		// with nobody listening and its waiters were never woken.
		ended := false
		end := func(err error) {
			ended = true
			s.mu.Lock()
			cs.err = err
			if s.chans[channel] == cs {
				delete(s.chans, channel)
				s.open.Add(-1)
			}
			cs.stopTimers()
			// Ended before any waiter is woken: one woken here must find its
			// subscription dead after its next attempt, however late this
			// goroutine runs on, or it would wait on a channel nobody listens on.
			close(cs.done)
			// Whoever is still waiting must retry: the next attempt either
			// acquires, fails loudly, or subscribes again.
			for _, w := range cs.waiters {
				signal(w.wake)
			}
			s.mu.Unlock()
			if s.testHookEnded != nil {
				s.testHookEnded(channel)
			}
		}
		defer func() {
			if !ended {
				end(errCallExited)
			}
		}()
		// A panic of the client (a client wrapper's) has no caller to
		// reach: logged, the subscription ends as one that failed, and
		// its waiters call again.
		var seen int64
		if s.panics != nil {
			seen = s.panics.begin()
		}
		err := s.unpanicked(func() error {
			return s.rc.Receive(hookCtx, cmd, func(m rueidis.PubSubMessage) { s.dispatch(cs, m) })
		})
		if s.panics != nil && !errors.Is(err, errCallPanicked) {
			s.panics.ended(seen)
		}
		if ctx.Err() != nil {
			// Ended by its context (Close, or unsubscribe): rueidis stops
			// listening but leaves the subscription on the server, on a
			// connection rc keeps. Also when not confirmed yet: the
			// SUBSCRIBE may be on its way, and the UNSUBSCRIBE follows it
			// on the same connection.
			_ = s.unpanicked(func() error { s.unsubscribeOnServer(cs, on); return nil })
		}
		if err != nil && cs.sharded && isUnknownCommand(err) && s.onFail() {
			err = errShardedRefused
		}
		end(err)
	}()
	return cs
}

// waitSubscription is what a panic logged in a wait's subscription was in.
const waitSubscription = "a wait's subscription"

// unpanicked runs f, a call of the subscriptions' goroutines, and returns
// its error, or one for its panic (a client wrapper's), logged (panicked).
func (s *subscriptions) unpanicked(f func() error) (err error) {
	v, stack, panicked := catch(func() { err = f() })
	switch {
	case !panicked:
		return err
	case s.panicked != nil:
		return s.panicked(waitSubscription, v, stack)
	}
	return fmt.Errorf("%w: %v", errCallPanicked, v)
}

// isUnknownCommand reports a server's refusal of a command it does not
// have: "unknown command" for one sent directly (SSUBSCRIBE), "Unknown Redis
// command called from script" (Lua script, before 7.0) for one a script
// calls (SPUBLISH), or UNKNOWN_COMMAND from a script that finds its
// publish command missing before it writes (generated.ErrUnknownCommand).
func isUnknownCommand(err error) bool {
	if errors.Is(err, generated.ErrUnknownCommand) {
		// A script that checks its publish command's ACL first finds the
		// command missing before it writes anything (acl_check_cmd).
		return true
	}
	if re, ok := rueidis.IsRedisErr(err); ok {
		msg := strings.ToLower(re.Error())
		return strings.Contains(msg, "unknown command") || strings.Contains(msg, "unknown redis command")
	}
	return false
}

func (cs *channelSub) stopTimers() {
	if cs.idle != nil {
		cs.idle.Stop()
		cs.idle = nil
	}
	if cs.lease != nil {
		cs.lease.Stop()
		cs.lease = nil
	}
}

// leaseEnds tells the waiters on channel, if any, that the lease of a
// permit this client just took or extended, or the soonest lease a refused
// waiter heard of, ends at at. Nothing announces it (and an Extend may
// shorten a lease), while a release wakes only as many waiters as it freed
// permits, so those it did not wake sleep on what they heard before (a
// longer lease, or none) until their fallback poll, and the one waiter that
// heard of it may give up first. At the soonest such end the longest-waiting
// waiter without a signal pending is woken; its attempt returns the expired
// permits to the pool and announces them (a counted wake of the others), or,
// refused, sleeps until the lease it hears of ends.
func (s *subscriptions) leaseEnds(channel string, at time.Time) {
	if s.open.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chans[channel]
	if cs == nil || cs.mode != wakeCounted || cs.closing || len(cs.waiters) == 0 {
		return
	}
	if cs.lease != nil {
		if !at.Before(cs.leaseAt) {
			return
		}
		cs.lease.Stop()
	}
	cs.leaseAt = at
	var t *time.Timer
	t = time.AfterFunc(time.Until(at), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if cs.lease != t {
			return // replaced by a sooner end, or stopped
		}
		cs.lease = nil
		for _, w := range cs.waiters {
			if offer(w.wake) {
				return
			}
		}
	})
	cs.lease = t
}

// dispatch wakes the longest-waiting waiter of a channel; Redisson's unlock
// message hands the lock to one contender at a time rather than to a herd.
// In targeted mode a message wakes the waiter it names; on a semaphore's
// channel, as many waiters as it announces permits (wakeCountedLocked).
func (s *subscriptions) dispatch(cs *channelSub, m rueidis.PubSubMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case cs.targeted:
		s.wakeNamedLocked(cs, m.Message)
	case cs.mode == wakeCounted:
		s.wakeCountedLocked(cs, m.Message)
	default:
		s.wakeLocked(cs)
	}
}

// wakeCountedLocked wakes as many waiters without a signal pending, longest
// waiting first, as msg says permits are free: a release wakes about as many
// local waiters as it can satisfy, not every one of them (each would call
// Redis again only to be refused). A waiter it woke that is refused with
// permits left passes the wake on (passAfter), and one that leaves holding
// it hands it over (leave). A number below 1 wakes nobody: no waiter can
// take a permit then, and whatever frees one publishes again. A message
// that is not a number, which no known client sends, wakes every waiter
// (s.mu held).
func (s *subscriptions) wakeCountedLocked(cs *channelSub, msg string) {
	n, err := strconv.ParseInt(msg, 10, 64)
	for _, w := range cs.waiters {
		if err != nil {
			signal(w.wake)
			continue
		}
		if n <= 0 {
			return
		}
		if offer(w.wake) {
			n--
		}
	}
}

// passAfter wakes the first waiter after w on w's channel that has no signal
// pending: w was woken by a release and refused with permits still free
// (it wants more than are left), which a waiter behind it may want fewer of.
// Only later waiters: an earlier one without a signal pending was woken
// before w by the same message, or attempted since it was sent, and passes
// a wake on itself; so a wake moves down the line once, and cannot circle
// between waiters that all want more than is free.
func (s *subscriptions) passAfter(w *waiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	after := false
	for _, x := range w.sub.waiters {
		if x == w {
			after = true
		} else if after && offer(x.wake) {
			return
		}
	}
}

// wakeNamedLocked handles "<score>:<id>", a release handing the lock to the
// waiter id (s.mu held).
func (s *subscriptions) wakeNamedLocked(cs *channelSub, msg string) {
	s.handedOffLocked(cs.name, time.Now())
	i := strings.IndexByte(msg, ':')
	if i < 0 {
		return
	}
	score, err := strconv.ParseInt(msg[:i], 10, 64)
	if err != nil {
		return
	}
	id := msg[i+1:]
	// Every waiter of the id: goroutines of one owner (WithOwner) share its
	// place, and whichever of them is granted the lock, the others re-enter
	// it; were only one woken, one that gives up would take the wake along.
	for _, w := range cs.waiters {
		if w.id == id {
			// Stored even when a signal is already pending, so the attempt
			// it causes takes the waiter's place back if it loses.
			w.since.Store(score)
			signal(w.wake)
		}
	}
	// Not waiting here (any more): a waiter that gave up passes the wake on
	// itself (MutexWaitCancel); one that died costs the others their
	// fallback timer.
}

// wakeLocked wakes the longest-waiting waiter without a pending signal, or
// every waiter in wakeAll mode (s.mu held).
func (s *subscriptions) wakeLocked(cs *channelSub) {
	for _, w := range cs.waiters {
		if cs.mode == wakeAll {
			signal(w.wake)
		} else if offer(w.wake) {
			return
		}
	}
}

// passOn wakes the longest-waiting waiter on cs that has no signal pending:
// a waiter leaves with a wake-up it shared and did not use (s.mu not held).
func (s *subscriptions) passOn(cs *channelSub) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wakeLocked(cs)
}

// leave removes a waiter; the last one ends the subscription in the
// background (a targeted one after lingering). A wake-up the waiter received
// but did not use is handed to the next waiter, unless it named this waiter
// (MutexWaitCancel passes that one on, on the server).
func (s *subscriptions) leave(w *waiter) {
	s.mu.Lock()
	cs := w.sub
	for i, x := range cs.waiters {
		if x == w {
			cs.waiters = append(cs.waiters[:i], cs.waiters[i+1:]...)
			break
		}
	}
	if len(w.wake) > 0 && !cs.targeted && !w.shared {
		for _, x := range cs.waiters {
			if offer(x.wake) {
				break
			}
		}
	}
	cs.refs--
	last := cs.refs == 0 && !cs.closing
	if last && cs.targeted && !s.stopped {
		select {
		case <-cs.done:
		default:
			cs.idle = time.AfterFunc(subscriptionLinger, func() { s.idleOut(cs) })
			s.mu.Unlock()
			return
		}
	}
	if last {
		cs.closing = true
	}
	// Unsubscribing takes a round trip (more when the connection is being
	// re-established): a waiter that already has its lock does not wait
	// for it. Counted under s.mu before close began (it sets stopped, then
	// waits), so close waits for it; once close began, the cancelled
	// context ends the receive loop anyway. A loop no longer registered
	// has ended.
	unsub := last && !s.stopped && s.chans[cs.name] == cs
	if unsub {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if !unsub {
		return
	}
	if s.testHookUnsubscribe != nil {
		s.testHookUnsubscribe(cs.name)
	}
	go func() {
		defer s.wg.Done()
		s.unsubscribe(cs)
	}()
}

// idleOut ends a lingering subscription that no waiter joined again.
func (s *subscriptions) idleOut(cs *channelSub) {
	s.mu.Lock()
	if cs.refs > 0 || cs.closing || s.stopped || s.chans[cs.name] != cs {
		s.mu.Unlock()
		return
	}
	cs.idle = nil
	cs.closing = true
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.unsubscribe(cs)
	}()
}

// unsubscribe ends a receive loop: its context ends it, and the loop
// unsubscribes on the connection the subscription is on (unsubscribeOnServer).
// The next join on the same channel starts a new loop only after this one
// ended, so a late unsubscribe can never cancel a newer subscription.
func (s *subscriptions) unsubscribe(cs *channelSub) {
	select {
	case <-cs.done:
		return
	default:
	}
	// Not before the server confirmed the SUBSCRIBE, within 2 s: the
	// receive loop may not have sent it yet (it unsubscribes after it on
	// the same connection either way).
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-cs.ready:
	case <-cs.done:
		return
	case <-t.C:
	}
	cs.stop()
	<-cs.done
}

func (s *subscriptions) unsubscribeCommand(cs *channelSub) rueidis.Completed {
	if cs.sharded {
		return s.rc.B().Sunsubscribe().Channel(cs.name).Build()
	}
	return s.plainSlot(s.rc.B().Unsubscribe().Channel(cs.name).Build(), cs.name)
}

// plainSlot sends a plain SUBSCRIBE or UNSUBSCRIBE of channel, on a Cluster,
// to the node serving the channel's hash slot, which is its lock's (every
// channel name carries the lock's hash tag): rueidis sends a command
// without a slot to a node picked at random, and a waiter whose subscription
// went to a frozen node was never woken, whatever node its lock was on. A
// receive loop sends its UNSUBSCRIBE on the connection its SUBSCRIBE went
// out on (unsubscribeOnServer), not by the slot, which may have moved since.
func (s *subscriptions) plainSlot(cmd rueidis.Completed, channel string) rueidis.Completed {
	if s.rc.Mode() != rueidis.ClientModeCluster {
		return cmd
	}
	return cmd.SetSlot(channel)
}

// unsubscribeOnServer ends on the server a subscription whose receive loop
// its context ended, on on, the connection the subscription was made on
// (nil: none was reached; rc routes it by the channel's slot). It waits for
// a PING answered as rueidis can take an UNSUBSCRIBE's answers (see
// unsubscribable) as long as the Client is open, and a second after Close
// began, and a little (Close waits for it). The loop's channel stays
// closing until then, so a later subscription to it cannot be ended by
// this UNSUBSCRIBE.
func (s *subscriptions) unsubscribeOnServer(cs *channelSub, on rueidis.CommandClient) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(s.ctx, func() {
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-ctx.Done():
		}
	})
	defer stop()
	ping := func() error { return s.rc.Do(ctx, s.plainSlot(s.rc.B().Ping().Build(), cs.name)).Error() }
	if on != nil {
		ping = func() error { return on.Do(ctx, on.B().Ping().Build()).Error() }
	}
	if !unsubscribable(ctx, ping) {
		// Not answered so (BUSY, MASTERDOWN for a second; no answer within
		// a second of Close): the subscription stays on the server until a
		// later loop on the channel unsubscribes, or the connection ends;
		// better than a connection whose replies no longer match its
		// commands.
		return
	}
	// Once Close began, a little for the UNSUBSCRIBE: the server just
	// answered, and it goes out on the connection all the same.
	wait := time.Second
	if s.ctx.Err() != nil {
		wait = 50 * time.Millisecond
	}
	uctx, ucancel := context.WithTimeout(context.Background(), wait)
	defer ucancel()
	if on == nil {
		_ = s.rc.Do(uctx, s.unsubscribeCommand(cs)).Error()
		return
	}
	cmd := on.B().Unsubscribe().Channel(cs.name).Build()
	if cs.sharded {
		cmd = on.B().Sunsubscribe().Channel(cs.name).Build()
	}
	_ = on.Do(uctx, cmd).Error()
}

// unsubscribable sends a PING (ping) on the subscription's connection until
// the server answers it as rueidis can take an UNSUBSCRIBE's answers, and
// reports whether the UNSUBSCRIBE may go. rueidis sends a PING behind an
// UNSUBSCRIBE and takes its answer for the UNSUBSCRIBE's: PONG, LOADING,
// BUSY, or a NOPERM naming 'ping'. A server running someone's script past
// busy-reply-threshold answers the UNSUBSCRIBE itself with BUSY, and the
// PING too: rueidis took the first BUSY for the PING's answer, and the
// second was left over. A replica whose primary is down, with
// replica-serve-stale-data no, answers the PING with MASTERDOWN, which
// rueidis takes for the UNSUBSCRIBE's own error, and it waits for a PING's
// answer still to come. Either way the connection's next reply was taken
// for the wrong command's (each later command got its predecessor's), or,
// with none in flight, panicked the process ("protocol bug, message
// handled out of order"). A script begun between this PING and the
// UNSUBSCRIBE that runs past the threshold still does that: the window is
// a round trip rather than the script's run. A PING not answered by the end
// of ctx is a no: a server silent while a script runs below the threshold
// answers BUSY once it passes, to the PING, to an UNSUBSCRIBE queued behind
// it, and to rueidis's PING after that. Refusals are asked again for a
// second.
func unsubscribable(ctx context.Context, ping func() error) bool {
	var refused time.Time // the first answer that forbade the UNSUBSCRIBE
	for {
		err := ping()
		re, isReply := rueidis.IsRedisErr(err)
		switch {
		case isReply && !re.IsLoading() && !strings.Contains(re.Error(), "'ping'"):
			// BUSY, MASTERDOWN: ask again
			if refused.IsZero() {
				refused = time.Now()
			} else if time.Since(refused) >= time.Second {
				return false
			}
		case isReply || ctx.Err() == nil:
			// Answered (PONG; LOADING, which the UNSUBSCRIBE is not
			// refused; an ACL user refused PING), or the connection
			// broke, which ends the subscription itself.
			return true
		default:
			return false
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// close ends every subscription; the Client's context is already cancelled.
func (s *subscriptions) close() {
	s.mu.Lock()
	s.stopped = true
	for _, cs := range s.chans {
		cs.stopTimers()
	}
	s.mu.Unlock()
	// Their contexts have ended, so the loops end at once, or within the
	// second a loop's unsubscribe gets once Close began, unless held in
	// rueidis's opening of a connection: against a server that accepts
	// connections but never answers, rueidis bounds the handshake by its
	// dial timeout alone (5 s by default), and a call waiting on that
	// connection does not watch its context. Close does not wait for those
	// past closeUndoMax (and a margin): they end when rueidis returns them,
	// and do nothing more then than leave the closed subscriptions.
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.wg.Wait()
	}()
	t := time.NewTimer(closeUndoMax + 100*time.Millisecond)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

func signal(ch chan struct{}) { offer(ch) }

// offer puts a signal on ch unless one is pending, and reports whether it
// did. Never a blocking send after a look at len(ch): a waiter puts its own
// unused wake back without s.mu (waitOn's deferred hand-over), and a send
// that found the room gone would block with s.mu held while that waiter
// waits for s.mu to leave.
func offer(ch chan struct{}) bool {
	select {
	case ch <- struct{}{}:
		return true
	default:
		return false
	}
}
