package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/layout"
)

// settleDelay is how long after a release message watch reads the lock
// again, to show who took it.
const settleDelay = 200 * time.Millisecond

// maxWaiterChannels bounds the fair waiters' wake channels watch subscribes
// to one by one with sharded pub/sub.
const maxWaiterChannels = 1000

func watchFlags(fs *flag.FlagSet, e *env) {
	fs.DurationVar(&e.interval, "interval", time.Second, "re-read the lock at least this often, 100ms or more (release messages re-read it at once)")
}

// watchEvent is one line of watch's --json output.
type watchEvent struct {
	Time   time.Time `json:"time"`
	Cause  string    `json:"cause"` // "start", "message <channel>", "settle" or "refresh"
	Report *Report   `json:"report"`
}

// watchCmd prints the lock's state, then a line every time its holders,
// waiters, mode, count or permits change, until ctx ends (interrupt).
// Release messages trigger an immediate re-read; the interval catches what
// sends no message (acquisitions, expiry, queueing).
func watchCheck(e *env) error {
	if e.interval < minWatchInterval {
		return failf(exitUsage, "--interval must be at least %s, got %s", minWatchInterval, e.interval)
	}
	return nil
}

// minWatchInterval is the shortest --interval: each read runs a script on
// the server, and release messages re-read at once anyway, so a shorter one
// (1ns) would load the server without following the lock any better.
const minWatchInterval = 100 * time.Millisecond

func watchCmd(ctx context.Context, e *env, args []string) error {
	key := e.keyPrefix + args[0]
	k := layout.For(key, e.rc.Mode() == rueidis.ClientModeCluster)
	publish, err := publishCommand(ctx, e)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	messages := make(chan string, 64)
	// refused carries a subscription the server refused (an ACL without the
	// channels, NOPERM): watch would hear no release, so it ends.
	refused := make(chan error, 4)
	// waiterRefused carries a refusal of the fair waiters' wake channels
	// (their patterns, or with sharded pub/sub each waiter's channel): an
	// ACL may grant the lock's own channels only. Those are an extra:
	// without them a hand-off shows at the next read, so watch goes on.
	waiterRefused := make(chan error, 1)
	// subscribe listens with cmd; a refusal goes to to.
	subscribe := func(name string, to chan<- error, cmd func() rueidis.Completed) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wctx.Err() == nil {
				err := e.rc.Receive(wctx, cmd(), func(m rueidis.PubSubMessage) {
					select {
					case messages <- m.Channel:
					default: // a re-read is pending anyway
					}
				})
				if _, no := rueidis.IsRedisErr(err); no {
					select {
					case to <- fmt.Errorf("%s refused: %w", name, err):
					default: // one refusal is enough
					}
					return
				}
				select { // the subscription broke: resubscribe after a pause
				case <-wctx.Done():
				case <-time.After(time.Second):
				}
			}
		}()
	}
	channels := k.Channels()
	subscribe("SUBSCRIBE", refused, func() rueidis.Completed { return e.rc.B().Subscribe().Channel(channels...).Build() })
	// A FairMutex release goes to the next waiter's client's wake channel,
	// <fair wake>:<client-id> (our protocol), or its own channel, <lock
	// channel>:<field> (Redisson's). Plain pub/sub hears them all through
	// patterns. Sharded pub/sub has no patterns: there the channels of the
	// waiters a read finds queued are subscribed as they are found, so a
	// hand-off to a waiter seen queued is heard; one to a waiter that
	// queued since the last read is seen at the next read.
	// A Mutex's Go wake channels (<lock wake>:<client-id>) are listened to
	// in neither mode: a release counts their listeners to tell a dead
	// waiter from a live one, and would count watch.
	var waiterChannels map[string]bool
	if publish == "spublish" {
		waiterChannels = map[string]bool{}
		subscribe("SSUBSCRIBE", refused, func() rueidis.Completed { return e.rc.B().Ssubscribe().Channel(channels...).Build() })
	} else {
		patterns := []string{layout.GlobEscape(k.FairWake) + ":*", layout.GlobEscape(k.LockChannel) + ":*"}
		subscribe("PSUBSCRIBE", waiterRefused, func() rueidis.Completed { return e.rc.B().Psubscribe().Pattern(patterns...).Build() })
	}
	listenToQueue := func(r *Report) {
		if waiterChannels == nil {
			return
		}
		var fresh []string
		for _, w := range r.Queue {
			ch := k.LockChannel + ":" + w.Field
			if w.Protocol == "scriptlock" {
				ch = k.FairWake + ":" + clientOf(w.Field)
			}
			// Bounded: a long watch of a busy queue sees many clients.
			if !waiterChannels[ch] && len(waiterChannels) < maxWaiterChannels {
				waiterChannels[ch] = true
				fresh = append(fresh, ch)
			}
		}
		if len(fresh) > 0 {
			subscribe("SSUBSCRIBE", waiterRefused, func() rueidis.Completed { return e.rc.B().Ssubscribe().Channel(fresh...).Build() })
		}
	}

	ticker := time.NewTicker(e.interval)
	defer ticker.Stop()
	// A release message comes before the next owner takes the lock (a
	// FairMutex hand-off, waiters woken by it): read again shortly after.
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	last := ""
	cause := "start"
	waitersRefused := false
	for {
		r, interrupted, err := readOrInterrupt(wctx, e, key)
		switch {
		case interrupted || wctx.Err() != nil:
			return nil
		case isNoPerm(err):
			// The ACL refuses the read: no later one will do better.
			return failf(exitFailure, "%w", err)
		case err != nil:
			fmt.Fprintf(e.errOut, "%s %v\n", time.Now().UTC().Format(time.RFC3339Nano), escapedError{err})
		default:
			listenToQueue(r)
			if s := summary(r); s != last {
				last = s
				if e.json {
					b, err := json.Marshal(watchEvent{Time: r.ServerTime, Cause: cause, Report: r})
					if err != nil {
						// Said, not printed as an empty line; the next
						// change is printed again.
						last = ""
						fmt.Fprintf(e.errOut, "%s %v\n", time.Now().UTC().Format(time.RFC3339Nano), err)
					} else {
						fmt.Fprintf(e.out, "%s\n", terminalSafeJSON(b))
					}
				} else {
					fmt.Fprintf(e.out, "%s  %-8s %s\n", r.ServerTime.Format("15:04:05.000"), strings.Fields(cause)[0], s)
				}
			}
		}
		for {
			select {
			case <-wctx.Done():
				return nil
			case err := <-refused:
				hint := ""
				if isNoPerm(err) {
					// Only an ACL refusal is the ACL's to fix: another (a
					// server without SSUBSCRIBE) says what it is itself.
					hint = " (grant the ACL user the lock's channels, &*)"
				}
				return failf(exitFailure, "%w: watch would hear no release message%s", err, hint)
			case err := <-waiterRefused:
				if !waitersRefused {
					waitersRefused = true
					waiterChannels = nil // asking again would be refused again
					hint := ""
					if isNoPerm(err) {
						hint = " (grant &* to hear it at once)"
					}
					fmt.Fprintf(e.errOut, "%s %v: a fair lock's hand-off to a waiter shows at the next read%s\n",
						time.Now().UTC().Format(time.RFC3339Nano), escapedError{err}, hint)
				}
				continue // nothing changed: no read
			case ch := <-messages:
				cause = "message " + ch
				settle.Reset(settleDelay)
			case <-settle.C:
				cause = "settle"
			case <-ticker.C:
				cause = "refresh"
			}
			break
		}
	}
}

// readOrInterrupt is inspect, given up on once ctx ends (interrupted): when
// rueidis dials a new connection to a server that stopped answering (SIGSTOP,
// a hung host behind a live kernel) and its handshake times out, rueidis
// closes that connection waiting up to a second for the server's reply to
// its closing PING, inside the read and deaf to ctx, which an operator
// pressing Ctrl-C should not wait out. The read given up on ends by itself
// within that second; the process exits meanwhile.
func readOrInterrupt(ctx context.Context, e *env, key string) (r *Report, interrupted bool, err error) {
	type read struct {
		r   *Report
		err error
	}
	done := make(chan read, 1)
	go func() {
		r, err := inspect(ctx, e, key)
		done <- read{r, err}
	}()
	select {
	case rd := <-done:
		return rd.r, false, rd.err
	case <-ctx.Done():
		return nil, true, ctx.Err()
	}
}

// isNoPerm reports whether err is the server's ACL refusal, which does not
// pass as a lost connection or a failover does: NOPERM, or, inside a script
// (a command the script calls, a key it builds), Redis's "The user executing
// the script can't ..." (an ERR before Redis 7.2), or from Redis 7.2 "ERR ACL
// failure in script: ...".
func isNoPerm(err error) bool {
	var re *rueidis.RedisError
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "NOPERM") || strings.Contains(msg, "The user executing the script can't") ||
		strings.Contains(msg, "ACL failure in script")
}

// summary is a one-line description of what watch follows: who holds (and
// the last fencing token), who waits, mode, count and permits, but not the
// remaining lease, which changes all the time.
func summary(r *Report) string {
	if !r.Found() {
		if r.Fence != nil {
			// A released lock keeps its fencing counter, as inspect shows.
			return fmt.Sprintf("free (nothing held under %s) fence=%d", shown(r.Key), *r.Fence)
		}
		return "free (nothing under " + shown(r.Key) + ")"
	}
	var b strings.Builder
	b.WriteString(r.Kind)
	if r.Mode != "" {
		b.WriteString(" mode=" + shown(r.Mode)) // any bytes in another program's hash
	}
	if r.Kind == kindEmptyRW {
		b.WriteString(" held by nobody (malformed: a mode field, no holder)")
	} else if r.Kind == kindUnknown {
		// Another program's key: its fields are no holders.
		fmt.Fprintf(&b, " (not a lock layout, Redis type %s)", r.RedisType)
	} else if r.RedisType == "hash" || r.Kind == kindLean {
		var hs []string
		for _, h := range r.Holders {
			hs = append(hs, shown(h.Field)+"×"+strconv.FormatInt(h.Holds, 10))
		}
		fmt.Fprintf(&b, " held by %s", strings.Join(hs, ", "))
		if more := r.HolderCount - int64(len(r.Holders)); more > 0 {
			// Only the first holders are read: the count shows the rest
			// come and go.
			fmt.Fprintf(&b, " and %d more", more)
		}
	} else if r.IsLock() {
		b.WriteString(" free")
	}
	if r.Fence != nil {
		// The last token issued: a new holder's, and the only change a
		// hold let go and taken again by the same owner leaves.
		fmt.Fprintf(&b, " fence=%d", *r.Fence)
	}
	if r.Counter != nil {
		fmt.Fprintf(&b, " count=%d", *r.Counter)
	}
	live := func(ws []Waiter) string {
		var fs []string
		for _, w := range ws {
			if !w.Stale {
				fs = append(fs, shown(w.Field))
			}
		}
		return strings.Join(fs, ", ")
	}
	if r.QueueLength > 0 {
		fmt.Fprintf(&b, "; %d queued: %s", r.QueueLength, live(r.Queue))
	}
	if r.StaleQueueLength > 0 {
		fmt.Fprintf(&b, "; %d stale in queue", r.StaleQueueLength)
	}
	if r.WriterCount > 0 {
		fmt.Fprintf(&b, "; %s: %s", plural(r.WriterCount, "writer waiting", "writers waiting"), live(r.Writers))
	}
	if r.StaleWriterCount > 0 {
		fmt.Fprintf(&b, "; %s", plural(r.StaleWriterCount, "stale writer", "stale writers"))
	}
	if r.MutexWaiterCount > 0 {
		// A waiter nobody listens for (its process died: the next release
		// drops it) is marked, as inspect marks it.
		var ws []string
		for _, w := range r.MutexWaiters {
			if w.Stale {
				ws = append(ws, shown(w.Field)+" (stale)")
			} else {
				ws = append(ws, shown(w.Field))
			}
		}
		fmt.Fprintf(&b, "; %s: %s", plural(r.MutexWaiterCount, "Go waiter", "Go waiters"), strings.Join(ws, ", "))
	}
	if r.PermitCount > 0 {
		var ps []string
		for _, p := range r.Permits {
			if p.RemainingMS > 0 || p.NoExpiry { // an ended lease is held no more
				ps = append(ps, shown(p.ID))
			}
		}
		fmt.Fprintf(&b, "; %s: %s", plural(r.PermitCount, "permit held", "permits held"), strings.Join(ps, ", "))
	}
	if r.EndedPermitCount > 0 {
		fmt.Fprintf(&b, "; %s", plural(r.EndedPermitCount, "lease ended", "leases ended"))
	}
	return b.String()
}

// plural is n with the word for one or for many.
func plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
