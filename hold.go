package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// hold is this Client's record of a lock one owner holds: its hold count, its
// fencing token, its renewal and the context that ends with it.
type hold struct {
	name, key, field, channel string
	token                     int64
	lease                     time.Duration // lease the watchdog keeps, 0: explicit lease only

	count   int // local holds; guarded by Client.mu
	renew   *renewal
	expiry  *time.Timer // explicit lease running out; guarded by Client.mu
	done    atomic.Bool
	lostErr error // set by the watchdog before reporting loss

	mu    sync.Mutex
	cause error     // why the hold ended
	ctxs  []heldCtx // every context handed out for this hold
	obs   *holdObs  // nil without an Observer
}

// holdKey identifies a hold: the lock's key and the owner's field.
type holdKey struct{ key, field string }

func holdID(key, field string) holdKey { return holdKey{key, field} }

func (h *hold) released() bool { return h.done.Load() }

// end finishes a hold: cause is context.Canceled for a release and
// ErrLockLost (possibly joined with why) for a loss. Every lock context of the
// hold is cancelled before end returns.
func (h *hold) end(cause error) {
	if !h.done.CompareAndSwap(false, true) {
		return
	}
	h.mu.Lock()
	h.cause = cause
	ctxs := h.ctxs
	h.ctxs = nil
	obs := h.obs
	h.mu.Unlock()
	for _, c := range ctxs {
		c.cancel(cause)
	}
	if obs != nil {
		obs.ended(cause)
	}
}

// heldCtx is a context handed out for a hold; lc is nil for contexts that are
// not a lock's own (RedLock's per-node contexts).
type heldCtx struct {
	lc     *lockCtx
	cancel context.CancelCauseFunc
}

// track ties a lock context to the hold's lifetime.
func (h *hold) track(lc *lockCtx, cancel context.CancelCauseFunc) {
	h.mu.Lock()
	if h.cause != nil {
		h.mu.Unlock()
		cancel(h.cause)
		return
	}
	h.ctxs = append(h.ctxs, heldCtx{lc, cancel})
	h.mu.Unlock()
}

// untrack ends the lock context found in ctx when it belongs to h: the
// context of a re-entrant hold ends with that hold's Unlock, and a hold
// re-entered many times does not pile up contexts.
func (h *hold) untrack(ctx context.Context) {
	lc, _ := ctx.Value(lockCtxKey{}).(*lockCtx)
	if lc == nil || lc.hold != h {
		return
	}
	h.mu.Lock()
	for i, c := range h.ctxs {
		if c.lc == lc {
			h.ctxs = append(h.ctxs[:i], h.ctxs[i+1:]...)
			h.mu.Unlock()
			c.cancel(context.Canceled)
			return
		}
	}
	h.mu.Unlock()
}

// lost is the watchdog's report that h is no longer held.
func (c *Client) lost(h *hold, why error) {
	c.mu.Lock()
	if cur := c.holds[holdID(h.key, h.field)]; cur == h {
		delete(c.holds, holdID(h.key, h.field))
	}
	if h.expiry != nil {
		h.expiry.Stop()
	}
	c.mu.Unlock()
	cause := ErrLockLost
	if why != nil {
		cause = errors.Join(ErrLockLost, why)
	}
	// An explicit lease running out is how such a lock ends when nobody
	// unlocks it; only a loss the holder did not arrange is a warning.
	level, reason := slog.LevelWarn, "gone from Redis or held by another owner"
	if why != nil {
		reason = why.Error()
	}
	if errors.Is(why, errLeaseExpired) {
		level = slog.LevelInfo
	}
	c.log.Log(context.Background(), level, "lock lost", "lock", h.name, "key", h.key, "reason", reason)
	h.end(cause)
}

// grant describes a successful acquisition for grantHold.
type grant struct {
	name, key, channel string
	owner, field       string
	token              int64 // fencing token of a fresh acquisition, 0: none
	fresh              bool  // a new hold, not a re-entry
	lease              time.Duration
	serverLease        time.Duration // the lease the script set; the watchdog keeps it when lease is 0
	every              time.Duration // watchdog interval
	kind               *renewKind    // nil: renewed like a Mutex
	start              time.Time     // when the acquiring call was sent
}

// grantHold records an acquisition in the Client's holds, schedules watchdog
// renewal when there is no explicit lease (or a loss timer when there is one),
// and builds the lock's context.
func (c *Client) grantHold(ctx context.Context, g grant) context.Context {
	id := holdID(g.key, g.field)
	c.mu.Lock()
	h := c.holds[id]
	if h != nil && g.fresh {
		// A fresh acquisition while we still had a record: the old hold had
		// expired on the server without our noticing. Finish it as lost.
		delete(c.holds, id)
		if h.expiry != nil {
			h.expiry.Stop()
		}
		c.mu.Unlock()
		if h.renew != nil {
			c.wd.remove(h.renew)
		}
		h.end(ErrLockLost)
		c.mu.Lock()
		h = nil
	}
	if h == nil {
		h = &hold{name: g.name, key: g.key, field: g.field, channel: g.channel, token: g.token}
		c.holds[id] = h
	}
	h.count++
	switch {
	case g.lease == 0 && h.renew == nil:
		if h.expiry != nil {
			h.expiry.Stop()
			h.expiry = nil
		}
		h.lease = g.serverLease
		h.renew = c.wd.addKind(h, g.every, g.start, g.kind)
	case g.lease > 0 && h.renew == nil:
		// Nothing renews an explicit lease: the hold is lost when it runs
		// out, counted from before the request was sent so the local timer
		// never fires after the server's expiry. Re-entry re-arms it, as the
		// script's PEXPIRE extends the whole lock.
		if h.expiry != nil {
			h.expiry.Stop()
		}
		h.expiry = time.AfterFunc(time.Until(g.start.Add(g.lease)), func() { c.lost(h, errLeaseExpired) })
	}
	c.mu.Unlock()

	cctx, cancel := context.WithCancelCause(ctx)
	lc := &lockCtx{Context: cctx, owner: g.owner, name: g.name, token: h.token, hold: h}
	h.track(lc, cancel)
	return lc
}

// released applies a release script's status to the local hold record.
func (c *Client) released(ctx context.Context, h *hold, name string, status int64) error {
	switch status {
	case 0:
		if h != nil {
			c.drop(h, ErrLockLost)
		}
		return fmt.Errorf("scriptlock: unlock %q: %w", name, ErrNotHeld)
	case 1:
		if h != nil {
			c.mu.Lock()
			h.count--
			c.mu.Unlock()
			h.untrack(ctx)
		}
	default:
		if h != nil {
			c.drop(h, context.Canceled)
		}
	}
	return nil
}

// drop forgets a hold and ends its context with cause.
func (c *Client) drop(h *hold, cause error) {
	c.mu.Lock()
	if c.holds[holdID(h.key, h.field)] == h {
		delete(c.holds, holdID(h.key, h.field))
	}
	if h.expiry != nil {
		h.expiry.Stop()
	}
	c.mu.Unlock()
	h.end(cause)
	if h.renew != nil {
		c.wd.remove(h.renew)
	}
}

var errLeaseExpired = errors.New("lease expired")

// retryRelease runs a release call, retrying transport failures (the call's
// latch key makes a retry whose first attempt did run report that outcome) and
// falling back to plain pub/sub when the server refuses sharded publishing.
func (c *Client) retryRelease(ctx context.Context, call func(publish string) error) error {
	for attempt := 0; ; attempt++ {
		err := call(c.publishCommand())
		if err == nil {
			return nil
		}
		if isUnknownCommand(err) && c.sharded() {
			c.shardedOff.Store(true)
			continue
		}
		if _, redisErr := rueidis.IsRedisErr(err); redisErr || attempt >= 3 || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}
