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
// Client to keep this; an entry lives only while its hold does, but for a
// hold lost while an earlier hold of its owner lives: that one stays as a
// marker (see lost), until its Unlock or until no earlier hold lives.
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

// own registers h under k, unless it has ended already (its loss or
// disown may have run first); one lost already is listed as lost would
// leave it.
func (o *ownedHolds[K, H]) own(k ownedKey[K], h H) {
	o.mu.Lock()
	defer o.mu.Unlock()
	*h.registered() = k
	switch h.endState().Load() {
	case endNone:
	case endLost:
		if !slices.ContainsFunc(o.m[k], isLive[K, H]) {
			return
		}
	default:
		return
	}
	if o.m == nil {
		o.m = map[ownedKey[K]][]H{}
	}
	o.m[k] = append(o.m[k], h)
}

// lost notes that h, registered, was lost. It stays listed, as a marker,
// while a hold of its owner taken before it lives: an Unlock that only
// names the owner stands for the owner's most recent hold, and answers that
// one's loss (ErrNotHeld, releasing nothing) rather than give back the
// earlier hold, which lives on. The marker goes with its own Unlock (by
// its context, or by owner: ownedOrUnlocking), or once no earlier hold of
// the owner lives (prune), so markers never outlast the holds under them.
func (o *ownedHolds[K, H]) lost(h H) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if k := *h.registered(); k != (ownedKey[K]{}) {
		o.prune(k)
	}
}

// disown forgets h, whose hold has ended (unlocked, or lost and answered).
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
		o.m[k] = slices.Delete(hs, i, i+1)
	}
	o.prune(k)
}

// prune drops the ended holds under k that no live hold precedes: a lost
// hold is a marker only above an earlier live one.
func (o *ownedHolds[K, H]) prune(k ownedKey[K]) {
	hs := o.m[k]
	i := slices.IndexFunc(hs, isLive[K, H])
	if i < 0 {
		delete(o.m, k)
		return
	}
	if i > 0 {
		o.m[k] = slices.Delete(hs, 0, i)
	}
}

func isLive[K comparable, H ownedHold[K]](h H) bool { return h.endState().Load() == endNone }

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

// What ownedOrUnlocking found.
const (
	ownedLive      = iota // the owner's most recent hold, live
	ownedUnlocking        // a hold another Unlock is releasing
	ownedLost             // the owner's most recent hold, lost
)

// ownedOrUnlocking returns the most recent hold registered under k that
// has not been unlocked: live (ownedLive), or lost while an earlier one
// lives (ownedLost: the marker is taken off, this Unlock answers for it);
// or else the most recent hold under k being unlocked (ownedUnlocking), if
// any. It marks no live hold: the Unlock that gives the hold back takes
// its unlocking first (as one with the hold's context does), then marks it
// (startUnlock). Marked first, an Unlock with the hold's context that had
// taken its unlocking already found the hold unlocked and nothing yet to
// ask again, and answered ErrNotHeld without waiting for the release.
func (o *ownedHolds[K, H]) ownedOrUnlocking(k ownedKey[K]) (h H, found int, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	hs := o.m[k]
	for i := len(hs) - 1; i >= 0; i-- {
		switch hs[i].endState().Load() {
		case endNone:
			return hs[i], ownedLive, true
		case endLost:
			h = hs[i]
			o.m[k] = slices.Delete(hs, i, i+1)
			o.prune(k)
			return h, ownedLost, true
		}
		// Unlocked, on its way out of the list.
	}
	if us := o.unlocking[k]; len(us) > 0 {
		return us[len(us)-1], ownedUnlocking, true
	}
	return h, 0, false
}
