package scriptlock

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// subscriptions multiplexes lock-release notifications: one Redis subscription
// per channel on the Client's shared pub/sub connection, reference-counted by
// the waiters that need it, with a dispatcher that hands each message to
// waiters in arrival order.
type subscriptions struct {
	rc      rueidis.Client
	sharded func() bool
	onFail  func() // called when a sharded subscribe is refused by the server
	ctx     context.Context

	mu    sync.Mutex
	chans map[string]*channelSub
	wg    sync.WaitGroup
}

type channelSub struct {
	name    string
	refs    int
	ready   chan struct{} // closed once the server confirmed the subscription
	done    chan struct{} // closed when the receive loop ended
	err     error         // why the subscription failed (set before ready/done close)
	waiters []*waiter     // FIFO
	stop    context.CancelFunc
	sharded bool
	closing bool // the last waiter left; UNSUBSCRIBE under way
	all     bool // a message wakes every waiter, not just the longest waiting
}

// waiter is one goroutine waiting for a lock; wake has room for one signal.
type waiter struct {
	wake chan struct{}
	sub  *channelSub
}

func newSubscriptions(ctx context.Context, rc rueidis.Client, sharded func() bool, onFail func()) *subscriptions {
	return &subscriptions{rc: rc, sharded: sharded, onFail: onFail, ctx: ctx, chans: map[string]*channelSub{}}
}

// joinWith registers a waiter on channel and returns once the server has
// confirmed the subscription, so a message published after it returns is
// never missed. A message wakes the longest-waiting waiter (a lock hand-off),
// or every waiter when all is set (a latch reaching zero, permits released).
func (s *subscriptions) joinWith(ctx context.Context, channel string, all bool) (*waiter, error) {
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
			cs = s.start(channel)
		}
		cs.all = cs.all || all
		cs.refs++
		w := &waiter{wake: make(chan struct{}, 1), sub: cs}
		cs.waiters = append(cs.waiters, w)
		s.mu.Unlock()

		select {
		case <-cs.ready:
			return w, nil
		case <-cs.done:
			err := cs.err
			s.leave(w)
			if err == errShardedRefused {
				continue // start again with a plain subscription
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

// start begins the receive loop for channel. Called with s.mu held.
func (s *subscriptions) start(channel string) *channelSub {
	ctx, cancel := context.WithCancel(s.ctx)
	cs := &channelSub{name: channel, ready: make(chan struct{}), done: make(chan struct{}), stop: cancel, sharded: s.sharded()}
	s.chans[channel] = cs
	var cmd rueidis.Completed
	if cs.sharded {
		cmd = s.rc.B().Ssubscribe().Channel(channel).Build()
	} else {
		cmd = s.rc.B().Subscribe().Channel(channel).Build()
	}
	var once sync.Once
	hookCtx := rueidis.WithOnSubscriptionHook(ctx, func(ps rueidis.PubSubSubscription) {
		if ps.Channel == channel && (ps.Kind == "subscribe" || ps.Kind == "ssubscribe") {
			once.Do(func() { close(cs.ready) })
		}
	})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := s.rc.Receive(hookCtx, cmd, func(m rueidis.PubSubMessage) { s.dispatch(cs) })
		if err != nil && cs.sharded && isUnknownCommand(err) {
			s.onFail()
			err = errShardedRefused
		}
		s.mu.Lock()
		cs.err = err
		if s.chans[channel] == cs {
			delete(s.chans, channel)
		}
		// Whoever is still waiting must retry: the next attempt either
		// acquires, fails loudly, or subscribes again.
		for _, w := range cs.waiters {
			signal(w.wake)
		}
		s.mu.Unlock()
		close(cs.done)
	}()
	return cs
}

func isUnknownCommand(err error) bool {
	if re, ok := rueidis.IsRedisErr(err); ok {
		return strings.Contains(strings.ToLower(re.Error()), "unknown command")
	}
	return false
}

// dispatch wakes the longest-waiting waiter of a channel; Redisson's unlock
// message hands the lock to one contender at a time rather than to a herd.
func (s *subscriptions) dispatch(cs *channelSub) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range cs.waiters {
		if cs.all {
			signal(w.wake)
		} else if len(w.wake) == 0 {
			w.wake <- struct{}{}
			return
		}
	}
}

// leave removes a waiter; the last one ends the subscription in the
// background. A wake-up the
// waiter received but did not use is handed to the next waiter.
func (s *subscriptions) leave(w *waiter) {
	s.mu.Lock()
	cs := w.sub
	for i, x := range cs.waiters {
		if x == w {
			cs.waiters = append(cs.waiters[:i], cs.waiters[i+1:]...)
			break
		}
	}
	if len(w.wake) > 0 {
		for _, x := range cs.waiters {
			if len(x.wake) == 0 {
				x.wake <- struct{}{}
				break
			}
		}
	}
	cs.refs--
	last := cs.refs == 0 && !cs.closing
	if last {
		cs.closing = true
	}
	s.mu.Unlock()
	if !last {
		return
	}
	select {
	case <-cs.done:
		return
	default:
	}
	// Unsubscribing takes a round trip (more when the connection is being
	// re-established): a waiter that already has its lock does not wait
	// for it. The receive loop is still running, so the group is not idle.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.unsubscribe(cs)
	}()
}

// unsubscribe ends a receive loop. UNSUBSCRIBE makes Receive return; the
// next join on the same channel starts a new loop only after this one ended,
// so a late unsubscribe can never cancel a newer subscription.
func (s *subscriptions) unsubscribe(cs *channelSub) {
	select {
	case <-cs.done:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var cmd rueidis.Completed
	if cs.sharded {
		cmd = s.rc.B().Sunsubscribe().Channel(cs.name).Build()
	} else {
		cmd = s.rc.B().Unsubscribe().Channel(cs.name).Build()
	}
	if err := s.rc.Do(ctx, cmd).Error(); err != nil {
		cs.stop()
	}
	select {
	case <-cs.done:
	case <-ctx.Done():
		cs.stop()
		<-cs.done
	}
}

// close ends every subscription; the Client's context is already cancelled.
func (s *subscriptions) close() {
	s.wg.Wait()
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
