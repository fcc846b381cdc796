// Command worker is one process of the chaos suite: it locks a scriptlock
// Mutex (FairMutex or fenced LeanMutex with -kind), reads the counter from the store, works, reports that it is about to
// commit (the nemesis may pause it right there), commits an increment fenced
// by its token, and unlocks, until the store tells it to stop. It reports
// what it sees to the store: lock errors, holds whose context ended, and, for
// a hold that was paused past its lease, how its context ended and what its
// Unlock returned.
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
		kind   = flag.String("kind", "mutex", "the lock: mutex, fair (FairMutex) or lean (LeanMutex with fencing)")
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
	var m scriptlock.Locker
	switch *kind {
	case "mutex":
		m, err = locks.Mutex("counter")
	case "fair":
		m, err = locks.FairMutex("counter")
	case "lean":
		m, err = locks.LeanMutex("counter", scriptlock.WithFencing())
	default:
		err = fmt.Errorf("unknown -kind %q", *kind)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	for {
		_, stop, err := w.read()
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker: store:", err)
			return 2
		}
		if stop {
			return 0
		}
		w.once(m, *lease, *work)
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
	token, _ := scriptlock.Fence(lctx)
	w.report("acquired", strconv.FormatInt(token, 10))
	base, _, err := w.read()
	if err != nil {
		w.report("store_error", err.Error())
	}
	time.Sleep(work)
	if lctx.Err() != nil {
		w.report("lost_before_commit", context.Cause(lctx).Error())
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
	if !paused {
		w.unlock(m, lctx, false)
		return
	}
	// Paused past the lease: the context must end with ErrLockLost now that
	// the process runs again, and Unlock must say the lock was not held.
	select {
	case <-lctx.Done():
		cause := context.Cause(lctx)
		w.report("paused_ctx", fmt.Sprintf("ended lostErr=%v after=%s cause=%v", errors.Is(cause, scriptlock.ErrLockLost), time.Since(before).Round(time.Millisecond), cause))
	case <-time.After(time.Second):
		w.report("paused_ctx", "alive 1s after resuming")
	}
	w.unlock(m, lctx, true)
}

func (w *worker) unlock(m scriptlock.Locker, lctx context.Context, paused bool) {
	err := m.Unlock(lctx)
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
