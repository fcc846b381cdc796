package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/layout"
)

// Layout kinds as inspect names them.
const (
	kindNone    = "none"
	kindMutex   = "mutex"            // Mutex, or a FairMutex nobody waits for (same layout)
	kindFair    = "fair_mutex"       // a lock with a fair queue
	kindRW      = "rwmutex"          // hash with a mode field, or pending writers
	kindEmptyRW = "rwmutex_empty"    // hash with a read or write mode field and no holder: malformed, held by nobody
	kindCounter = "counter"          // Semaphore permits or CountDownLatch count (same layout)
	kindPermits = "permit_semaphore" // counter with permit leases
	kindLean    = "lean_mutex"       // string holding its owner's field <client-id>:<owner-id>
	kindUnknown = "unknown"          // a key of another type or shape
)

// Report is everything inspect found under one name. Times are the Redis
// server's; remaining durations are counted from its clock.
type Report struct {
	// Key is the lock's Redis key, --key-prefix included. JSON strings are
	// UTF-8: a key that is not has U+FFFD in Key for each invalid byte, and
	// KeyBase64 holds its exact bytes, which --name-base64 takes back.
	Key        string    `json:"key"`
	KeyBase64  string    `json:"key_base64"`
	Kind       string    `json:"kind"`
	RedisType  string    `json:"redis_type"`
	ServerTime time.Time `json:"server_time"`
	// LeaseMS is the remaining lease in ms: -1 no expiry, -2 no key.
	LeaseMS     int64    `json:"lease_ms"`
	Mode        string   `json:"mode,omitempty"`
	Holders     []Holder `json:"holders,omitempty"`
	HolderCount int64    `json:"holder_count"`
	// Lapsed are readers of a read-write lock none of whose read holds'
	// lease keys is left: their leases ran out beside other readers (the
	// lease used as the release), and Redisson's layout keeps their fields
	// until the lock ends, but they hold nothing. They are not in Holders
	// nor HolderCount (which counts, among fields past those read, any such
	// reader too).
	Lapsed  []Holder `json:"lapsed_readers,omitempty"`
	Counter *int64   `json:"counter,omitempty"`
	Fence   *int64   `json:"fence,omitempty"`
	// Queue and Writers list entries whether live or stale; QueueLength and
	// WriterCount count the live ones (deadline ahead), StaleQueueLength and
	// StaleWriterCount those whose deadline passed, which the next
	// acquisition evicts.
	Queue            []Waiter `json:"queue,omitempty"`
	QueueLength      int64    `json:"queue_length"`
	StaleQueueLength int64    `json:"stale_queue_length"`
	Writers          []Waiter `json:"pending_writers,omitempty"`
	WriterCount      int64    `json:"pending_writer_count"`
	StaleWriterCount int64    `json:"stale_pending_writer_count"`
	Permits          []Permit `json:"permits,omitempty"`
	// PermitCount counts the permits held under a lease that has not ended;
	// EndedPermitCount those whose lease ended, which the next acquisition
	// returns to the pool; Available, for a PermitSemaphore, is the count
	// plus those: the permits an acquisition can take now.
	PermitCount      int64  `json:"permit_count"`
	EndedPermitCount int64  `json:"ended_permit_count"`
	Available        *int64 `json:"available,omitempty"`
	// MutexWaiters are the Go waiters a Mutex release wakes by name, in the
	// order it wakes them (Redisson's own waiters are not registered).
	MutexWaiters     []MutexWaiter `json:"mutex_waiters,omitempty"`
	MutexWaiterCount int64         `json:"mutex_waiter_count"`
	// QueueProtocols names the fair queues found: "scriptlock" (FairMutex's
	// own keys) and/or "redisson" (Redisson's RFairLock keys).
	QueueProtocols []string `json:"queue_protocols,omitempty"`
	// State is the lock's state digest, read for force-unlock only: its
	// delete goes ahead only while the lock still has it.
	State string `json:"-"`
}

// Holder is one field of a lock hash: <client-id>:<owner-id>[:write].
// Fields are bytes, as keys are: FieldBase64, ClientBase64 and OwnerBase64
// hold the exact bytes of a part that is not UTF-8 (which JSON shows with
// U+FFFD), and are left out otherwise.
type Holder struct {
	Field        string `json:"field"`
	FieldBase64  string `json:"field_base64,omitempty"`
	Client       string `json:"client"`
	ClientBase64 string `json:"client_base64,omitempty"`
	Owner        string `json:"owner"`
	OwnerBase64  string `json:"owner_base64,omitempty"`
	Write        bool   `json:"write,omitempty"`
	Holds        int64  `json:"holds"`
	// ReadLeaseMS is a reader's remaining lease, the longest of its read
	// holds (of its first 100,000: no real reader has more) (-2: none
	// left, a lapsed reader: see Report.Lapsed); nil for others.
	ReadLeaseMS *int64 `json:"read_lease_ms,omitempty"`
}

// Waiter is a queued FairMutex waiter or a pending RWMutex writer, with the
// deadline by which it must call again to keep its place. FieldBase64
// holds the exact bytes of a field that is not UTF-8, as Holder's.
type Waiter struct {
	Field       string    `json:"field"`
	FieldBase64 string    `json:"field_base64,omitempty"`
	Protocol    string    `json:"protocol,omitempty"` // fair queues: scriptlock or redisson
	Deadline    time.Time `json:"deadline"`
	RemainingMS int64     `json:"remaining_ms"`
	// Stale: the deadline passed (or, in FairMutex's own queue, there is
	// none): the waiter is gone and the next acquisition evicts it.
	Stale bool `json:"stale,omitempty"`
}

// MutexWaiter is a Go waiter registered on a Mutex, and since when.
// FieldBase64 holds the exact bytes of a field that is not UTF-8.
type MutexWaiter struct {
	Field       string    `json:"field"`
	FieldBase64 string    `json:"field_base64,omitempty"`
	Registered  time.Time `json:"registered"`
	WaitedMS    int64     `json:"waited_ms"`
	// Stale: no client listens on the waiter's wake channel (its process
	// died, or its Client is not subscribed), so the next release drops it
	// and wakes the waiter after it. Not judged on a Cluster without sharded
	// pub/sub, where PUBSUB NUMSUB counts one node's subscribers.
	Stale bool `json:"stale,omitempty"`
}

// Permit is a PermitSemaphore permit and the end of its lease.
type Permit struct {
	ID string `json:"id"`
	// Expires is zero for a permit with no expiry (NoExpiry).
	Expires     time.Time `json:"expires"`
	RemainingMS int64     `json:"remaining_ms"`
	// NoExpiry: a permit Redisson acquired without a lease (acquire(),
	// tryAcquire()), whose lease end is Redisson's noExpiryMS, beyond the
	// times JSON holds (the year 9999), or one whose lease end wrapped below
	// 0 (RemainingMS below 0 then). It is held until released.
	NoExpiry bool `json:"no_expiry,omitempty"`
}

// The times JSON holds, 0000-01-01 to 9999-12-31, in Unix ms.
const (
	minJSONTimeMS = -62167219200000
	maxJSONTimeMS = 253402300799999
)

// permitIDBytes is the length of a permit id on the server: PermitSemaphore
// and Redisson draw 16 random bytes.
const permitIDBytes = 16

// noExpiryMS is the lease end Redisson's RPermitExpirableSemaphore gives a
// permit acquired without a lease.
const noExpiryMS = 922337203685477

// Found reports whether anything lives under the name.
func (r *Report) Found() bool { return r.Kind != kindNone }

// IsLock reports whether the name holds a lock (as opposed to a counter), or
// a read-write lock hash that no one holds but that keeps acquisitions out
// (kindEmptyRW): list shows it, force-unlock deletes it.
func (r *Report) IsLock() bool {
	return r.Kind == kindMutex || r.Kind == kindFair || r.Kind == kindRW || r.Kind == kindLean || r.Kind == kindEmptyRW
}

// readLeaseKeys is how many read-hold lease keys of one reader one script
// call reads: Inspect the first ones, RwReadLease each further range.
const readLeaseKeys = 100

// scriptLimit is a --limit as the inspect script takes it: the script reads
// it as a Lua number, exact to 2^53 only, and a larger limit shows as much.
func scriptLimit(n int) int64 { return min(int64(n), 1<<53) }

// maxReadLeaseHolds bounds the read holds of one reader whose lease keys are
// read: a hash's count is what it says, and another program's hash (or a
// damaged one) may say 10^12, which would be 10^10 calls. Every read hold
// has a key of its own, so a real reader stays far below it.
const maxReadLeaseHolds = 100_000

// inspect reads every layout under key in one read-only script call (and,
// for a reader with more than readLeaseKeys holds, its further lease keys).
func inspect(ctx context.Context, e *env, key string) (*Report, error) {
	return inspectKey(ctx, e, key, false)
}

// inspectKey is inspect, with the lock's state digest (Report.State) read in
// the same call when state is set.
func inspectKey(ctx context.Context, e *env, key string, state bool) (*Report, error) {
	k := layout.For(key, e.rc.Mode() == rueidis.ClientModeCluster)
	bctx, cancel := e.bounded(ctx)
	defer cancel()
	rows, err := generated.Inspect(bctx, e.rc, k.Lock, k.Fence, k.Queue, k.Timeouts, k.Writers, k.Permits, k.RWPrefix,
		k.FairQueue, k.FairTimeouts, k.LockWaiters, scriptLimit(e.limit), readLeaseKeys, state)
	if err != nil {
		return nil, fmt.Errorf("inspect %q: %w%s", key, err, scriptACLHint(err, key, e.rc.Mode() == rueidis.ClientModeCluster))
	}
	r, err := decodeReport(key, rows)
	if err != nil {
		return nil, err
	}
	if err := readLeases(ctx, e, []*Report{r}); err != nil {
		return nil, err
	}
	if err := markStaleMutexWaiters(ctx, e, k.LockWake, r); err != nil {
		return nil, err
	}
	return r, nil
}

// scriptACLHint says what to grant when the server refused the inspection
// of key: Redis's refusals name neither the command nor the key. The command
// a read-only user lacks is TIME, which the script runs to judge leases and
// deadlines by the server's clock and which no @read grants (nor the
// script's own commands: EVALSHA_RO, and EVAL_RO that sends it to a server
// that has not cached it); the keys a
// user granted the locks' names lacks are those a lock keeps beside its
// own, whose names do not begin with the lock's.
func scriptACLHint(err error, key string, cluster bool) string {
	re, ok := rueidis.IsRedisErr(err)
	if !ok {
		return ""
	}
	msg := re.Error()
	switch {
	case strings.Contains(msg, "can't run this command") || strings.Contains(msg, "'time' command"):
		return " (the inspect script reads with @read commands and TIME, which @read does not grant: give the user +time, and +evalsha_ro +eval_ro for the script)"
	// Redis 7.0 says "access one of the keys" (EVALSHA_RO's keys) or "can't
	// access at least one of the keys" (a key the script builds); 7.2 and
	// later "No permissions to access a key" for both.
	case strings.Contains(msg, "access one of the keys") || strings.Contains(msg, "can't access at least one of the keys") ||
		strings.Contains(msg, "No permissions to access a key"):
		k := layout.For(key, cluster)
		var names []string
		for _, n := range []string{k.Lock, k.Fence, k.Queue, k.Timeouts, k.Writers, k.Permits, k.FairQueue, k.FairTimeouts, k.LockWaiters,
			k.RWPrefix + ":<holder>:rwlock_timeout:<n>"} {
			names = append(names, strconv.Quote(n))
		}
		return " (the inspect script reads the lock's key and the keys it keeps beside it, which the user must be granted too: " + strings.Join(names, ", ") + ")"
	}
	return ""
}

// markStaleMutexWaiters marks the listed Mutex Go waiters whose client does
// not listen on its wake channel (<wake>:<client-id>), as a release judges
// them by PUBLISH's receiver count. Outside a Cluster a Client may listen
// plainly or sharded (WithShardedPubSub), so both counts are asked; in a
// Cluster only a sharded count is whole. Nothing is judged when the server
// refuses to count (an ACL without PUBSUB).
func markStaleMutexWaiters(ctx context.Context, e *env, wake string, r *Report) error {
	if len(r.MutexWaiters) == 0 {
		return nil
	}
	cluster := e.rc.Mode() == rueidis.ClientModeCluster
	if cluster {
		pub, err := publishCommand(ctx, e)
		if err != nil {
			return err
		}
		if pub != "spublish" {
			return nil
		}
	}
	if !cluster {
		replica, err := onReplica(ctx, e)
		if err != nil {
			return fmt.Errorf("inspect %q: %w", r.Key, err)
		}
		if replica {
			// Clients listen on the primary: a replica counts none of them.
			return nil
		}
	}
	var channels []string
	seen := map[string]bool{}
	for _, w := range r.MutexWaiters {
		ch := wake + ":" + clientOf(w.Field)
		if !seen[ch] {
			seen[ch] = true
			channels = append(channels, ch)
		}
	}
	bctx, cancel := e.bounded(ctx)
	defer cancel()
	listening := map[string]bool{}
	// count adds the channels cmd finds listened to. judged is false when
	// the server refused cmd (an ACL without PUBSUB, say): the waiters are
	// then listed unjudged rather than the inspection failing.
	count := func(cmd rueidis.Completed, optional bool) (judged bool, err error) {
		v, err := e.rc.Do(bctx, cmd).ToArray()
		if err != nil {
			re, refused := rueidis.IsRedisErr(err)
			if optional && refused && !strings.HasPrefix(re.Error(), "NOPERM") {
				return true, nil // a server without sharded pub/sub: nobody listens sharded
			}
			if refused {
				// Not allowed to count: a waiter may be listened for
				// where this user cannot see it.
				return false, nil
			}
			return false, fmt.Errorf("inspect %q: waiters' listeners: %w", r.Key, err)
		}
		for i := 0; i+1 < len(v); i += 2 {
			ch, _ := v[i].ToString()
			if n, _ := v[i+1].AsInt64(); n > 0 {
				listening[ch] = true
			}
		}
		return true, nil
	}
	if judged, err := count(e.rc.B().PubsubShardnumsub().Channel(channels...).Build(), !cluster); !judged || err != nil {
		return err
	}
	if !cluster {
		if judged, err := count(e.rc.B().PubsubNumsub().Channel(channels...).Build(), false); !judged || err != nil {
			return err
		}
	}
	for i := range r.MutexWaiters {
		w := &r.MutexWaiters[i]
		w.Stale = !listening[wake+":"+clientOf(w.Field)]
	}
	return nil
}

// onReplica reports whether the connection outside a Cluster reaches a
// replica (a URL naming one), from HELLO's role: every user may send HELLO,
// while ROLE is @dangerous. A server that refuses HELLO (before Redis 6) is
// taken for the primary.
func onReplica(ctx context.Context, e *env) (bool, error) {
	bctx, cancel := e.bounded(ctx)
	defer cancel()
	info, err := e.rc.Do(bctx, e.rc.B().Hello().Build()).AsMap()
	if err != nil {
		if _, refused := rueidis.IsRedisErr(err); refused {
			return false, nil
		}
		return false, fmt.Errorf("HELLO: %w", err)
	}
	msg := info["role"]
	role, _ := msg.ToString()
	return role == "replica" || role == "slave", nil
}

// clientOf is a waiter field's client id: its part before the first colon,
// as the release scripts read it.
func clientOf(field string) string {
	id, _, _ := strings.Cut(field, ":")
	return id
}

// readLeases completes the read leases of readers with more holds than
// Inspect reads lease keys of: each further range of readLeaseKeys keys is
// one RwReadLease call, pipelined, and a reader's lease is the longest of
// all. The further keys are read after Inspect, not atomically with it.
func readLeases(ctx context.Context, e *env, reports []*Report) error {
	type part struct {
		h   *Holder
		key string
	}
	var calls []generated.RwReadLeaseArgs
	var parts []part
	for _, r := range reports {
		if r.Kind != kindRW {
			// Another program's hash with a "mode" field: its numbers are
			// no hold counts (50000000 visits would be 500,000 calls).
			continue
		}
		prefix := layout.For(r.Key, e.rc.Mode() == rueidis.ClientModeCluster).RWPrefix
		for i := range r.Holders {
			h := &r.Holders[i]
			if h.ReadLeaseMS == nil {
				continue
			}
			last := min(h.Holds, maxReadLeaseHolds)
			for from := int64(readLeaseKeys) + 1; from <= last; from += readLeaseKeys {
				calls = append(calls, generated.RwReadLeaseArgs{Rwprefix: prefix, Field: h.Field, From: from,
					To: min(from+readLeaseKeys-1, last)})
				parts = append(parts, part{h, r.Key})
			}
		}
	}
	const batch = 1000 // calls per pipelined round trip
	for len(calls) > 0 {
		n := min(len(calls), batch)
		bctx, cancel := e.bounded(ctx)
		replies := generated.RwReadLeaseMulti(bctx, e.rc, calls[:n])
		cancel()
		for i, rep := range replies {
			if rep.Err != nil {
				return unanswered(rep.Err, fmt.Errorf("inspect %q: read leases: %w", parts[i].key, rep.Err))
			}
			if l := parts[i].h.ReadLeaseMS; rep.Value > *l {
				*l = rep.Value
			}
		}
		calls, parts = calls[n:], parts[n:]
	}
	for _, r := range reports {
		if r.Kind == kindRW {
			setLapsed(r)
		}
	}
	return nil
}

// setLapsed moves r's lapsed readers (Report.Lapsed) out of its holders,
// once their leases are all read.
func setLapsed(r *Report) {
	held := r.Holders[:0]
	for _, h := range r.Holders {
		if h.ReadLeaseMS != nil && *h.ReadLeaseMS == -2 && h.Holds > 0 {
			r.Lapsed = append(r.Lapsed, h)
			r.HolderCount--
			continue
		}
		held = append(held, h)
	}
	r.Holders = held
}

func decodeReport(key string, rows []string) (*Report, error) {
	if len(rows)%4 != 0 {
		return nil, fmt.Errorf("inspect %q: reply of %d strings is not rows of 4", key, len(rows))
	}
	r := &Report{Key: key, KeyBase64: base64.StdEncoding.EncodeToString([]byte(key)), LeaseMS: -2}
	var nowMS int64
	num := func(s string) int64 {
		// Scores may come back as floats ("1.7e12" never; "1700000000000").
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v
		}
		f, _ := strconv.ParseFloat(s, 64)
		return int64(f)
	}
	at := func(ms int64) time.Time {
		if ms < minJSONTimeMS || ms > maxJSONTimeMS {
			// JSON times run from the year 0 to 9999: such a score (another
			// program's) is shown with no time, its remaining ms as they are.
			return time.Time{}
		}
		return time.UnixMilli(ms).UTC()
	}
	for i := 0; i < len(rows); i += 4 {
		kind, a, b := rows[i], rows[i+1], rows[i+2]
		switch kind {
		case "now":
			nowMS = num(a)
			r.ServerTime = at(nowMS)
		case "type":
			r.RedisType = a
			r.LeaseMS = num(b)
		case "mode":
			r.Mode = a
		case "hold":
			// A hold count is an integer (HINCRBY's): a field holding
			// "1e3" or "1.5" is no hold, and its hash no lock (0 holds).
			holds, _ := strconv.ParseInt(b, 10, 64)
			h := parseHolder(a, holds, r.Mode != "") // the mode row comes first
			if c := rows[i+3]; c != "" {
				v := num(c)
				h.ReadLeaseMS = &v
			}
			r.Holders = append(r.Holders, h)
		case "holds":
			r.HolderCount = num(a)
		case "counter":
			// The script says whether the value is a count as the
			// semaphores read one: "007", "+1" and "-0" are none, though
			// ParseInt reads them, and Redisson's float sums are, though
			// it does not.
			if b != "" {
				v := countValue(a)
				r.Counter = &v
			} else if h := parseHolder(a, 1, false); leanOwner(h) {
				r.Holders, r.HolderCount = append(r.Holders, h), 1
			}
		case "fence":
			v := num(a)
			r.Fence = &v
		case "queue":
			w := Waiter{Field: a, FieldBase64: rawBase64(a), Protocol: rows[i+3]}
			if b != "" {
				w.Deadline, w.RemainingMS = at(num(b)), num(b)-nowMS
				w.Stale = w.RemainingMS <= 0
			} else {
				// FairAcquire evicts an entry without a deadline; Redisson
				// keeps it.
				w.Stale = w.Protocol == "scriptlock"
			}
			r.Queue = append(r.Queue, w)
		case "queued":
			live := num(rows[i+3])
			r.QueueLength += live
			r.StaleQueueLength += num(a) - live
			r.QueueProtocols = append(r.QueueProtocols, b)
		case "writer":
			w := Waiter{Field: a, FieldBase64: rawBase64(a), Deadline: at(num(b)), RemainingMS: num(b) - nowMS}
			w.Stale = w.RemainingMS <= 0
			r.Writers = append(r.Writers, w)
		case "writers":
			r.WriterCount = num(b)
			r.StaleWriterCount = num(a) - r.WriterCount
		case "permit":
			p := Permit{ID: permitID(a), RemainingMS: num(b) - nowMS}
			// A lease end below 0 (a Redisson lease near Long.MAX_VALUE ms
			// wraps there) is reclaimed by nobody, who all reclaim 0 to
			// now: held until released, as the script counts it.
			if num(b) >= noExpiryMS || num(b) < 0 {
				p.NoExpiry = true
			} else {
				p.Expires = at(num(b))
			}
			r.Permits = append(r.Permits, p)
		case "permits":
			r.PermitCount, r.EndedPermitCount = num(a), num(b)
		case "lwaiter":
			r.MutexWaiters = append(r.MutexWaiters, MutexWaiter{Field: a, FieldBase64: rawBase64(a), Registered: at(num(b)), WaitedMS: nowMS - num(b)})
		case "lwaiters":
			r.MutexWaiterCount = num(a)
		case "state":
			r.State = a
		default:
			return nil, fmt.Errorf("inspect %q: unknown row %q", key, kind)
		}
	}
	hasQueue := len(r.QueueProtocols) > 0
	permits := r.PermitCount + r.EndedPermitCount
	switch {
	case r.RedisType == "hash" && (r.Mode == "read" || r.Mode == "write") && r.HolderCount == 0:
		// Only the mode field: no release leaves this (the last one deletes
		// the hash), and nobody holds it, yet it keeps writers out (read)
		// or everyone (write) until it expires or is deleted.
		r.Kind = kindEmptyRW
	case r.RedisType == "hash" && (r.Mode == "read" || r.Mode == "write") && lockShaped(r.Holders):
		r.Kind = kindRW
	case r.RedisType == "hash" && (r.Mode != "" || !lockShaped(r.Holders)):
		r.Kind = kindUnknown // another program's hash, a "mode" field of its own included
	case r.RedisType == "hash" && hasQueue:
		r.Kind = kindFair
	case r.RedisType == "hash":
		r.Kind = kindMutex
	case r.RedisType == "string" && r.HolderCount > 0:
		r.Kind = kindLean
	case r.RedisType == "string" && r.Counter != nil && permits > 0:
		r.Kind = kindPermits
	case r.RedisType == "string" && r.Counter != nil:
		r.Kind = kindCounter
	case r.RedisType == "none" && hasQueue:
		r.Kind = kindFair // free, waiters queued
	case r.RedisType == "none" && r.MutexWaiterCount > 0:
		r.Kind = kindMutex // free, a woken Go waiter about to take it
	case r.RedisType == "none" && r.WriterCount+r.StaleWriterCount > 0:
		r.Kind = kindRW // free, a writer about to take it (or a stale one's entry)
	case r.RedisType == "none" && permits > 0:
		r.Kind = kindPermits
	case r.RedisType == "none":
		r.Kind = kindNone
	default:
		r.Kind = kindUnknown
	}
	if r.Kind == kindPermits {
		avail := r.EndedPermitCount
		if r.Counter != nil {
			avail += *r.Counter
		}
		r.Available = &avail
	}
	return r, nil
}

// countValue is a count the inspect script found: an integer, or a float sum
// Redisson's addPermits wrote ("1e+17", "9223372036854776000"), which is
// shown as the int64 nearest it.
func countValue(s string) int64 {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v
	}
	f, _ := strconv.ParseFloat(s, 64)
	switch {
	case f >= math.MaxInt64: // 2^63 as a float64
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// lockShaped reports whether hash fields look like lock holds: every field
// is <client-id>:<owner-id> with a positive integer count, the client id a UUID (a
// scriptlock Client's or a Redisson client's).
func lockShaped(hs []Holder) bool {
	for _, h := range hs {
		if h.Owner == "" || h.Holds <= 0 || !uuidShaped(h.Client) {
			return false
		}
	}
	return true
}

// leanOwner reports whether a string key's value is a LeanMutex's owner
// field: a Client id, a colon, an owner id.
func leanOwner(h Holder) bool {
	return !h.Write && h.Owner != "" && uuidShaped(h.Client)
}

// uuidShaped reports whether a client id has the form of scriptlock's and
// Redisson's: a UUID, 8-4-4-4-12 lowercase hex digits.
func uuidShaped(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, c := range id {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// parseHolder splits a holder field. Only a read-write lock's fields (rw:
// its hash has a mode) mark a write hold with ":write"; a Mutex's or
// LeanMutex's owner id may end so, and is the owner's whole id.
func parseHolder(field string, holds int64, rw bool) Holder {
	h := Holder{Field: field, Holds: holds}
	rest := field
	if s, ok := strings.CutSuffix(rest, ":write"); ok && rw {
		h.Write, rest = true, s
	}
	h.Client, h.Owner, _ = strings.Cut(rest, ":")
	h.FieldBase64, h.ClientBase64, h.OwnerBase64 = rawBase64(field), rawBase64(h.Client), rawBase64(h.Owner)
	return h
}

// shown is s as text output prints a key or a holder, owner, waiter or
// permit field: as it is, or in Go's quoted form (strconv.Quote) when it is
// not UTF-8 or holds a character that is not printable, which would reach
// the terminal as garbage or control sequences (a tab or newline would also
// break the columns), when it begins or ends with a space, which the
// columns' padding would hide ("order:1 " would print as "order:1"), or
// when it begins with a double quote, so that a quoted form always stands
// for one string.
func shown(s string) string {
	if strings.HasPrefix(s, `"`) || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") || !utf8.ValidString(s) ||
		strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// rawBase64 is the base64 of a string that is not UTF-8, which JSON would
// show with U+FFFD for each invalid byte (and so confuse with another name);
// "" for a valid one, which JSON shows as it is.
func rawBase64(s string) string {
	if utf8.ValidString(s) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(s))
}

func inspectFlags(fs *flag.FlagSet, e *env) {
	fs.IntVar(&e.limit, "limit", e.limit, "show at most this many holders, waiters and permits each (totals are exact)")
}

func inspectCheck(e *env) error {
	if e.limit <= 0 {
		return failf(exitUsage, "--limit must be positive, got %d", e.limit)
	}
	return nil
}

func inspectCmd(ctx context.Context, e *env, args []string) error {
	r, err := inspect(ctx, e, e.keyPrefix+args[0])
	if err != nil {
		return err
	}
	if e.json {
		if err := writeJSON(e.out, r); err != nil {
			return err
		}
	} else {
		writeReport(e.out, r)
	}
	if !r.Found() {
		return failf(exitNotFound, "nothing under %q", r.Key)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(terminalSafeJSON(b), '\n'))
	return err
}

// terminalSafeJSON escapes, in the JSON text b, every rune beyond ASCII that
// is not printable as \uXXXX (a surrogate pair past U+FFFF): C1 controls,
// U+009B among them, which a terminal takes for the start of an escape
// sequence, bidi overrides and zero-width characters. Key names and holder
// fields are any bytes another program wrote, and watch --json is read as it
// runs; encoding/json escapes those below U+0020 only. Such runes occur only
// inside JSON strings, so the escape leaves the text valid and its values
// the same.
func terminalSafeJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if unicode.IsPrint(r) {
			i += n
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b)+16)
		}
		out = append(out, b[last:i]...)
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
		last = i
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// lease renders a remaining lease in ms.
func lease(ms int64) string {
	switch {
	case ms == -1:
		return "no expiry"
	case ms < 0:
		return "-"
	case ms > math.MaxInt64/int64(time.Millisecond):
		// Past what a Duration holds (292 years): it would wrap negative.
		const hour = int64(time.Hour / time.Millisecond)
		return strconv.FormatInt(ms/hour, 10) + "h" + (time.Duration(ms%hour) * time.Millisecond).String()
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

func writeReport(w io.Writer, r *Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "KEY\t%s\n", shown(r.Key))
	fmt.Fprintf(tw, "LAYOUT\t%s\n", describeKind(r))
	if !r.Found() {
		if r.Fence != nil {
			// A released lock keeps its fencing counter (--json shows it):
			// the next holder's token follows it.
			fmt.Fprintf(tw, "FENCE\t%d (last token issued)\n", *r.Fence)
		}
		tw.Flush()
		return
	}
	if r.RedisType != "none" {
		fmt.Fprintf(tw, "LEASE\t%s\n", lease(r.LeaseMS))
	}
	if r.Mode != "" {
		// Another program's hash may have any bytes there.
		fmt.Fprintf(tw, "MODE\t%s\n", shown(r.Mode))
	}
	if r.Counter != nil {
		fmt.Fprintf(tw, "COUNT\t%d\n", *r.Counter)
	}
	if r.Fence != nil {
		fmt.Fprintf(tw, "FENCE\t%d (last token issued)\n", *r.Fence)
	}
	switch {
	case r.Kind == kindUnknown && r.RedisType == "hash":
		// Another program's hash: its fields hold nothing.
		fmt.Fprintf(tw, "FIELDS\t%d\n", r.HolderCount)
	case r.RedisType == "hash" || r.Kind == kindLean:
		fmt.Fprintf(tw, "HOLDERS\t%d\n", r.HolderCount)
	}
	if len(r.Lapsed) > 0 {
		fmt.Fprintf(tw, "LAPSED READERS\t%d (read leases ran out; the fields stay until the lock ends, holding nothing)\n", len(r.Lapsed))
	}
	if len(r.QueueProtocols) > 0 {
		fmt.Fprintf(tw, "QUEUED\t%d (%s queue)\n", r.QueueLength, strings.Join(r.QueueProtocols, " and "))
	}
	if r.StaleQueueLength > 0 {
		fmt.Fprintf(tw, "STALE QUEUED\t%d (deadline passed; the next acquisition evicts them)\n", r.StaleQueueLength)
	}
	if r.WriterCount > 0 {
		fmt.Fprintf(tw, "PENDING WRITERS\t%d\n", r.WriterCount)
	}
	if r.StaleWriterCount > 0 {
		fmt.Fprintf(tw, "STALE WRITERS\t%d (deadline passed; the next acquisition evicts them)\n", r.StaleWriterCount)
	}
	if r.Kind == kindPermits {
		fmt.Fprintf(tw, "AVAILABLE\t%d\n", *r.Available)
		fmt.Fprintf(tw, "PERMITS HELD\t%d\n", r.PermitCount)
		if r.EndedPermitCount > 0 {
			fmt.Fprintf(tw, "LEASES ENDED\t%d (free to the next acquisition)\n", r.EndedPermitCount)
		}
	}
	if r.MutexWaiterCount > 0 {
		fmt.Fprintf(tw, "GO WAITERS\t%d\n", r.MutexWaiterCount)
	}
	tw.Flush()
	if len(r.Holders) > 0 && r.Kind == kindUnknown {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "FIELD")
		for _, h := range r.Holders {
			fmt.Fprintln(w, shown(h.Field))
		}
	} else if len(r.Holders) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "HOLDER CLIENT\tOWNER\tMODE\tHOLDS\tLEASE")
		for _, h := range r.Holders {
			mode, hl := "exclusive", "-"
			switch {
			case h.Write:
				mode = "write"
			case r.Mode != "":
				mode = "read"
			}
			if h.ReadLeaseMS != nil {
				hl = lease(*h.ReadLeaseMS)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", shown(h.Client), shown(h.Owner), mode, h.Holds, hl)
		}
		tw.Flush()
	}
	waiters := func(title string, ws []Waiter) {
		if len(ws) == 0 {
			return
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "#\t%s\tDEADLINE\tIN\n", title)
		for i, q := range ws {
			deadline, in := "-", "-"
			if !q.Deadline.IsZero() {
				deadline, in = stamp(q.Deadline), lease(max(q.RemainingMS, 0))
			}
			if q.Stale {
				in = "stale"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i+1, shown(q.Field), deadline, in)
		}
		tw.Flush()
	}
	waiters("WAITER", r.Queue)
	waiters("PENDING WRITER", r.Writers)
	if len(r.MutexWaiters) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "#\tGO WAITER\tREGISTERED\tWAITED")
		for i, q := range r.MutexWaiters {
			stale := ""
			if q.Stale {
				stale = "\tstale"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s%s\n", i+1, shown(q.Field), stamp(q.Registered), lease(max(q.WaitedMS, 0)), stale)
		}
		tw.Flush()
	}
	if len(r.Permits) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PERMIT\tEXPIRES\tIN")
		for _, p := range r.Permits {
			expires, in := stamp(p.Expires), "ended"
			switch {
			case p.NoExpiry:
				expires, in = "-", "no expiry"
			case p.RemainingMS > 0:
				in = lease(p.RemainingMS)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", shown(p.ID), expires, in)
		}
		tw.Flush()
	}
}

// stamp renders a time of a waiter or permit; "-" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("2006-01-02T15:04:05.000Z07:00")
}

func describeKind(r *Report) string {
	switch r.Kind {
	case kindNone:
		if r.Fence != nil {
			return "nothing held under this name (free; its fencing counter is kept)"
		}
		return "nothing under this name"
	case kindMutex:
		if r.RedisType == "none" {
			return "mutex (free, Go waiters registered)"
		}
		return "mutex (Mutex, Redisson RLock; a FairMutex with nobody queued looks the same)"
	case kindFair:
		if r.RedisType == "none" && r.QueueLength == 0 {
			return "fair mutex (free, only stale queue entries)"
		}
		if r.RedisType == "none" {
			return "fair mutex (free, waiters queued)"
		}
		return "fair mutex (FairMutex, Redisson RFairLock)"
	case kindRW:
		if r.RedisType == "none" && r.WriterCount == 0 {
			return "read-write lock (free, only stale pending writers)"
		}
		if r.RedisType == "none" {
			return "read-write lock (free, a writer waiting)"
		}
		return "read-write lock (RWMutex, Redisson RReadWriteLock)"
	case kindEmptyRW:
		keeps := "writers"
		if r.Mode == "write" {
			keeps = "readers and writers"
		}
		return fmt.Sprintf("malformed read-write lock hash (a mode field, no holder: nobody holds it, yet it keeps %s out until it expires or is force-unlocked)", keeps)
	case kindCounter:
		return "counter (Semaphore permits available, or CountDownLatch count)"
	case kindLean:
		return "lean mutex (LeanMutex)"
	case kindPermits:
		return "permit semaphore (PermitSemaphore, Redisson RPermitExpirableSemaphore)"
	}
	return fmt.Sprintf("not a lock layout (Redis type %s)", r.RedisType)
}

// permitID shows a permit id as its holder knows it: Redisson stores the id's
// raw bytes and hands out their hex form, as PermitSemaphore does.
func permitID(raw string) string {
	if len(raw) == permitIDBytes {
		// Such an id is random bytes, printable ones too (one in some ten
		// million is): shown as it is, it would name no permit.
		return hex.EncodeToString([]byte(raw))
	}
	for _, r := range raw {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return hex.EncodeToString([]byte(raw))
		}
	}
	return raw
}
