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

// unlockOwned marks the most recent hold registered under k unlocked and
// returns it (ok false: none).
func (o *ownedHolds[K, H]) unlockOwned(k ownedKey[K]) (h H, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	hs := o.m[k]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].endState().CompareAndSwap(endNone, endUnlocked) {
			return hs[i], true
		}
	}
	return h, false
}
