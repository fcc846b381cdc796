//go:build linux

package chaos_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/chaos"
	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

const (
	workers    = 4
	lease      = 2 * time.Second // watchdog lease of every worker
	renewEvery = 500 * time.Millisecond
	healWithin = 30 * time.Second // every worker acquires again within this after a fault heals
)

// The faults, in the order a round injects them. Killing waiting workers
// runs on Mutex workers only (kindSpec.waiters): it checks that a release
// skips waiters that died in Mutex's waiter set, which the other kinds do
// not have (a FairMutex, strict in its order, drops a dead waiter from its
// queue when the waiter's deadline passes, by design).
const (
	faultPauseHolder = "SIGSTOP holder past its lease"
	faultKillWaiters = "kill -9 + restart waiting workers (Mutex)"
	faultRedisShort  = "SIGSTOP redis-server shorter than the lease"
	faultRedisLong   = "SIGSTOP redis-server longer than the lease"
	faultRedisFull   = "redis-server out of memory (noeviction), twice the lease"
	faultKill        = "kill -9 + restart redis-server (AOF)"
)

var faults = []string{faultPauseHolder, faultKillWaiters, faultRedisShort, faultRedisLong, faultRedisFull, faultKill}

// duration is how long make chaos injects faults (CHAOS_DURATION); unset,
// one round of each fault.
func duration(t *testing.T) time.Duration {
	v := os.Getenv("CHAOS_DURATION")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("CHAOS_DURATION=%q: %v", v, err)
	}
	return d
}

// buildWorker compiles the worker binary once per test binary.
var buildWorker = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "chaos-worker-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "worker")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/scriptlock/scriptlock/internal/chaos/worker").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build worker: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := buildWorker(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// TestChaos runs the fault suite with the store checking tokens, where every
// invariant must hold: on Mutex workers for CHAOS_DURATION, then one round
// each on FairMutex, fenced LeanMutex, RWMutex (writers and readers),
// Semaphore and PermitSemaphore workers, each kind on its own server, the
// kinds in two groups that run side by side. Beside the second group it runs
// the Mutex workers again without the check, where the same faults must
// produce lost updates (proof that they bite).
func TestChaos(t *testing.T) {
	bin, err := buildWorker()
	if err != nil {
		t.Fatal(err)
	}
	d := duration(t)
	var (
		fenced, unfenced *result
		mu               sync.Mutex
		others           = map[string]*result{}
	)
	t.Run("fenced", func(t *testing.T) { fenced = runChaos(t, bin, "mutex", true, d) })
	for i, group := range kindGroups {
		t.Run(strings.Join(group, "-"), func(t *testing.T) {
			for _, kind := range group {
				t.Run(kind, func(t *testing.T) {
					t.Parallel()
					r := runChaos(t, bin, kind, true, 0)
					mu.Lock()
					others[kind] = r
					mu.Unlock()
				})
			}
			if i == len(kindGroups)-1 {
				// Beside the last, smaller group, on its own server: no
				// more runs side by side than in the first group.
				t.Run("unfenced", func(t *testing.T) {
					t.Parallel()
					unfenced = runChaos(t, bin, "mutex", false, 0)
				})
			}
		})
	}
	if fenced == nil || unfenced == nil || len(others) != len(otherKinds) {
		return
	}
	if unfenced.totals.Lost == 0 {
		t.Errorf("without the token check the faults produced no lost update (%+v): they do not bite", unfenced.totals)
	}
	t.Log(summary(fenced, unfenced, others))
}

// kindGroups are the worker kinds run for one round besides Mutex: the
// kinds of a group side by side, each on its own server, the groups one
// after the other (the unchecked Mutex round beside the last).
var kindGroups = [][]string{{"fair", "rw", "sem"}, {"lean", "permit"}}

var otherKinds = slices.Concat(kindGroups...)

// kindSpec is what the checks need to know of a worker kind.
type kindSpec struct {
	// roles the nemesis pauses, one holder each per pause fault: a reader
	// ("read") and anyone else ("").
	roles []string
	// writes: the workers (the writers) commit to the counter.
	writes bool
	// lease: a hold ends with its lease (not so a Semaphore's permits), so
	// a holder paused past it loses it: its Release or Unlock answers
	// ErrNotHeld.
	lease bool
	// ctx: holds have a lock context, which must end for a paused holder.
	ctx bool
	// permits of a semaphore kind (0: a lock).
	permits int
	// idle: the workers' pause between holds (lets RWMutex readers in
	// between writers, who are preferred).
	idle time.Duration
	// waiters: waiting workers register in Mutex's waiter set
	// (scriptlock_lock_waiters:{name}) and are woken by name; the
	// kill-waiters fault applies.
	waiters bool
}

var kinds = map[string]kindSpec{
	"mutex":  {roles: []string{""}, writes: true, lease: true, ctx: true, waiters: true},
	"fair":   {roles: []string{""}, writes: true, lease: true, ctx: true},
	"lean":   {roles: []string{""}, writes: true, lease: true, ctx: true},
	"rw":     {roles: []string{"", "read"}, writes: true, lease: true, ctx: true, idle: 30 * time.Millisecond},
	"sem":    {roles: []string{""}, permits: 2},
	"permit": {roles: []string{""}, lease: true, permits: 2},
}

// role is the nemesis's name for the holder that reported a commit.
func role(ev chaos.Event) string {
	if ev.Detail == "read" {
		return "read"
	}
	return ""
}

type result struct {
	faults     map[string]int
	checks     int // invariant evaluations
	failed     int // of which failed
	totals     chaos.Totals
	holds      int
	valid      int // holds valid throughout, checked for exclusion
	reads      int // RWMutex reads checked
	lockErrors int
	pausedEnd  []time.Duration // paused holder: pause start to its context's end
	full       [][2]time.Time  // when redis-server was out of memory
	heal       map[string]time.Duration
	elapsed    time.Duration
	wakeGaps   []time.Duration // kill-waiters fault: release to the live waiter's grant
	deadLeft   int             // kill-waiters fault: faults after which killed waiters' entries outlived the release
}

func runChaos(t *testing.T, bin, kind string, check bool, d time.Duration) *result {
	spec := kinds[kind]
	node := redistest.Server(t, redistest.WithAOF())
	prefix := redistest.Prefix(t)
	res := &result{faults: map[string]int{}, heal: map[string]time.Duration{}}
	if spec.permits > 0 {
		setPermits(t, node, prefix, kind, spec.permits)
	}
	start := time.Now()

	// The nemesis's hook: when armed for a role, the next worker of that
	// role to report "commit" is stopped for longer than its lease before it
	// gets its answer. A gate holds the next worker to report an event of its
	// kind until the nemesis opens it (the kill-waiters fault).
	n := &nemesis{
		node:     node,
		roles:    spec.roles,
		armed:    map[string]bool{},
		pausedCh: make(chan int, len(spec.roles)),
		procs:    make([]*workerProc, workers),
		clients:  map[string]int{},
	}
	var storeRef atomic.Pointer[chaos.Store] // the hook runs only once the store exists
	hook := func(ev chaos.Event) {
		if n.gated(ev) || ev.Kind != "commit" {
			return
		}
		n.mu.Lock()
		var p *os.Process
		if wp := n.procs[ev.Worker]; wp != nil {
			p = wp.cmd.Process
		}
		fire := n.armed[role(ev)] && p != nil
		if fire {
			delete(n.armed, role(ev))
		}
		n.mu.Unlock()
		if !fire {
			return
		}
		store := storeRef.Load()
		before := store.Totals().Accepted
		stopped := time.Now()
		_ = p.Signal(syscall.SIGSTOP)
		time.Sleep(lease + time.Second)
		// The stale commit must land after another holder's write, or the
		// fault proves nothing: on a loaded machine the next holder may not
		// have written within the second past the lease yet. Keep the worker
		// stopped until someone else wrote (bounded: the heal checks report a
		// stuck run); for the semaphores, which commit nothing, until someone
		// else acquired after the lease ended.
		progressed := func() bool {
			if spec.writes {
				return store.Totals().Accepted != before
			}
			return acquiredSince(store, stopped.Add(lease), ev.Worker)
		}
		for wait := time.Now().Add(healWithin); !progressed() && time.Now().Before(wait); {
			time.Sleep(20 * time.Millisecond)
		}
		_ = p.Signal(syscall.SIGCONT)
		n.pausedCh <- ev.Worker
	}
	store, err := chaos.NewStore(check, hook)
	if err != nil {
		t.Fatal(err)
	}
	storeRef.Store(store)
	defer store.Close()
	n.store = store
	if spec.waiters {
		n.rc = node.Client(t)
		n.keys = layout.For(prefix+"counter", false)
	}

	dir := t.TempDir()
	args := []string{"-redis", node.Addr, "-store", store.Addr, "-prefix", prefix, "-lease", lease.String(),
		"-renew", renewEvery.String(), "-kind", kind, "-idle", spec.idle.String()}
	if spec.waiters {
		args = append(args, "-waiter-timeout", waiterTimeout.String())
	}
	n.start = func(i int) {
		t.Helper()
		// Appended to: a restarted worker logs after the one it replaces.
		logf, err := os.OpenFile(filepath.Join(dir, "worker"+strconv.Itoa(i)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer logf.Close() // the worker has its own copy
		cmd := exec.Command(bin, append([]string{"-id", strconv.Itoa(i)}, args...)...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wp := &workerProc{cmd: cmd, exited: make(chan error, 1)}
		go func() { wp.exited <- cmd.Wait() }()
		n.mu.Lock()
		n.procs[i] = wp
		n.mu.Unlock()
	}
	for i := range workers {
		n.start(i)
	}
	stopped := false
	stopWorkers := func() {
		if stopped {
			return
		}
		stopped = true
		store.Stop()
		n.mu.Lock()
		procs := slices.Clone(n.procs)
		n.mu.Unlock()
		timeout := time.After(60 * time.Second)
		for _, wp := range procs {
			select {
			case err := <-wp.exited:
				if err != nil {
					t.Errorf("worker exited: %v", err)
				}
			case <-timeout:
				for _, wp := range procs {
					_ = wp.cmd.Process.Signal(syscall.SIGCONT)
					_ = wp.cmd.Process.Kill()
				}
				t.Errorf("workers did not stop within 60 s")
				return
			}
		}
	}
	defer stopWorkers()

	// Every worker first acquires once before any fault.
	res.check(t, waitAcquired(store, time.Now().Add(-time.Hour), healWithin), "every worker acquires before any fault")

	for round := 0; round == 0 || time.Since(start) < d; round++ {
		for _, f := range faults {
			if f == faultKillWaiters && !spec.waiters {
				continue
			}
			began := time.Now()
			healed, healing := n.inject(t, f)
			if f == faultRedisFull {
				res.full = append(res.full, [2]time.Time{began, healing})
			}
			res.faults[f]++
			if f == faultKillWaiters {
				k := n.killed
				if k.granted {
					res.wakeGaps = append(res.wakeGaps, k.gap.Round(time.Millisecond))
				}
				if k.left != nil {
					res.deadLeft++
				}
				res.check(t, k.slow, "a release wakes the live Mutex waiter behind killed ones (within %v; a wake lost to a dead waiter costs at least %v)", wakeBound, deadWaiterFallback)
				res.check(t, k.left, "the release takes the killed waiters' entries out of the waiter set")
			}
			err := waitAcquired(store, healed, healWithin)
			res.check(t, err, "every worker acquires after %q heals", f)
			res.heal[f] = max(res.heal[f], time.Since(healed))
		}
	}
	stopWorkers()
	res.elapsed = time.Since(start)
	res.totals = store.Totals()

	// Invariants over the whole run.
	evs := store.Events()
	paused, grantedFull := 0, 0
	// during reports whether at falls in an out-of-memory window, less its
	// first margin (a grant just before it may be reported inside).
	during := func(at time.Time, margin time.Duration) bool {
		for _, w := range res.full {
			if at.After(w[0].Add(margin)) && at.Before(w[1]) {
				return true
			}
		}
		return false
	}
	pausedUnlocks := 0
	for _, ev := range evs {
		switch ev.Kind {
		case "acquired":
			res.holds++
			if during(ev.At, 200*time.Millisecond) {
				grantedFull++
			}
		case "lock_error":
			res.lockErrors++
			broken := strings.HasSuffix(ev.Detail, ": EOF") || strings.Contains(ev.Detail, "connection reset") || strings.Contains(ev.Detail, "broken pipe")
			res.check(t, errIf(broken, "worker %d: %s", ev.Worker, ev.Detail),
				"a waiting acquisition rides out its connection breaking (the attempt is undone and the wait goes on)")
		case "unlock":
			if during(ev.At, 0) {
				res.check(t, errIf(ev.Detail != "ok", "worker %d: Unlock while out of memory: %s", ev.Worker, ev.Detail),
					"an Unlock while redis-server is out of memory releases the lock")
			}
		case "paused_ctx":
			paused++
			ok := strings.HasPrefix(ev.Detail, "ended lostErr=true")
			res.check(t, errIf(!ok, "worker %d: %s", ev.Worker, ev.Detail), "a paused holder's context ends with ErrLockLost once it runs again")
			if i := strings.Index(ev.Detail, "after="); i >= 0 {
				if d, err := time.ParseDuration(strings.Fields(ev.Detail[i+len("after="):])[0]); err == nil {
					res.pausedEnd = append(res.pausedEnd, d)
				}
			}
		case "paused_unlock":
			pausedUnlocks++
			if spec.lease {
				res.check(t, errIf(ev.Detail != "not_held", "worker %d: Unlock returned %s", ev.Worker, ev.Detail),
					"a paused holder's Unlock or Release reports ErrNotHeld (it neither fails silently nor releases the next holder's lock or permit)")
			} else {
				res.check(t, errIf(ev.Detail != "ok", "worker %d: Release returned %s", ev.Worker, ev.Detail),
					"a paused holder's Release of a permit without lease returns it")
			}
		case "read":
			var first, second int64
			var verdict string
			if _, err := fmt.Sscan(ev.Detail, &first, &second, &verdict); err == nil && verdict == "valid" {
				res.reads++
				if first != second {
					res.check(t, fmt.Errorf("worker %d read %d, then %d", ev.Worker, first, second),
						"no write is accepted during a valid read hold")
				}
			}
		}
	}
	pauses := res.faults[faultPauseHolder] * len(spec.roles)
	if spec.ctx {
		res.check(t, errIf(paused != pauses, "%d paused holders reported, %d pauses injected", paused, pauses),
			"every paused holder reports")
	}
	res.check(t, errIf(pausedUnlocks != pauses, "%d paused holders gave back, %d pauses injected", pausedUnlocks, pauses),
		"every paused holder gives back")
	valid, err := exclusion(evs, kind, spec.permits)
	res.valid = valid
	res.check(t, err, "valid holds never overlap beyond what the primitive allows")
	if spec.permits > 0 {
		// Every Release rides out the faults (the workers' release timeout
		// is longer than the longest), so every permit taken was given
		// back, and every acquisition of unknown outcome was undone. A
		// PermitSemaphore's Release may find the permit's lease over when
		// it was held up past it (Redis stopped): the permit is back in the
		// pool then too, and the worker reports "expired".
		for _, ev := range evs {
			if ev.Kind == "unlock" && ev.Detail != "ok" && (kind != "permit" || ev.Detail != "expired") {
				res.check(t, fmt.Errorf("worker %d: %s", ev.Worker, ev.Detail), "every Release returns the permit (a PermitSemaphore's: or finds its lease over, not before it)")
			}
		}
		res.check(t, permitsBack(t, node, prefix, kind, spec.permits), "permits are conserved: all %d free once the workers stopped", spec.permits)
	}
	res.check(t, errIf(grantedFull > 0, "%d locks granted while redis-server was out of memory", grantedFull),
		"no lock is granted while redis-server is out of memory (the fault bites; waiting Lock calls wait it out)")
	if check && spec.writes {
		tot := res.totals
		res.check(t, errIf(tot.Lost != 0, "%d lost updates", tot.Lost), "no lost update")
		res.check(t, errIf(tot.Value != tot.Accepted, "counter %d after %d accepted increments", tot.Value, tot.Accepted), "no increment lost or counted twice")
		res.check(t, errIf(!tot.Increasing, "accepted tokens not strictly increasing"), "accepted tokens strictly increase")
		res.check(t, errIf(tot.Refused < int64(res.faults[faultPauseHolder]), "%d writes refused for %d paused holders", tot.Refused, res.faults[faultPauseHolder]),
			"every paused holder's stale commit is refused")
	}
	counter := ""
	if spec.permits > 0 {
		counter = prefix + "permits"
	}
	res.check(t, keysLeft(t, node, prefix, counter), "no keys left but the fencing counter (a semaphore's: its count and records of calls)")
	t.Logf("kind=%s check=%v: faults %v; %d holds (%d valid, %d reads checked), %d lock errors; store %+v; %d invariant checks, %d failed; longest heal %v; in %v",
		kind, check, res.faults, res.holds, res.valid, res.reads, res.lockErrors, res.totals, res.checks, res.failed, res.heal, res.elapsed.Round(time.Millisecond))
	if spec.waiters {
		t.Logf("kind=%s check=%v: live waiters behind killed waiters granted %v after the release", kind, check, res.wakeGaps)
	}
	return res
}

func (r *result) check(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	r.checks++
	if err != nil {
		r.failed++
		t.Errorf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}

func errIf(cond bool, format string, args ...any) error {
	if cond {
		return fmt.Errorf(format, args...)
	}
	return nil
}

// nemesis injects the faults of one run: it stops, kills and restarts the
// workers (whose processes it started) and the redis-server, and acts on
// workers through the store's hook.
type nemesis struct {
	node  *redistest.Node
	store *chaos.Store
	roles []string // roles of the holders the pause fault stops
	start func(i int)
	// The kill-waiters fault's: a connection of the test's own and the
	// Mutex's keys (the waiter set, the wake channels).
	rc   rueidis.Client
	keys layout.Keys

	mu       sync.Mutex
	armed    map[string]bool // roles whose next commit the hook pauses
	pausedCh chan int        // the workers paused, once resumed
	procs    []*workerProc   // the running process of each worker
	clients  map[string]int  // Client id → worker, from the workers' "client" reports
	gate     *gate
	killed   waitersKilled // the last kill-waiters fault's outcome
}

// workerProc is one process of a worker.
type workerProc struct {
	cmd    *exec.Cmd
	exited chan error // Wait's result
}

// gate holds the next worker (of worker, when not negative) to report an
// event of kind in the store's hook, before the worker gets its answer,
// until the nemesis closes open: the worker cannot go on meanwhile.
type gate struct {
	kind   string
	worker int
	caught chan chaos.Event
	open   chan struct{}
}

// setGate arms a gate (one at a time).
func (n *nemesis) setGate(kind string, worker int) *gate {
	g := &gate{kind: kind, worker: worker, caught: make(chan chaos.Event, 1), open: make(chan struct{})}
	n.mu.Lock()
	n.gate = g
	n.mu.Unlock()
	return g
}

// gated is the hook's part for gates and "client" reports: it notes a
// worker's Client id, or holds the worker a gate is armed for (bounded, so
// the store never hangs on a nemesis that gave up) and reports true.
func (n *nemesis) gated(ev chaos.Event) bool {
	n.mu.Lock()
	if ev.Kind == "client" {
		n.clients[ev.Detail] = ev.Worker
	}
	g := n.gate
	if g == nil || g.kind != ev.Kind || g.worker >= 0 && g.worker != ev.Worker {
		n.mu.Unlock()
		return false
	}
	n.gate = nil
	n.mu.Unlock()
	g.caught <- ev
	select {
	case <-g.open:
	case <-time.After(2 * healWithin):
	}
	return true
}

// kill stops worker i with SIGKILL and waits until its process is gone.
func (n *nemesis) kill(t *testing.T, i int) {
	t.Helper()
	n.mu.Lock()
	wp := n.procs[i]
	n.mu.Unlock()
	_ = wp.cmd.Process.Kill()
	select {
	case <-wp.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("worker %d (pid %d) still running 10 s after SIGKILL", i, wp.cmd.Process.Pid)
	}
	n.mu.Lock()
	maps.DeleteFunc(n.clients, func(_ string, w int) bool { return w == i })
	n.mu.Unlock()
}

// inject runs one fault and returns when it has healed, and when its
// healing began: for an out-of-memory server, the moment before memory is
// given back. The server is out of memory until then for sure; a grant
// right after the server has memory again may be reported before inject
// returns.
func (n *nemesis) inject(t *testing.T, fault string) (healed, healing time.Time) {
	t.Helper()
	switch fault {
	case faultPauseHolder:
		n.mu.Lock()
		for _, r := range n.roles {
			n.armed[r] = true
		}
		n.mu.Unlock()
		for range n.roles {
			select {
			case <-n.pausedCh:
			case <-time.After(healWithin + lease):
				t.Fatalf("no holder (roles %q) reached its commit to be paused within %v", n.roles, healWithin+lease)
			}
		}
	case faultKillWaiters:
		n.killed = n.killWaiters(t)
	case faultRedisShort:
		n.node.Pause()
		time.Sleep(lease / 4)
		n.node.Resume()
	case faultRedisLong:
		n.node.Pause()
		time.Sleep(2 * lease)
		n.node.Resume()
	case faultRedisFull:
		restore := n.node.OutOfMemory(t)
		time.Sleep(2 * lease)
		healing = time.Now()
		restore()
	case faultKill:
		n.node.Kill()
		time.Sleep(200 * time.Millisecond)
		n.node.Restart(t)
	}
	healed = time.Now()
	if healing.IsZero() {
		healing = healed
	}
	return healed, healing
}

// waitAcquired waits until every worker has reported an acquisition after
// since.
func waitAcquired(store *chaos.Store, since time.Time, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		seen := map[int]bool{}
		for _, ev := range store.Events() {
			if ev.Kind == "acquired" && ev.At.After(since) {
				seen[ev.Worker] = true
			}
		}
		if len(seen) == workers {
			return nil
		}
		if time.Now().After(deadline) {
			var missing []string
			for i := range workers {
				if !seen[i] {
					missing = append(missing, strconv.Itoa(i))
				}
			}
			return fmt.Errorf("workers %s did not acquire within %v", strings.Join(missing, ", "), within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keysLeft reports the keys under prefix other than the fencing counter,
// counter (a semaphore's count, when not empty), the semaphores' records of
// calls (which live for a minute) and the unlock latches of undos (kept a
// minute, docs/guarantees.md), once the other unlock latches (which live for
// the release timeout) are gone. A latch without an expiry is reported.
func keysLeft(t *testing.T, node *redistest.Node, prefix, counter string) error {
	deadline := time.Now().Add(lease + 5*time.Second)
	for {
		keys, err := node.Do(t, "KEYS", "*"+prefix+"*").AsStrSlice()
		if err != nil {
			return err
		}
		var left []string
		for _, k := range keys {
			if strings.HasPrefix(k, "redisson_lock_token:") || strings.HasPrefix(k, "redisson_sc_latch:") || k == counter {
				continue
			}
			if strings.HasPrefix(k, "redisson_unlock_latch:") && time.Now().After(deadline) {
				if ms, err := node.Do(t, "PTTL", k).AsInt64(); err == nil && (ms == -2 || ms > 0 && ms <= time.Minute.Milliseconds()) {
					continue
				}
			}
			left = append(left, k)
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			sort.Strings(left)
			return fmt.Errorf("keys left: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func summary(fenced, unfenced *result, others map[string]*result) string {
	var b strings.Builder
	b.WriteString("\nchaos summary\n")
	total := 0
	for _, f := range faults {
		fmt.Fprintf(&b, "  %-48s %4d injected, longest time to every worker acquiring again %v\n", f, fenced.faults[f], fenced.heal[f].Round(time.Millisecond))
		total += fenced.faults[f]
	}
	fmt.Fprintf(&b, "  faults injected (token check on): %d in %v\n", total, fenced.elapsed.Round(time.Second))
	fmt.Fprintf(&b, "  invariant checks: %d, failed %d (reported above)\n", fenced.checks, fenced.failed)
	fmt.Fprintf(&b, "  holds %d, lock errors %d; writes accepted %d, refused by the token check %d, lost updates %d\n",
		fenced.holds, fenced.lockErrors, fenced.totals.Accepted, fenced.totals.Refused, fenced.totals.Lost)
	fmt.Fprintf(&b, "  paused holders' contexts ended %v after the pause began (pause %v, lease %v)\n", fenced.pausedEnd, lease+time.Second, lease)
	fmt.Fprintf(&b, "  holds valid throughout, checked for exclusion: %d\n", fenced.valid)
	fmt.Fprintf(&b, "  live waiters behind killed waiters granted %v after the release (bound %v, a lost wake costs at least %v); faults leaving killed waiters' entries: %d\n",
		fenced.wakeGaps, wakeBound, deadWaiterFallback, fenced.deadLeft)
	for _, kind := range otherKinds {
		r := others[kind]
		fmt.Fprintf(&b, "  %s workers, %d faults: holds %d (%d checked for exclusion", kind, sumFaults(r), r.holds, r.valid)
		if r.reads > 0 {
			fmt.Fprintf(&b, ", %d reads", r.reads)
		}
		b.WriteString(")")
		if kinds[kind].writes {
			fmt.Fprintf(&b, ", writes accepted %d, refused %d, lost updates %d", r.totals.Accepted, r.totals.Refused, r.totals.Lost)
		}
		fmt.Fprintf(&b, "; %d checks, %d failed; longest heal %v in %v\n", r.checks, r.failed, maxHeal(r).Round(time.Millisecond), r.elapsed.Round(time.Second))
	}
	fmt.Fprintf(&b, "  token check off, %d faults: writes accepted %d, lost updates %d (counter %d)\n",
		sumFaults(unfenced), unfenced.totals.Accepted, unfenced.totals.Lost, unfenced.totals.Value)
	return b.String()
}

func sumFaults(r *result) int {
	n := 0
	for _, v := range r.faults {
		n += v
	}
	return n
}

func maxHeal(r *result) time.Duration {
	var m time.Duration
	for _, d := range r.heal {
		m = max(m, d)
	}
	return m
}

// semaphoreClient is a Client of the test's own on node, for the semaphore
// kinds' set-up and final count.
func semaphoreClient(t *testing.T, node *redistest.Node, prefix string) *scriptlock.Client {
	t.Helper()
	locks, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(prefix), scriptlock.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = locks.Close() })
	return locks
}

// setPermits gives the semaphore of a semaphore kind its permits.
func setPermits(t *testing.T, node *redistest.Node, prefix, kind string, n int) {
	t.Helper()
	locks := semaphoreClient(t, node, prefix)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var (
		ok  bool
		err error
	)
	switch kind {
	case "sem":
		var s *scriptlock.Semaphore
		if s, err = locks.Semaphore("permits"); err == nil {
			ok, err = s.TrySetPermits(ctx, int64(n))
		}
	case "permit":
		var s *scriptlock.PermitSemaphore
		if s, err = locks.PermitSemaphore("permits"); err == nil {
			ok, err = s.TrySetPermits(ctx, int64(n))
		}
	}
	if err != nil || !ok {
		t.Fatalf("set %d permits: %v, %v", n, ok, err)
	}
}

// permitsBack reports whether all n permits of a semaphore kind are free
// once every worker has exited: each released what it held, and its Close
// undid what an acquisition of unknown outcome may have taken. The free
// count of a PermitSemaphore counts permits whose lease ended (a paused
// holder's), as the next acquisition would take them back.
func permitsBack(t *testing.T, node *redistest.Node, prefix, kind string, n int) error {
	t.Helper()
	locks := semaphoreClient(t, node, prefix)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch kind {
	case "sem":
		s, err := locks.Semaphore("permits")
		if err != nil {
			return err
		}
		v, err := s.AvailablePermits(ctx)
		if err != nil {
			return err
		}
		return errIf(v != int64(n), "%d permits free, want %d", v, n)
	case "permit":
		s, err := locks.PermitSemaphore("permits")
		if err != nil {
			return err
		}
		st, err := s.State(ctx)
		if err != nil {
			return err
		}
		if st.Held != 0 || st.Available != int64(n) {
			return fmt.Errorf("%d permits free and %d held, want %d free", st.Available, st.Held, n)
		}
		// Take back the permits whose lease ended, so their keys go.
		v, err := s.AvailablePermits(ctx)
		if err != nil {
			return err
		}
		return errIf(v != int64(n), "%d permits free after taking back the expired, want %d", v, n)
	}
	return fmt.Errorf("kind %q has no permits", kind)
}

// acquiredSince reports whether a worker other than worker acquired after
// since.
func acquiredSince(store *chaos.Store, since time.Time, worker int) bool {
	for _, ev := range store.Events() {
		if ev.Kind == "acquired" && ev.Worker != worker && ev.At.After(since) {
			return true
		}
	}
	return false
}

// interval is one hold as the store saw it: from its "acquired" report to
// its "leave" report (indices in the store's events: the store orders them
// as they arrive, and a worker reports "acquired" after the grant and
// "leave" before giving the hold back, so the interval lies within the hold).
type interval struct {
	start, end int
	worker     int
	reader     bool
}

// exclusion checks that holds valid throughout (their worker's verdict, see
// holdVerdict in the worker) never overlap beyond what the primitive allows:
// one holder of a lock; for an RWMutex, one writer and no reader, or
// readers only; for a semaphore, as many holders as it has permits. It
// returns how many valid holds it checked. Holds that were not valid
// throughout (a holder paused past its lease, or whose context ended) are
// left out: nothing is promised of them but the fencing token.
func exclusion(evs []chaos.Event, kind string, permits int) (int, error) {
	type open struct {
		interval
		ended bool
	}
	cur := map[int]*open{}
	var valid []interval
	for i, ev := range evs {
		switch ev.Kind {
		case "acquired":
			cur[ev.Worker] = &open{interval: interval{start: i, worker: ev.Worker, reader: ev.Detail == "read"}}
		case "leave":
			if o := cur[ev.Worker]; o != nil {
				o.end, o.ended = i, true
			}
		case "hold":
			if o := cur[ev.Worker]; o != nil && o.ended && ev.Detail == "valid" {
				valid = append(valid, o.interval)
			}
			delete(cur, ev.Worker)
		}
	}
	var (
		active     []interval
		violations int
		first      string
	)
	// valid is ordered by end; sweep by start.
	byStart := slices.Clone(valid)
	slices.SortFunc(byStart, func(a, b interval) int { return a.start - b.start })
	for _, h := range byStart {
		active = slices.DeleteFunc(active, func(a interval) bool { return a.end < h.start })
		active = append(active, h)
		writers := 0
		for _, a := range active {
			if !a.reader {
				writers++
			}
		}
		var bad bool
		switch {
		case permits > 0:
			bad = len(active) > permits
		case kind == "rw":
			bad = writers > 0 && len(active) > 1
		default:
			bad = len(active) > 1
		}
		if bad {
			violations++
			if first == "" {
				var who []string
				for _, a := range active {
					role := "writer"
					if a.reader {
						role = "reader"
					} else if permits > 0 || kind != "rw" {
						role = "holder"
					}
					who = append(who, fmt.Sprintf("%s %d (events %d-%d)", role, a.worker, a.start, a.end))
				}
				first = strings.Join(who, ", ")
			}
		}
	}
	if violations > 0 {
		return len(valid), fmt.Errorf("%d holds overlapped others beyond what %s allows; first: %s", violations, kind, first)
	}
	return len(valid), nil
}
