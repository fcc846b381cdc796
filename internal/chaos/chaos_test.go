//go:build linux

package chaos_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/chaos"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

const (
	workers    = 4
	lease      = 2 * time.Second // watchdog lease of every worker
	renewEvery = 500 * time.Millisecond
	healWithin = 30 * time.Second // every worker acquires again within this after a fault heals
)

// The faults, in the order a round injects them.
const (
	faultPauseHolder = "SIGSTOP holder past its lease"
	faultRedisShort  = "SIGSTOP redis-server shorter than the lease"
	faultRedisLong   = "SIGSTOP redis-server longer than the lease"
	faultRedisFull   = "redis-server out of memory (noeviction), twice the lease"
	faultKill        = "kill -9 + restart redis-server (AOF)"
)

var faults = []string{faultPauseHolder, faultRedisShort, faultRedisLong, faultRedisFull, faultKill}

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
// each on FairMutex and fenced LeanMutex workers. Then it runs the Mutex
// workers again without the check, where the same faults must produce lost
// updates (proof that they bite).
func TestChaos(t *testing.T) {
	bin, err := buildWorker()
	if err != nil {
		t.Fatal(err)
	}
	d := duration(t)
	var fenced, unfenced *result
	others := map[string]*result{}
	t.Run("fenced", func(t *testing.T) { fenced = runChaos(t, bin, "mutex", true, d) })
	for _, kind := range otherKinds {
		t.Run("fenced-"+kind, func(t *testing.T) { others[kind] = runChaos(t, bin, kind, true, 0) })
	}
	t.Run("unfenced", func(t *testing.T) { unfenced = runChaos(t, bin, "mutex", false, 0) })
	if fenced == nil || unfenced == nil || len(others) != len(otherKinds) {
		return
	}
	if unfenced.totals.Lost == 0 {
		t.Errorf("without the token check the faults produced no lost update (%+v): they do not bite", unfenced.totals)
	}
	t.Log(summary(fenced, unfenced, others))
}

// otherKinds are the worker locks run for one round besides Mutex.
var otherKinds = []string{"fair", "lean"}

type result struct {
	faults     map[string]int
	checks     int // invariant evaluations
	totals     chaos.Totals
	holds      int
	lockErrors int
	pausedEnd  []time.Duration // paused holder: pause start to its context's end
	full       [][2]time.Time  // when redis-server was out of memory
	heal       map[string]time.Duration
	elapsed    time.Duration
}

func runChaos(t *testing.T, bin, kind string, check bool, d time.Duration) *result {
	node := redistest.Server(t, redistest.WithAOF())
	prefix := redistest.Prefix(t)
	res := &result{faults: map[string]int{}, heal: map[string]time.Duration{}}
	start := time.Now()

	// The nemesis's hook: when armed, the next worker to report "commit" is
	// stopped for longer than its lease before it gets its answer.
	var (
		mu       sync.Mutex
		armed    bool
		pausedCh = make(chan int, 1)
		procs    = map[int]*os.Process{}
	)
	var storeRef atomic.Pointer[chaos.Store] // the hook runs only once the store exists
	hook := func(ev chaos.Event) {
		if ev.Kind != "commit" {
			return
		}
		mu.Lock()
		p := procs[ev.Worker]
		fire := armed && p != nil
		if fire {
			armed = false
		}
		mu.Unlock()
		if !fire {
			return
		}
		before := storeRef.Load().Totals().Accepted
		_ = p.Signal(syscall.SIGSTOP)
		time.Sleep(lease + time.Second)
		// The stale commit must land after another holder's write, or the
		// fault proves nothing: on a loaded machine the next holder may not
		// have written within the second past the lease yet. Keep the worker
		// stopped until someone else wrote (bounded: the heal checks report a
		// stuck run).
		for wait := time.Now().Add(healWithin); storeRef.Load().Totals().Accepted == before && time.Now().Before(wait); {
			time.Sleep(20 * time.Millisecond)
		}
		_ = p.Signal(syscall.SIGCONT)
		pausedCh <- ev.Worker
	}
	store, err := chaos.NewStore(check, hook)
	if err != nil {
		t.Fatal(err)
	}
	storeRef.Store(store)
	defer store.Close()

	dir := t.TempDir()
	var cmds []*exec.Cmd
	exited := make(chan error, workers)
	for i := range workers {
		logf, err := os.Create(filepath.Join(dir, "worker"+strconv.Itoa(i)+".log"))
		if err != nil {
			t.Fatal(err)
		}
		defer logf.Close()
		cmd := exec.Command(bin, "-id", strconv.Itoa(i), "-redis", node.Addr, "-store", store.Addr,
			"-prefix", prefix, "-lease", lease.String(), "-renew", renewEvery.String(), "-kind", kind)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		procs[i] = cmd.Process
		mu.Unlock()
		cmds = append(cmds, cmd)
		go func() { exited <- cmd.Wait() }()
	}
	stopped := false
	stopWorkers := func() {
		if stopped {
			return
		}
		stopped = true
		store.Stop()
		timeout := time.After(60 * time.Second)
		for range cmds {
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("worker exited: %v", err)
				}
			case <-timeout:
				for _, c := range cmds {
					_ = c.Process.Signal(syscall.SIGCONT)
					_ = c.Process.Kill()
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
			began := time.Now()
			healed, healing := inject(t, f, node, &mu, &armed, pausedCh)
			if f == faultRedisFull {
				res.full = append(res.full, [2]time.Time{began, healing})
			}
			res.faults[f]++
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
	for _, ev := range evs {
		switch ev.Kind {
		case "acquired":
			res.holds++
			if during(ev.At, 200*time.Millisecond) {
				grantedFull++
			}
		case "lock_error":
			res.lockErrors++
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
			res.check(t, errIf(ev.Detail != "not_held", "worker %d: Unlock returned %s", ev.Worker, ev.Detail),
				"a paused holder's Unlock reports ErrNotHeld (it neither fails silently nor releases the next holder's lock)")
		}
	}
	res.check(t, errIf(paused != res.faults[faultPauseHolder], "%d paused holders reported, %d pauses injected", paused, res.faults[faultPauseHolder]),
		"every paused holder reports")
	res.check(t, errIf(grantedFull > 0, "%d locks granted while redis-server was out of memory", grantedFull),
		"no lock is granted while redis-server is out of memory (the fault bites; waiting Lock calls wait it out)")
	if check {
		tot := res.totals
		res.check(t, errIf(tot.Lost != 0, "%d lost updates", tot.Lost), "no lost update")
		res.check(t, errIf(tot.Value != tot.Accepted, "counter %d after %d accepted increments", tot.Value, tot.Accepted), "no increment lost or counted twice")
		res.check(t, errIf(!tot.Increasing, "accepted tokens not strictly increasing"), "accepted tokens strictly increase")
		res.check(t, errIf(tot.Refused < int64(res.faults[faultPauseHolder]), "%d writes refused for %d paused holders", tot.Refused, res.faults[faultPauseHolder]),
			"every paused holder's stale commit is refused")
	}
	res.check(t, keysLeft(t, node, prefix), "no keys left but the fencing counter")
	t.Logf("kind=%s check=%v: faults %v; %d holds, %d lock errors; store %+v; %d invariant checks; longest heal %v; in %v",
		kind, check, res.faults, res.holds, res.lockErrors, res.totals, res.checks, res.heal, res.elapsed.Round(time.Millisecond))
	return res
}

func (r *result) check(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	r.checks++
	if err != nil {
		t.Errorf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}

func errIf(cond bool, format string, args ...any) error {
	if cond {
		return fmt.Errorf(format, args...)
	}
	return nil
}

// inject runs one fault and returns when it has healed, and when its
// healing began: for an out-of-memory server, the moment before memory is
// given back. The server is out of memory until then for sure; a grant
// right after the server has memory again may be reported before inject
// returns.
func inject(t *testing.T, fault string, node *redistest.Node, mu *sync.Mutex, armed *bool, pausedCh chan int) (healed, healing time.Time) {
	t.Helper()
	switch fault {
	case faultPauseHolder:
		mu.Lock()
		*armed = true
		mu.Unlock()
		select {
		case <-pausedCh:
		case <-time.After(healWithin + lease):
			t.Fatalf("no holder reached its commit to be paused within %v", healWithin+lease)
		}
	case faultRedisShort:
		node.Pause()
		time.Sleep(lease / 4)
		node.Resume()
	case faultRedisLong:
		node.Pause()
		time.Sleep(2 * lease)
		node.Resume()
	case faultRedisFull:
		restore := node.OutOfMemory(t)
		time.Sleep(2 * lease)
		healing = time.Now()
		restore()
	case faultKill:
		node.Kill()
		time.Sleep(200 * time.Millisecond)
		node.Restart(t)
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
// once the unlock latches (which live for the release timeout) are gone.
func keysLeft(t *testing.T, node *redistest.Node, prefix string) error {
	deadline := time.Now().Add(lease + 5*time.Second)
	for {
		keys, err := node.Do(t, "KEYS", "*"+prefix+"*").AsStrSlice()
		if err != nil {
			return err
		}
		var left []string
		for _, k := range keys {
			if !strings.HasPrefix(k, "redisson_lock_token:") {
				left = append(left, k)
			}
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
	fmt.Fprintf(&b, "  invariant checks: %d, all passed unless reported above\n", fenced.checks)
	fmt.Fprintf(&b, "  holds %d, lock errors %d; writes accepted %d, refused by the token check %d, lost updates %d\n",
		fenced.holds, fenced.lockErrors, fenced.totals.Accepted, fenced.totals.Refused, fenced.totals.Lost)
	fmt.Fprintf(&b, "  paused holders' contexts ended %v after the pause began (pause %v, lease %v)\n", fenced.pausedEnd, lease+time.Second, lease)
	for _, kind := range otherKinds {
		r := others[kind]
		fmt.Fprintf(&b, "  %s workers, %d faults: holds %d, writes accepted %d, refused %d, lost updates %d; longest heal %v\n",
			kind, sumFaults(r), r.holds, r.totals.Accepted, r.totals.Refused, r.totals.Lost, maxHeal(r).Round(time.Millisecond))
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
