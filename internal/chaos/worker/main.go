// Command worker is one process of the chaos suite: it locks a scriptlock
// Mutex (FairMutex, fenced LeanMutex or the write side of an RWMutex with
// -kind), reads the counter from the store, works, reports that it is about
// to commit (the nemesis may pause it right there), commits an increment
// fenced by its token, and unlocks, until the store tells it to stop. It
// reports what it sees to the store: its Client's id when it starts (the
// nemesis finds waiting workers by it), lock errors, holds whose context
// ended, and, for a hold that was paused past its lease, how its context ended and
// what its Unlock returned.
//
// With -kind rw the odd workers are RWMutex readers: they read the counter
// twice under the read lock, the nemesis pausing them in between. With -kind
// sem and permit the workers take a permit of a Semaphore or PermitSemaphore
// (the test sets the permits) and commit nothing.
//
// Every hold is reported as an interval: "acquired" once the lock or permit
// is granted, "leave" before it is given back, then "hold" with whether it
// was valid throughout (see holdVerdict), from which the test checks that
// valid holds never overlap more than the primitive allows.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
)

func main() {
	os.Exit(run())
}

type worker struct {
	id    int
	store string
	hc    *http.Client
}

func run() int {
	var (
		id     = flag.Int("id", 0, "worker number")
		redis  = flag.String("redis", "", "Redis address host:port")
		store  = flag.String("store", "", "store address host:port")
		prefix = flag.String("prefix", "", "key prefix")
		lease  = flag.Duration("lease", 2*time.Second, "watchdog lease")
		every  = flag.Duration("renew", 500*time.Millisecond, "watchdog renewal interval")
		work   = flag.Duration("work", 10*time.Millisecond, "work under the lock before committing")
		kind   = flag.String("kind", "mutex", "the lock: mutex, fair (FairMutex), lean (LeanMutex with fencing), rw (RWMutex: even ids write, odd ids read), sem (Semaphore) or permit (PermitSemaphore)")
		idle   = flag.Duration("idle", 0, "pause between holds")
		waiter = flag.Duration("waiter-timeout", 0, "a Mutex's waiter timeout (WithWaiterTimeout; 0: the default)")
	)
	flag.Parse()
	w := &worker{id: *id, store: *store, hc: &http.Client{Timeout: 30 * time.Second}}
	rc, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:      []string{*redis},
		DisableCache:     true,
		Dialer:           net.Dialer{Timeout: time.Second},
		ConnWriteTimeout: 2 * time.Second,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	defer rc.Close()
	locks, err := scriptlock.New(rc, scriptlock.WithKeyPrefix(*prefix), scriptlock.WithWatchdog(*lease, *every),
		scriptlock.WithReleaseTimeout(2*time.Second), scriptlock.WithFailoverGuard(false, 0),
		scriptlock.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	defer locks.Close()
	var (
		m    scriptlock.Locker
		hold func() // one hold of a worker that commits nothing
	)
	switch *kind {
	case "mutex":
		var opts []scriptlock.LockOption
		if *waiter > 0 {
			opts = append(opts, scriptlock.WithWaiterTimeout(*waiter))
		}
		m, err = locks.Mutex("counter", opts...)
	case "fair":
		m, err = locks.FairMutex("counter")
	case "lean":
		m, err = locks.LeanMutex("counter", scriptlock.WithFencing())
	case "rw":
		var rw *scriptlock.RWMutex
		rw, err = locks.RWMutex("counter")
		m = rw
		if *id%2 == 1 {
			hold = func() { w.onceRead(rw.RLocker(), *lease, *work) }
		}
	case "sem":
		// Release rides out every fault (the longest stops Redis for twice
		// the lease): a Release that fails leaves its outcome unknown.
		var s *scriptlock.Semaphore
		s, err = locks.Semaphore("permits", scriptlock.WithReleaseTimeout(4**lease))
		hold = func() { w.onceSem(s, *lease, *work) }
	case "permit":
		var s *scriptlock.PermitSemaphore
		s, err = locks.PermitSemaphore("permits", scriptlock.WithReleaseTimeout(4**lease))
		hold = func() { w.oncePermit(s, *lease, *work) }
	default:
		err = fmt.Errorf("unknown -kind %q", *kind)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	// The Client's id begins the fields this process registers as a Mutex
	// waiter (<client-id>:<owner>): the nemesis finds waiting workers by it.
	w.report("client", locks.ID())
	for {
		_, stop, err := w.read()
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker: store:", err)
			return 2
		}
		if stop {
			return 0
		}
		if hold != nil {
			hold()
		} else {
			w.once(m, *lease, *work)
		}
		time.Sleep(*idle)
	}
}

// once is one hold. Every Lock call has a fresh owner, as a request would.
func (w *worker) once(m scriptlock.Locker, lease, work time.Duration) {
	ctx, cancel := context.WithTimeout(scriptlock.WithOwner(context.Background(), randomID()), 30*time.Second)
	defer cancel()
	lctx, err := m.Lock(ctx)
	if err != nil {
		w.report("lock_error", err.Error())
		time.Sleep(50 * time.Millisecond)
		return
	}
	got := time.Now()
	token, _ := scriptlock.Fence(lctx)
	w.report("acquired", strconv.FormatInt(token, 10))
	base, _, err := w.read()
	if err != nil {
		w.report("store_error", err.Error())
	}
	time.Sleep(work)
	if lctx.Err() != nil {
		w.report("lost_before_commit", context.Cause(lctx).Error())
		w.leave(holdVerdict(lctx, got, lease, false))
		w.unlock(m, lctx, false)
		return
	}
	// The nemesis may stop this process while it waits for this answer: a
	// pause between the last look at the lock and the commit, as a GC pause
	// or a slow network would make it.
	before := time.Now()
	w.report("commit", strconv.FormatInt(token, 10))
	paused := time.Since(before) > lease
	res, err := w.write(token, base)
	if err != nil {
		w.report("store_error", err.Error())
	}
	w.report("wrote", res)
	w.leave(holdVerdict(lctx, got, lease, paused))
	w.finish(m, lctx, before, paused)
}

// onceRead is one read hold of an RWMutex: it reads the counter, works,
// reports that it is about to read again (the nemesis may pause it there)
// and reads again. The store checks that no write landed in between while
// the hold was valid.
func (w *worker) onceRead(m scriptlock.Locker, lease, work time.Duration) {
	ctx, cancel := context.WithTimeout(scriptlock.WithOwner(context.Background(), randomID()), 30*time.Second)
	defer cancel()
	lctx, err := m.Lock(ctx)
	if err != nil {
		w.report("lock_error", err.Error())
		time.Sleep(50 * time.Millisecond)
		return
	}
	got := time.Now()
	w.report("acquired", "read")
	first, _, err1 := w.read()
	time.Sleep(work)
	before := time.Now()
	w.report("commit", "read")
	paused := time.Since(before) > lease
	second, _, err2 := w.read()
	verdict := holdVerdict(lctx, got, lease, paused)
	w.leave(verdict)
	if err := errors.Join(err1, err2); err != nil {
		w.report("store_error", err.Error())
	} else {
		w.report("read", fmt.Sprintf("%d %d %s", first, second, verdict))
	}
	w.finish(m, lctx, before, paused)
}

// holdVerdict tells whether a lock hold granted at got was valid throughout
// until now: "valid" when its context is live and the hold is younger than
// half its lease (so no stall of this process let the lease run out before
// the context could end), else why not ("paused", "lost", "stalled").
func holdVerdict(lctx context.Context, got time.Time, lease time.Duration, paused bool) string {
	switch {
	case paused:
		return "paused"
	case lctx.Err() != nil:
		return "lost"
	case time.Since(got) >= lease/2:
		return "stalled"
	}
	return "valid"
}

// leave reports the end of a hold, before it is given back, and then whether
// it was valid throughout.
func (w *worker) leave(verdict string) {
	w.report("leave", "")
	w.report("hold", verdict)
}

// finish unlocks; a hold paused past its lease must see its context end with
// ErrLockLost now that the process runs again, and Unlock must say the lock
// was not held.
func (w *worker) finish(m scriptlock.Locker, lctx context.Context, before time.Time, paused bool) {
	if !paused {
		w.unlock(m, lctx, false)
		return
	}
	select {
	case <-lctx.Done():
		cause := context.Cause(lctx)
		w.report("paused_ctx", fmt.Sprintf("ended lostErr=%v after=%s cause=%v", errors.Is(cause, scriptlock.ErrLockLost), time.Since(before).Round(time.Millisecond), cause))
	case <-time.After(time.Second):
		w.report("paused_ctx", "alive 1s after resuming")
	}
	w.unlock(m, lctx, true)
}

// onceSem is one hold of a Semaphore permit. Its permits have no lease: a
// paused holder still holds its permit, and its Release returns it.
func (w *worker) onceSem(s *scriptlock.Semaphore, lease, work time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Acquire(ctx, 1); err != nil {
		w.report("lock_error", err.Error())
		time.Sleep(50 * time.Millisecond)
		return
	}
	w.report("acquired", "permit")
	time.Sleep(work)
	before := time.Now()
	w.report("commit", "permit")
	paused := time.Since(before) > lease
	w.leave("valid")
	w.released(paused, s.Release(context.Background(), 1))
}

// oncePermit is one hold of a PermitSemaphore permit under a lease of lease.
// The hold is valid while younger than half the lease counted from before
// Acquire was called: the server started the lease later than that.
func (w *worker) oncePermit(s *scriptlock.PermitSemaphore, lease, work time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	id, err := s.Acquire(ctx, lease)
	if err != nil {
		w.report("lock_error", err.Error())
		time.Sleep(50 * time.Millisecond)
		return
	}
	w.report("acquired", "permit")
	time.Sleep(work)
	before := time.Now()
	w.report("commit", "permit")
	paused := time.Since(before) > lease
	verdict := "valid"
	switch {
	case paused:
		verdict = "paused"
	case time.Since(start) >= lease/2:
		verdict = "stalled"
	}
	w.leave(verdict)
	err = s.Release(context.Background(), id)
	if !paused && errors.Is(err, scriptlock.ErrNotHeld) && time.Since(start) >= lease {
		// The lease ran out before the Release got through (Redis was
		// stopped meanwhile): the permit is back in the pool.
		w.report("unlock", "expired")
		return
	}
	w.released(paused, err)
}

// released reports what an Unlock or a permit's Release returned.
func (w *worker) released(paused bool, err error) {
	kind := "unlock"
	if paused {
		kind = "paused_unlock"
	}
	switch {
	case err == nil:
		w.report(kind, "ok")
	case errors.Is(err, scriptlock.ErrNotHeld):
		w.report(kind, "not_held")
	default:
		w.report(kind, "error: "+err.Error())
	}
}

func (w *worker) unlock(m scriptlock.Locker, lctx context.Context, paused bool) {
	w.released(paused, m.Unlock(lctx))
}

func (w *worker) read() (int64, bool, error) {
	resp, err := w.hc.Get("http://" + w.store + "/read")
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false, fmt.Errorf("store answered %q", b)
	}
	v, err := strconv.ParseInt(f[0], 10, 64)
	return v, f[1] == "true", err
}

func (w *worker) write(token, base int64) (string, error) {
	return w.post("/write", url.Values{"token": {strconv.FormatInt(token, 10)}, "base": {strconv.FormatInt(base, 10)}, "worker": {strconv.Itoa(w.id)}})
}

func (w *worker) report(kind, detail string) {
	_, _ = w.post("/event", url.Values{"worker": {strconv.Itoa(w.id)}, "kind": {kind}, "detail": {detail}})
}

func (w *worker) post(path string, form url.Values) (string, error) {
	resp, err := w.hc.PostForm("http://"+w.store+path, form)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
