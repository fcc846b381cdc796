package scriptlock

import (
	"slices"
	"sync"
	"sync/atomic"
)

// ownedHolds lists, per lock (K: a RedLock's redKey, a MultiLock's
// multiKey) and owner, the holds this process has of it, oldest first, so
// that Unlock given a context that only names the owner (WithOwner) gives
// back one of them, as Locker.Unlock promises: the hold is known here, and a
// release of its parts by owner alone would leave its context live, or end
// it as if a part were lost. A lock spanning several Clients has no one
// Client to keep this; an entry lives only while its hold does.
type ownedHolds[K comparable, H ownedHold[K]] struct {
	mu sync.Mutex
	m  map[ownedKey[K]][]H
	// unlocking lists the holds an Unlock is releasing (see
	// startUnlock), oldest first, once or once per such Unlock.
	unlocking map[ownedKey[K]][]H
}

type ownedKey[K comparable] struct {
	lock  K
	owner string
}

// ownedHold is a hold ownedHolds can list: where it was registered, and its
// end state (endNone until Unlock, endUnlocked, or its loss).
type ownedHold[K comparable] interface {
	comparable
	registered() *ownedKey[K]
	endState() *atomic.Int32
}

// own registers h under k, unless it has ended already (its disown may have
// run first).
func (o *ownedHolds[K, H]) own(k ownedKey[K], h H) {
	o.mu.Lock()
	defer o.mu.Unlock()
	*h.registered() = k
	if h.endState().Load() != endNone {
		return
	}
	if o.m == nil {
		o.m = map[ownedKey[K]][]H{}
	}
	o.m[k] = append(o.m[k], h)
}

// disown forgets h, whose hold has ended.
func (o *ownedHolds[K, H]) disown(h H) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.disownLocked(h)
}

func (o *ownedHolds[K, H]) disownLocked(h H) {
	k := *h.registered()
	if k == (ownedKey[K]{}) {
		return // not registered yet: own sees it ended
	}
	hs := o.m[k]
	if i := slices.Index(hs, h); i >= 0 {
		hs = slices.Delete(hs, i, i+1)
	}
	if len(hs) == 0 {
		delete(o.m, k)
	} else {
		o.m[k] = hs
	}
}

// startUnlock marks h unlocked, unless it has ended already (ok false), and
// lists it as being unlocked in place of owned: an Unlock that only names
// the owner made meanwhile finds it there (ownedOrUnlocking), and waits for
// that Unlock's outcome, rather than find no hold while the parts it may
// not release hold their locks. doneUnlock takes it off.
func (o *ownedHolds[K, H]) startUnlock(h H) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !h.endState().CompareAndSwap(endNone, endUnlocked) {
		return false
	}
	o.listUnlocking(h)
	o.disownLocked(h)
	return true
}

// againUnlock lists h, unlocked already, as being unlocked (by an Unlock
// made again) until doneUnlock.
func (o *ownedHolds[K, H]) againUnlock(h H) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.listUnlocking(h)
}

func (o *ownedHolds[K, H]) listUnlocking(h H) {
	k := *h.registered()
	if k == (ownedKey[K]{}) {
		return
	}
	if o.unlocking == nil {
		o.unlocking = map[ownedKey[K]][]H{}
	}
	o.unlocking[k] = append(o.unlocking[k], h)
}

// doneUnlock takes h off the holds being unlocked (once: startUnlock or
// againUnlock listed it once each).
func (o *ownedHolds[K, H]) doneUnlock(h H) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := *h.registered()
	hs := o.unlocking[k]
	if i := slices.Index(hs, h); i >= 0 {
		hs = slices.Delete(hs, i, i+1)
	}
	if len(hs) == 0 {
		delete(o.unlocking, k)
	} else {
		o.unlocking[k] = hs
	}
}

// ownedOrUnlocking returns the most recent hold registered under k that
// has not ended (unlocking false), or else the most recent hold under k
// being unlocked (unlocking true), if any. It marks nothing: the Unlock
// that gives the hold back takes its unlocking first (as one with the
// hold's context does), then marks it (startUnlock). Marked first, an
// Unlock with the hold's context that had taken its unlocking already
// found the hold unlocked and nothing yet to ask again, and answered
// ErrNotHeld without waiting for the release.
func (o *ownedHolds[K, H]) ownedOrUnlocking(k ownedKey[K]) (h H, unlocking, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	hs := o.m[k]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].endState().Load() == endNone {
			return hs[i], false, true
		}
	}
	if us := o.unlocking[k]; len(us) > 0 {
		return us[len(us)-1], true, true
	}
	return h, false, false
}
