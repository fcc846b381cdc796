package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestLeaseProbe checks, under a random schedule, the core promise of a lock
// context: while it is live, its owner holds the lock on the server, and no
// other owner does. Workers on two Clients (each behind a proxy that now and
// then holds back replies, or loses them, or holds back the connections open,
// or the one a release takes, until rueidis dials anew and their calls land
// after later ones) lock a Mutex, a FairMutex and both
// sides of an RWMutex and a LeanMutex with the watchdog (a short lease, renewed often), with
// short and long leases, by TryLock, re-enter, Extend and Unlock; some
// workers share an owner (WithOwner), the others draw a fresh one per Lock.
// A checker reads each lock's hash straight from the server: a context live
// (and not being unlocked) before and some time after a read that shows its
// owner without the lock, or another owner holding it exclusively, is a
// fault.
//
// SCRIPTLOCK_PROBE_SEED sets the seed (default: random, logged) and
// SCRIPTLOCK_PROBE_SECONDS the length (default 6, as make test runs it;
// longer runs try more schedules). To look closer at one kind of lock:
// SCRIPTLOCK_PROBE_KINDS (comma-separated, of mutex, fair, write, read and
// lean; default all), SCRIPTLOCK_PROBE_GRACE (a Go duration, default
// 100ms: shorter on an idle machine, where timers are not late) and
// SCRIPTLOCK_PROBE_NOCHAOS (set: no replies held back or lost).
func TestLeaseProbe(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	if v, err := strconv.ParseUint(os.Getenv("SCRIPTLOCK_PROBE_SEED"), 10, 64); err == nil {
		seed = v
	}
	length := 6 * time.Second
	if v, err := strconv.Atoi(os.Getenv("SCRIPTLOCK_PROBE_SECONDS")); err == nil && v > 0 {
		length = time.Duration(v) * time.Second
	}
	t.Logf("seed %d (SCRIPTLOCK_PROBE_SEED), %s", seed, length)
	node := redistest.Server(t)
	direct := rawClient(t, node.Addr)
	prefix := sharedPrefix(t)
	pxs := []*netproxy.Proxy{netproxy.New(t, node.Addr), netproxy.New(t, node.Addr)}
	var cs []*Client
	for _, px := range pxs {
		rc := droppingClient(t, px.Addr)
		c, err := New(rc, prefix, WithWatchdog(300*time.Millisecond, 80*time.Millisecond),
			WithReleaseTimeout(500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	p := &probe{t: t, seed: seed, direct: direct, entries: map[*probeEntry]struct{}{}, grace: probeGrace}
	kinds := []string{"mutex", "fair", "write", "read", "lean"}
	if v := os.Getenv("SCRIPTLOCK_PROBE_KINDS"); v != "" {
		chosen := strings.Split(v, ",")
		for _, k := range chosen {
			if !slices.Contains(kinds, k) {
				t.Fatalf("SCRIPTLOCK_PROBE_KINDS: %q is none of %v", k, kinds)
			}
		}
		kinds = chosen
	}
	if v, err := time.ParseDuration(os.Getenv("SCRIPTLOCK_PROBE_GRACE")); err == nil {
		p.grace = v
	}
	noChaos := os.Getenv("SCRIPTLOCK_PROBE_NOCHAOS") != ""
	type handles struct {
		mx map[string]*Mutex
		fm map[string]*FairMutex
		rw map[string]*RWMutex
		ln *LeanMutex
	}
	hs := make([]handles, len(cs))
	for i, c := range cs {
		hs[i] = handles{
			mx: map[string]*Mutex{"mutex": mustMutex(t, c, "probe-mutex")},
			fm: map[string]*FairMutex{"fair": mustFair(t, c, "probe-fair", WithWaiterTimeout(time.Second))},
			rw: map[string]*RWMutex{"rw": mustRW(t, c, "probe-rw")},
			ln: mustLean(t, c, "probe-lean"),
		}
	}
	keyOf := map[string]string{
		"mutex": hs[0].mx["mutex"].Key(), "fair": hs[0].fm["fair"].Key(),
		"write": hs[0].rw["rw"].Key(), "read": hs[0].rw["rw"].Key(), "lean": hs[0].ln.Key(),
	}
	ops := func(ci int, kind string) probeOps {
		switch kind {
		case "mutex":
			m := hs[ci].mx["mutex"]
			return probeOps{m.Lock, m.LockWithLease, m.TryLock, m.Extend, m.Unlock, cs[ci].id, ""}
		case "fair":
			m := hs[ci].fm["fair"]
			return probeOps{m.Lock, m.LockWithLease, m.TryLock, m.Extend, m.Unlock, cs[ci].id, ""}
		case "write":
			m := hs[ci].rw["rw"]
			return probeOps{m.Lock, m.LockWithLease, m.TryLock, m.Extend, m.Unlock, cs[ci].id, ":write"}
		case "lean":
			m := hs[ci].ln
			return probeOps{m.Lock, m.LockWithLease, m.TryLock, m.Extend, m.Unlock, cs[ci].id, ""}
		default:
			m := hs[ci].rw["rw"]
			return probeOps{m.RLock, m.RLockWithLease, m.TryRLock, m.RExtend, m.RUnlock, cs[ci].id, ""}
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := time.Now().Add(length)
	var wg sync.WaitGroup
	// Chaos: replies held back for a while, now and then lost; or the
	// connections open held back past rueidis's write timeout, so it
	// dials anew and their calls reach the server after later ones.
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 99))
		for time.Now().Before(stop) && !noChaos {
			time.Sleep(time.Duration(100+rng.IntN(500)) * time.Millisecond)
			px := pxs[rng.IntN(len(pxs))]
			if r := rng.IntN(5); r < 2 {
				if r == 0 {
					px.HoldOpen()
				} else {
					// The first release (or read lease call, or any
					// script) from now on, with its connection.
					px.HoldOn([]string{"redisson_unlock_latch", "rwlock_timeout", "EVALSHA"}[rng.IntN(3)])
				}
				time.Sleep(time.Duration(1100+rng.IntN(1000)) * time.Millisecond)
				p.held.Add(1)
			} else {
				px.FreezeReplies()
				time.Sleep(time.Duration(10+rng.IntN(250)) * time.Millisecond)
				if rng.IntN(6) == 0 {
					px.DropAll()
					p.drops.Add(1)
				}
				p.freezes.Add(1)
			}
			px.Thaw()
		}
	}()
	// Workers: per kind, two sharing an owner on each Client and two with
	// fresh owners on each.
	w := 0
	for _, kind := range kinds {
		for ci := range cs {
			for j := range 3 {
				owner := ""
				if j < 2 {
					owner = fmt.Sprintf("shared-%d-%s", ci, kind)
					if ci == 1 && (kind == "read" || kind == "write") {
						// Both sides under one owner: a write hold's
						// owner may read (and a reader is refused
						// the write lock, ErrUpgrade).
						owner = "shared-1-rw"
					}
				}
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				w++
				wg.Add(1)
				go func() {
					defer wg.Done()
					p.work(ctx, rng, stop, kind, keyOf[kind], owner, ops(ci, kind))
				}()
			}
		}
	}
	checkDone := make(chan struct{})
	go func() {
		defer close(checkDone)
		for time.Now().Before(stop.Add(time.Second)) {
			for _, key := range []string{keyOf["mutex"], keyOf["fair"], keyOf["write"]} {
				p.check(ctx, key, false)
			}
			p.check(ctx, keyOf["lean"], true)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	wg.Wait()
	<-checkDone
	for _, c := range cs {
		c.Close()
	}
	t.Logf("acquired %d, re-entered %d, extended %d, lost %d, refused %d, refused as an upgrade or re-entry %d, failed %d, checks %d, freezes %d (drops %d), held %d",
		p.acquired.Load(), p.reentered.Load(), p.extended.Load(), p.lost.Load(), p.refused.Load(), p.upgrades.Load(), p.failed.Load(),
		p.checks.Load(), p.freezes.Load(), p.drops.Load(), p.held.Load())
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, f := range p.faults {
		if i == 10 {
			t.Errorf("... %d faults in all", len(p.faults))
			break
		}
		t.Errorf("seed %d: %s", seed, f)
	}
}

type probeOps struct {
	lock      func(context.Context) (context.Context, error)
	lockLease func(context.Context, time.Duration) (context.Context, error)
	tryLock   func(context.Context, time.Duration) (context.Context, error)
	extend    func(context.Context, context.Context, time.Duration) error
	unlock    func(context.Context) error
	clientID  string
	suffix    string
}

type probeEntry struct {
	ctx       context.Context
	key       string
	field     string // the owner's field in the lock hash
	owner     string // client id and owner: who holds
	write     bool   // holds exclusively (not a read hold)
	how       string
	since     time.Time
	unlocking atomic.Bool
}

type probe struct {
	t      *testing.T
	seed   uint64
	direct rueidis.Client
	grace  time.Duration // probeGrace, or SCRIPTLOCK_PROBE_GRACE

	mu      sync.Mutex
	entries map[*probeEntry]struct{}
	faults  []string
	seen    map[*probeEntry]bool // entries already reported

	acquired, reentered, extended, lost, refused, upgrades, failed, checks, freezes, drops, held atomic.Int64
}

func (p *probe) add(e *probeEntry) {
	p.mu.Lock()
	p.entries[e] = struct{}{}
	p.mu.Unlock()
}

func (p *probe) remove(e *probeEntry) {
	p.mu.Lock()
	delete(p.entries, e)
	p.mu.Unlock()
}

func (p *probe) fault(e *probeEntry, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[*probeEntry]bool{}
	}
	if p.seen[e] {
		return
	}
	p.seen[e] = true
	p.faults = append(p.faults, fmt.Sprintf("%s hold of %s taken by %s %s ago: ", e.key, e.field, e.how,
		time.Since(e.since).Round(time.Millisecond))+fmt.Sprintf(format, args...))
}

// live is the entries of key whose context is live and not being unlocked.
func (p *probe) live(key string) []*probeEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*probeEntry
	for e := range p.entries {
		if e.key == key && e.ctx.Err() == nil && !e.unlocking.Load() {
			out = append(out, e)
		}
	}
	return out
}

func stillLive(e *probeEntry) bool { return e.ctx.Err() == nil && !e.unlocking.Load() }

// probeGrace is how long past the read a context may still run: the timer
// that ends it, and the scheduler, may be late on a loaded machine.
const probeGrace = 100 * time.Millisecond

// check reads key (a lock hash, or a LeanMutex's string when str) and
// compares it with the live contexts.
func (p *probe) check(ctx context.Context, key string, str bool) {
	before := p.live(key)
	if len(before) == 0 {
		return
	}
	var fields map[string]string
	var err error
	if str {
		var v string
		v, err = p.direct.Do(ctx, p.direct.B().Get().Key(key).Build()).ToString()
		fields = map[string]string{v: "1"}
		if rueidis.IsRedisNil(err) {
			fields, err = map[string]string{}, nil
		}
	} else {
		fields, err = p.direct.Do(ctx, p.direct.B().Hgetall().Key(key).Build()).AsStrMap()
	}
	if err != nil {
		return
	}
	p.checks.Add(1)
	read := monoNow()
	var missing []*probeEntry
	// Where each missing hold's loss deadline stood at the read: later (the
	// engine thought the lock held longer than the server did) or earlier
	// (its timer late).
	var lossAt []int64
	for _, e := range before {
		if _, ok := fields[e.field]; !ok {
			missing = append(missing, e)
			var at int64
			if lc, ok := e.ctx.(*lockCtx); ok && lc.hold != nil {
				at = lc.hold.lossAt.Load()
			}
			lossAt = append(lossAt, at)
		}
	}
	// Exclusion: at most one owner live with an exclusive hold, and no
	// other owner's read hold beside it.
	var clash [][2]*probeEntry
	for _, a := range before {
		if !a.write {
			continue
		}
		for _, b := range before {
			if a != b && a.owner != b.owner {
				clash = append(clash, [2]*probeEntry{a, b})
			}
		}
	}
	if len(missing) == 0 && len(clash) == 0 {
		return
	}
	time.Sleep(p.grace)
	for i, e := range missing {
		if stillLive(e) {
			p.fault(e, "context live %s after a read of the lock without its field: %v%s", p.grace, fields, lossNote(lossAt[i], read))
		}
	}
	for _, c := range clash {
		if stillLive(c[0]) && stillLive(c[1]) {
			p.fault(c[0], "context live beside %s's (%s), %s apart", c[1].field, c[1].how, p.grace)
		}
	}
}

func (p *probe) work(ctx context.Context, rng *rand.Rand, stop time.Time, kind, key, owner string, o probeOps) {
	leases := func() time.Duration {
		if rng.IntN(4) == 0 {
			return 2 * time.Second
		}
		return time.Duration(100+rng.IntN(200)) * time.Millisecond
	}
	// acquire bounds the wait by a second without bounding the lock
	// context, which derives from the context passed in: a timer cancels
	// that context unless the call has returned.
	acquire := func(base context.Context) (context.Context, string, error) {
		cctx, cancel := context.WithCancel(base)
		tm := time.AfterFunc(time.Second, cancel)
		defer tm.Stop()
		var lc context.Context
		var how string
		var err error
		switch rng.IntN(4) {
		case 0:
			lc, err = o.lock(cctx)
			how = "Lock"
		case 1:
			l := leases()
			lc, err = o.lockLease(cctx, l)
			how = "LockWithLease " + l.String()
		default:
			wait := time.Duration(rng.IntN(200)) * time.Millisecond
			lc, err = o.tryLock(cctx, wait)
			how = "TryLock " + wait.String()
		}
		return lc, how, err
	}
	hold := func(e *probeEntry) {
		p.add(e)
		d := time.Duration(rng.IntN(600)) * time.Millisecond
		if rng.IntN(3) == 0 {
			l := leases()
			ectx, cancel := context.WithTimeout(ctx, time.Second)
			if err := o.extend(ectx, e.ctx, l); err == nil {
				p.extended.Add(1)
			}
			cancel()
		}
		select {
		case <-e.ctx.Done():
			if isLost(e.ctx) {
				p.lost.Add(1)
			}
		case <-time.After(d):
		}
	}
	unlock := func(e *probeEntry) {
		e.unlocking.Store(true)
		uctx, cancel := context.WithTimeout(e.ctx, time.Second)
		_ = o.unlock(uctx)
		cancel()
		p.remove(e)
	}
	for time.Now().Before(stop) && ctx.Err() == nil {
		base := ctx
		if owner != "" {
			base = WithOwner(ctx, owner)
		}
		lc, how, err := acquire(base)
		if err != nil || lc == nil {
			switch {
			case err == nil || errors.Is(err, ErrNotAcquired) || errors.Is(err, context.Canceled):
				p.refused.Add(1) // contention: the wait ran out
			case errors.Is(err, ErrUpgrade), errors.Is(err, ErrNotReentrant):
				p.upgrades.Add(1) // the shared owner holds the read side, or a LeanMutex
			default:
				p.t.Logf("acquisition failed: %v", err)
				p.failed.Add(1)
			}
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			continue
		}
		p.acquired.Add(1)
		field := o.clientID + ":" + ownerIn(lc) + o.suffix
		e := &probeEntry{ctx: lc, key: key, field: field, owner: o.clientID + ":" + ownerIn(lc),
			write: kind != "read", how: how, since: time.Now()}
		hold(e)
		if e.ctx.Err() == nil && rng.IntN(3) == 0 {
			// Re-enter with the lock context.
			if in, how2, err := acquire(e.ctx); err == nil && in != nil {
				p.reentered.Add(1)
				e2 := &probeEntry{ctx: in, key: key, field: field, owner: e.owner, write: e.write,
					how: how + ", re-entered by " + how2, since: time.Now()}
				hold(e2)
				unlock(e2)
			}
		}
		unlock(e)
		// A pause, so that owners other than those sharing one get a turn.
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
	}
}

// lossNote tells where a hold's loss deadline (monotonic, 0: unknown) stood
// at a read.
func lossNote(at, read int64) string {
	switch {
	case at == 0:
		return ""
	case at > read:
		return fmt.Sprintf(" (its loss deadline %s after the read)", time.Duration(at-read))
	}
	return fmt.Sprintf(" (its loss deadline %s before the read: its timer late)", time.Duration(read-at))
}

func isLost(ctx context.Context) bool {
	err := context.Cause(ctx)
	return err != nil && strings.Contains(err.Error(), "lost")
}
