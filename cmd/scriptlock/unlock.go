package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/layout"
)

// beforeForceDelete holds, for a lock key, a function that force-unlock runs
// after its last reading of that lock and before it deletes it. Only tests
// set one.
var beforeForceDelete sync.Map // key string -> func()

// forceRecordTTL is how long a force-unlock's record of its answer lives, as
// a Client's records do.
const forceRecordTTL = time.Minute

func unlockFlags(fs *flag.FlagSet, e *env) {
	fs.BoolVar(&e.yes, "yes", false, "do not ask for confirmation")
}

// unlockResult is force-unlock's JSON output.
type unlockResult struct {
	Key       string `json:"key"`
	KeyBase64 string `json:"key_base64"` // the exact bytes of Key, as Report's
	Kind      string `json:"kind"`
	Released  bool   `json:"released"`
	// Changed: the lock was no longer the one read (and confirmed), and
	// was left alone.
	Changed bool    `json:"changed,omitempty"`
	Channel string  `json:"channel"`
	Before  *Report `json:"before"`
}

func unlockCmd(ctx context.Context, e *env, args []string) error {
	key := e.keyPrefix + args[0]
	r, err := heldLock(ctx, e, key)
	if err != nil {
		return err
	}
	if !e.yes {
		writeReport(e.errOut, r)
		if r.Kind == kindEmptyRW {
			fmt.Fprintf(e.errOut, "\nForce-unlock %q, deleting the read-write lock hash above that nobody holds? [y/N] ", key)
		} else {
			fmt.Fprintf(e.errOut, "\nForce-unlock %q, taking it from every holder above? Their work is no longer protected. [y/N] ", key)
		}
		line, err := readAnswer(ctx, e)
		if err != nil {
			fmt.Fprintln(e.errOut)
			return failf(exitNotConfirmed, "interrupted; nothing changed")
		}
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return failf(exitNotConfirmed, "not confirmed; nothing changed")
		}
		// The answer is about the holds shown: the lock may have changed
		// hands, or been let go and taken again (a new fencing token), while
		// the question was open. The state digests cover every holder, not
		// only the --limit shown, and the fencing counter.
		now, err := heldLock(ctx, e, key)
		if err != nil {
			return err
		}
		if now.State != r.State {
			return failf(exitNotConfirmed, "%q changed hands while asking (%s now); nothing changed: run force-unlock again",
				key, holdSummary(now))
		}
		r = now
	}
	if r.State == "" {
		return failf(exitFailure, "%q has %d fields, more than force-unlock confirms; nothing changed", key, r.HolderCount)
	}
	publish, err := publishCommand(ctx, e)
	if err != nil {
		return err
	}
	if hook, ok := beforeForceDelete.Load(key); ok {
		hook.(func())()
	}
	k := layout.For(key, e.rc.Mode() == rueidis.ClientModeCluster)
	bctx, cancel := e.bounded(ctx)
	defer cancel()
	// The script records its answer, so that rueidis's repeat of a call whose
	// reply was lost deletes nothing a second time (the lock may be a new
	// owner's by then). Repeats end well before the record does.
	bctx, cancelRepeats := context.WithTimeout(bctx, forceRecordTTL/2)
	defer cancelRepeats()
	record := k.UnlockLatch + ":scriptlock-cli-" + rand.Text()
	res := unlockResult{Key: key, KeyBase64: r.KeyBase64, Kind: r.Kind, Before: r}
	// Each layout has its own release message: waiters on the lock channel
	// (Mutex), the head waiter by name (FairMutex), the read-write channel
	// (RWMutex). The script sends exactly what a release sends, for the
	// layout it deletes, and deletes only while the lock is still the one
	// read above (its state digest: type, mode, every holder, fencing token),
	// in the same call: a lock that changed hands since is left alone.
	var told []string // the channels as text output shows them
	switch r.Kind {
	case kindLean:
		// A LeanMutex's waiters poll: its release publishes nothing.
	case kindRW, kindEmptyRW:
		res.Channel = k.RWChannel
		told = []string{shown(k.RWChannel)}
	case kindFair:
		// The head of each queue is told by name: on its client's wake
		// channel (a FairMutex's own queue) and on its own channel
		// (Redisson's RFairLock queue, stale heads evicted by its clock rule
		// first, as Redisson's forceUnlock does). Waiters of both protocols
		// may queue on one name, so both heads are told, also when a queue
		// was empty at inspection and has a waiter now.
		var channels []string
		if slices.Contains(r.QueueProtocols, "scriptlock") {
			channels = append(channels, k.FairWake+":<head waiter's client>")
			told = append(told, shown(k.FairWake)+":<head waiter's client>")
		}
		if slices.Contains(r.QueueProtocols, "redisson") {
			channels = append(channels, k.LockChannel+":<head waiter>")
			told = append(told, shown(k.LockChannel)+":<head waiter>")
		}
		res.Channel = strings.Join(channels, " and ")
	default:
		res.Channel = k.LockChannel
		told = []string{shown(k.LockChannel)}
	}
	e.phase.set(phaseWriting)
	answer, err := generated.ForceUnlockConfirmed(bctx, e.rc, k.Lock, k.Fence, k.LockChannel, k.LockWaiters, k.LockWake,
		k.RWChannel, k.FairQueue, k.FairWake, k.Queue, k.Timeouts, record, k.FairTimeouts, r.State, time.Now(), publish, forceRecordTTL)
	if err != nil && publish == "spublish" && e.sharded == "auto" && shardedRefused(err) {
		// SPUBLISH picked from the version (COMMAND refused), on servers
		// without it (renamed away): the script refused it before anything
		// changed. The call is made again with PUBLISH, as a Client's is,
		// and the waiters (their SSUBSCRIBE refused too) listen plainly.
		publish, e.publish = "publish", "publish"
		answer, err = generated.ForceUnlockConfirmed(bctx, e.rc, k.Lock, k.Fence, k.LockChannel, k.LockWaiters, k.LockWake,
			k.RWChannel, k.FairQueue, k.FairWake, k.Queue, k.Timeouts, record, k.FairTimeouts, r.State, time.Now(), publish, forceRecordTTL)
	}
	res.Released, res.Changed = answer == 1, answer < 0
	if err != nil && publish == "spublish" && e.sharded == "on" && shardedRefused(err) {
		// Forced onto SPUBLISH, as a Client with WithShardedPubSub(true) is:
		// fail as it does, rather than switch, and say what to change.
		return fmt.Errorf("force-unlock %q: --sharded on sends the release message with SPUBLISH, which the server does not have (renamed away, or before Redis 7): run with --sharded off or --sharded auto to send it with PUBLISH: %w", key, err)
	}
	if err != nil {
		var se *generated.ScriptError
		_, isReply := rueidis.IsRedisErr(err)
		if !isReply && !errors.As(err, &se) {
			// Not Redis's answer: the script may have run. A dial error is
			// no call never sent either: rueidis makes the script, which it
			// may retry, again on a new connection after the one it was
			// sent on broke, and answers that dial's error, or the
			// timeout's when it ends first. Forcing again would delete the
			// lock of whoever took it since.
			return fmt.Errorf("force-unlock %q: %w (outcome unknown: the lock may have been released; inspect it before forcing again)", key, err)
		}
		if errors.Is(err, generated.ErrNoPublish) {
			// The refusal names the channel, the lock's name in it, which
			// the script cleared of ASCII control bytes only: shown as
			// the command shows a name, no rune a terminal acts on.
			err = escapedError{err}
		}
		return fmt.Errorf("force-unlock %q: %w", key, err)
	}
	if e.json {
		if err := writeJSON(e.out, res); err != nil {
			return err
		}
	} else if res.Released && res.Channel == "" {
		fmt.Fprintf(e.out, "released %s (%s); its waiters poll, no message is sent\n", shown(key), r.Kind)
	} else if res.Released {
		fmt.Fprintf(e.out, "released %s (%s); waiters told on %s via %s\n", shown(key), r.Kind, strings.Join(told, " and "), strings.ToUpper(publish))
	}
	if res.Changed {
		return failf(exitNotConfirmed, "%q changed since it was confirmed (another holder, or a new hold with a new fencing token); nothing changed: run force-unlock again", key)
	}
	if !res.Released {
		return failf(exitNotFound, "%q was released before force-unlock ran; nothing changed", key)
	}
	return nil
}

// readAnswer reads the operator's answer, or gives up when ctx ends (an
// interrupt): a read from a terminal cannot be cancelled, so it runs on its
// own and is left behind.
func readAnswer(ctx context.Context, e *env) (string, error) {
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(e.in).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// heldLock inspects key, its state digest included, and refuses what
// force-unlock does not release: a name with nothing held under it, or a key
// that is not a lock.
func heldLock(ctx context.Context, e *env, key string) (*Report, error) {
	r, err := inspectKey(ctx, e, key, true)
	if err != nil {
		return nil, err
	}
	switch {
	case !r.Found() || (r.IsLock() && r.RedisType == "none"):
		return nil, failf(exitNotFound, "%q is not held: nothing to unlock", key)
	case r.Kind == kindUnknown:
		return nil, failf(exitNotALock, "%q is not a lock (Redis type %s, not a lock layout): force-unlock only releases locks", key, r.RedisType)
	case !r.IsLock():
		return nil, failf(exitNotALock, "%q is a %s, not a lock: force-unlock only releases locks", key, describeKind(r))
	}
	return r, nil
}

// holdSummary names a lock's holders (those read) and its last fencing
// token, for a refusal.
func holdSummary(r *Report) string {
	fs := make([]string, 0, len(r.Holders))
	for _, h := range r.Holders {
		fs = append(fs, shown(h.Field)) // an owner id is any bytes
	}
	slices.Sort(fs)
	s := "held by " + strings.Join(fs, ", ")
	if r.HolderCount == 0 {
		s = "held by nobody"
	}
	if more := r.HolderCount - int64(len(fs)); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	if r.Fence != nil {
		s += fmt.Sprintf(", last fencing token %d", *r.Fence)
	}
	return s
}

// shardedRefused reports the servers' refusal of SPUBLISH as a command they
// do not have: the script's ACL check of it (redis.acl_check_cmd fails on a
// command it does not know: UNKNOWN_COMMAND, before anything is written), or
// the call itself.
func shardedRefused(err error) bool {
	if errors.Is(err, generated.ErrUnknownCommand) {
		return true
	}
	re, ok := rueidis.IsRedisErr(err)
	if !ok {
		return false
	}
	msg := strings.ToLower(re.Error())
	return strings.Contains(msg, "invalid command passed to redis.acl_check_cmd") ||
		strings.Contains(msg, "unknown command") || strings.Contains(msg, "unknown redis command")
}

// publishCommand picks PUBLISH or SPUBLISH as a Client would: sharded on a
// Cluster whose servers support it, unless --sharded says otherwise. The
// answer is kept for the rest of the run.
func publishCommand(ctx context.Context, e *env) (string, error) {
	if e.publish == "" {
		pub, err := pickPublish(ctx, e)
		if err != nil {
			return "", err
		}
		e.publish = pub
	}
	return e.publish, nil
}

func pickPublish(ctx context.Context, e *env) (string, error) {
	switch e.sharded {
	case "on":
		return "spublish", nil
	case "off":
		return "publish", nil
	}
	if e.rc.Mode() != rueidis.ClientModeCluster {
		return "publish", nil
	}
	bctx, cancel := context.WithTimeout(ctx, min(e.timeout, 2*time.Second))
	defer cancel()
	info, err := e.rc.Do(bctx, e.rc.B().CommandInfo().CommandName("spublish").Build()).ToArray()
	if _, refused := rueidis.IsRedisErr(err); refused {
		// COMMAND is @connection, which an operator's ACL user often lacks
		// (or it was renamed away): ask the version instead.
		return publishByVersion(bctx, e)
	}
	if err != nil {
		return "", fmt.Errorf("COMMAND INFO spublish: %w", err)
	}
	if len(info) == 0 || info[0].IsNil() {
		return "publish", nil
	}
	return "spublish", nil
}

// publishByVersion picks SPUBLISH on a server of Redis 7 or later, which has
// sharded pub/sub, from HELLO's version: every user may send HELLO. A server
// that refuses HELLO (before Redis 6) has none.
func publishByVersion(ctx context.Context, e *env) (string, error) {
	info, err := e.rc.Do(ctx, e.rc.B().Hello().Build()).AsMap()
	if _, refused := rueidis.IsRedisErr(err); refused {
		return "publish", nil
	}
	if err != nil {
		return "", fmt.Errorf("HELLO: %w", err)
	}
	v := info["version"]
	version, _ := v.ToString()
	major, _, _ := strings.Cut(version, ".")
	if n, err := strconv.Atoi(major); err == nil && n >= 7 {
		return "spublish", nil
	}
	return "publish", nil
}

// escapedError is err with the runes of its text that are not printable
// (invalid UTF-8 bytes, C1 controls, bidi overrides) escaped as Go escapes
// them in a quoted string.
type escapedError struct{ err error }

func (e escapedError) Error() string {
	msg := e.err.Error()
	var b strings.Builder
	for i := 0; i < len(msg); {
		r, size := utf8.DecodeRuneInString(msg[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, msg[i])
		case strconv.IsPrint(r):
			b.WriteString(msg[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

func (e escapedError) Unwrap() error { return e.err }
