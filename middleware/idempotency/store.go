package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/rueidisopt"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// Idempotency-Key defaults.
const (
	// DefaultPrefix prefixes idempotency records.
	DefaultPrefix = "scriptlock:idem:"
	// DefaultTTL is how long a completed response is kept for replay.
	DefaultTTL = 24 * time.Hour
	// DefaultClaimTTL is how long a claim survives without renewal; a running
	// request renews it every third of that, so only a crashed server leaves a
	// key blocked, for at most this long.
	DefaultClaimTTL = 30 * time.Second
	// DefaultMaxKeyLen is the longest Idempotency-Key accepted.
	DefaultMaxKeyLen = 255
	// DefaultMaxBytesPerScope is how many bytes of records one scope (one
	// caller) may keep: responses plus a fixed overhead per record.
	DefaultMaxBytesPerScope = 64 << 20
	// DefaultTimeout bounds each idempotency store operation.
	DefaultTimeout = 3 * time.Second
	// DefaultMaxBackgroundRetries is how many failed calls a store keeps
	// retrying in the background at once (see WithMaxBackgroundRetries).
	DefaultMaxBackgroundRetries = 1024
)

var (
	// ErrKeyInvalid: the Idempotency-Key is malformed.
	ErrKeyInvalid = errors.New("idempotency: invalid Idempotency-Key")
	// ErrReplayingClient: NewStore refuses a rueidis client that may send a
	// call Redis ran again (one made with ConnLifetime).
	ErrReplayingClient = errors.New("rueidis client replays calls")
	// ErrInFlight: a request with the same key is still running.
	ErrInFlight = errors.New("idempotency: a request with this Idempotency-Key is in flight")
	// ErrFingerprintMismatch: the key was used before for a different request.
	ErrFingerprintMismatch = errors.New("idempotency: Idempotency-Key reused for a different request")
	// ErrNotReplayable: the key's request completed but its response was not
	// stored (larger than the size limit, or cut short by an error after it
	// began), so it can be neither run again nor replayed.
	ErrNotReplayable = errors.New("idempotency: response for this Idempotency-Key was not stored")
	// ErrClaimLost: a running request's claim on its key ended (Redis
	// answered that it was gone, or no renewal succeeded before it could have
	// expired), so a retry may run the request again. It is the cause of the
	// context that Claim.Context returns.
	ErrClaimLost = errors.New("idempotency: claim on the Idempotency-Key lost")
	// ErrRetryDropped: a call failed and the store already retries as many
	// as WithMaxBackgroundRetries allows, so it is not retried: the record is
	// left to its claim TTL. It comes wrapped with the call's own error.
	ErrRetryDropped = errors.New("idempotency: too many background retries in flight, record left to its claim TTL")
)

var errReleased = errors.New("idempotency: reservation released before it reached Redis")

// Store keeps Idempotency-Key records in Redis, through the
// idempotency_*.lua scripts: a record is claimed atomically by the first
// request, renewed while it runs, then completed with its response (kept for
// the TTL) or released.
type Store struct {
	client    rueidis.Client
	prefix    string
	ttl       time.Duration
	claimTTL  time.Duration
	maxKeyLen int
	timeout   time.Duration
	budget    int64
	// maxRetries bounds the background retries; undos may take half.
	maxRetries int

	stop    context.Context // cancelled by Close
	cancel  context.CancelFunc
	mu      sync.Mutex
	closed  bool
	retries int            // background retries running
	bg      sync.WaitGroup // background retries
	// panics counts the calls on the store's own goroutines that panicked
	// since one last went through (unpanicked); panicSeen, guarded by
	// panicMu, holds the kinds of panic logged at ERROR since then.
	panics    atomic.Int64
	panicMu   sync.Mutex
	panicSeen map[string]bool
	log       *slog.Logger // see WithLogger
}

// Option configures an Store.
type Option func(*Store)

// WithPrefix sets the record key prefix (default DefaultPrefix). It may not
// hold '{' or '}': each caller's records sit under a hash tag of their own,
// which a tag in the prefix would replace (every caller in one Cluster slot)
// and an empty "{}" would undo (one record's keys in several slots, which
// its scripts refuse with CROSSSLOT).
func WithPrefix(p string) Option {
	return func(s *Store) { s.prefix = p }
}

// WithTTL sets how long completed responses are kept (default 24 h).
func WithTTL(d time.Duration) Option {
	return func(s *Store) { s.ttl = d }
}

// WithClaimTTL sets how long an unrenewed claim lasts (default 30 s). One
// under about 8 ms fails NewStore: a claim is presumed lost a margin for clock
// drift (5 ms and a fiftieth) before it expires, which would come before its
// first renewal.
func WithClaimTTL(d time.Duration) Option {
	return func(s *Store) { s.claimTTL = d }
}

// WithTimeout bounds each store operation (default 3 s), so that a
// request fails with an error, answered 503/Unavailable, instead of waiting
// for an unreachable Redis.
func WithTimeout(d time.Duration) Option {
	return func(s *Store) { s.timeout = d }
}

// WithMaxKeyLen sets the longest key accepted (default 255 bytes).
func WithMaxKeyLen(n int) Option {
	return func(s *Store) { s.maxKeyLen = n }
}

// WithMaxBytesPerScope bounds what one scope (one caller, see
// CredentialScope) makes Redis keep: the stored responses of its live records
// plus a fixed overhead per record (default DefaultMaxBytesPerScope; 0 or less
// for no limit; one above 2^53 is 2^53). A new key of a scope over its budget is refused (OverBudget,
// answered 429 / ResourceExhausted) until its older records expire. A
// response's size is known only when it completes, so a scope can exceed its
// budget by the responses of the requests it has running. The budget bounds a
// caller as far as its scope is its identity: the middleware's default scope
// hashes what the client sends, so a client that varies its cookies gets
// fresh scopes; scope by the authenticated account where that matters.
func WithMaxBytesPerScope(n int64) Option {
	// The script reads the budget as a Lua number, exact to 2^53 only; a
	// larger one is as good as none, and the generated caller refuses it.
	return func(s *Store) { s.budget = min(max(n, 0), 1<<53) }
}

// WithMaxBackgroundRetries bounds how many failed calls (a Reserve whose
// claim must be released, a Complete whose response must be stored, a
// Release) the store keeps retrying in the background at once (default
// DefaultMaxBackgroundRetries; 0 for none). Each retry lasts until Redis
// answers or the claim TTL has passed (a Complete's or a Release's: until its
// claim could have expired, after which it cannot succeed), and a
// Complete's holds its response,
// so without a bound a long outage would pile up goroutines and memory with
// the request rate. Releases may take half of them: the other half is kept
// for Complete, whose retry is what keeps a request that ran from running
// again. A call beyond the bound returns its error wrapped with
// ErrRetryDropped and leaves the record to its claim TTL.
func WithMaxBackgroundRetries(n int) Option {
	return func(s *Store) { s.maxRetries = n }
}

// WithLogger sets the logger for what the store recovers on its own
// goroutines: a panic of its rueidis client (a wrapper's) in a claim's
// renewal or a background retry (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) { s.log = l }
}

// NewStore returns a store on c.
func NewStore(c rueidis.Client, opts ...Option) (*Store, error) {
	s := &Store{client: c, prefix: DefaultPrefix, ttl: DefaultTTL,
		claimTTL: DefaultClaimTTL, maxKeyLen: DefaultMaxKeyLen, timeout: DefaultTimeout,
		budget: DefaultMaxBytesPerScope, maxRetries: DefaultMaxBackgroundRetries}
	for _, o := range opts {
		o(s)
	}
	switch {
	case c == nil:
		return nil, errors.New("idempotency: nil rueidis client")
	case rueidisopt.ReplaysWrittenCalls(c):
		// The store's scripts (a reservation, a completion, a claim's
		// release) each take one call to run once.
		return nil, fmt.Errorf("idempotency: %w: %s; give the store a rueidis client without ConnLifetime", ErrReplayingClient, rueidisopt.Why)
	case s.maxRetries < 0:
		return nil, fmt.Errorf("idempotency: max background retries %d is negative", s.maxRetries)
	case s.timeout <= 0:
		return nil, fmt.Errorf("idempotency: store timeout %s must be positive", s.timeout)
	case s.ttl < time.Millisecond || s.claimTTL < 3*time.Millisecond ||
		// A claim is presumed lost the margin before its TTL runs out: that
		// must come after its first renewal, or every claim is lost as
		// soon as its handler starts.
		s.claimTTL-claimMargin(s.claimTTL) <= s.claimTTL/3:
		return nil, fmt.Errorf("idempotency: TTL %s / claim TTL %s too short", s.ttl, s.claimTTL)
	case strings.ContainsAny(s.prefix, "{}"):
		return nil, fmt.Errorf("idempotency: prefix %q holds a brace: each caller's records sit under a hash tag of their own", s.prefix)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.stop, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// ParseKey reads an Idempotency-Key header value: a structured
// field string ("...", as the IETF draft specifies) or, as clients commonly
// send, the bare value. The key must be 1..maxLen bytes of printable ASCII.
// The string is an RFC 8941 Item, which may carry parameters ("k1";p=1):
// they are parsed (RFC 9651's dates and display strings included), and
// ignored, as RFC 8941 says of unknown parameters: the key is the string
// alone. Parameters that do not parse make the value malformed. A bare value
// is the key as sent, ';' and all.
func ParseKey(v string, maxLen int) (string, error) {
	if maxLen <= 0 {
		maxLen = DefaultMaxKeyLen
	}
	// Only the blanks around a field value (RFC 9110 OWS): TrimSpace would
	// also take off Unicode spaces (a no-break space), turning a key of
	// bytes outside printable ASCII into a valid one.
	v = strings.Trim(v, " \t")
	if len(v) >= 2 && v[0] == '"' {
		var b strings.Builder
		i := 1
		for ; i < len(v) && v[i] != '"'; i++ {
			c := v[i]
			if c == '\\' {
				i++
				if i >= len(v) || v[i] != '"' && v[i] != '\\' {
					return "", fmt.Errorf("%w: bad escape", ErrKeyInvalid)
				}
				c = v[i]
			}
			b.WriteByte(c)
		}
		if i >= len(v) {
			return "", fmt.Errorf("%w: unterminated string", ErrKeyInvalid)
		}
		if err := checkParams(v[i+1:]); err != nil {
			return "", err
		}
		v = b.String()
	}
	if err := checkKey(v, maxLen); err != nil {
		return "", err
	}
	return v, nil
}

// checkParams checks that rest, what follows an Item's string, is RFC 8941
// parameters: *( ";" *SP key [ "=" bare-item ] ). Their values are not kept.
func checkParams(rest string) error {
	for rest != "" {
		if rest[0] != ';' {
			return fmt.Errorf("%w: trailing data after the string", ErrKeyInvalid)
		}
		rest = strings.TrimLeft(rest[1:], " ")
		n := 0
		for n < len(rest) && (rest[n] >= 'a' && rest[n] <= 'z' || rest[n] == '*' ||
			n > 0 && (rest[n] >= '0' && rest[n] <= '9' || strings.IndexByte("_-.", rest[n]) >= 0)) {
			n++
		}
		if n == 0 {
			return fmt.Errorf("%w: malformed parameter key", ErrKeyInvalid)
		}
		rest = rest[n:]
		if rest == "" || rest[0] != '=' {
			continue // a parameter without a value is true
		}
		var err error
		if rest, err = skipBareItem(rest[1:]); err != nil {
			return err
		}
	}
	return nil
}

// skipBareItem returns what follows the RFC 8941 (and RFC 9651) bare item
// that s begins with: an integer, decimal, string, token, byte sequence,
// boolean, date or display string.
func skipBareItem(s string) (string, error) {
	bad := func(what string) (string, error) {
		return "", fmt.Errorf("%w: malformed parameter value (%s)", ErrKeyInvalid, what)
	}
	if s == "" {
		return bad("empty")
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	number := func(s string) (string, bool) {
		i := 0
		if i < len(s) && s[i] == '-' {
			i++
		}
		d := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		ints := i - d
		if ints == 0 || ints > 15 {
			return "", false
		}
		if i < len(s) && s[i] == '.' {
			f := i + 1
			for i = f; i < len(s) && isDigit(s[i]); i++ {
			}
			if ints > 12 || i == f || i-f > 3 {
				return "", false
			}
		}
		return s[i:], true
	}
	switch c := s[0]; {
	case c == '-' || isDigit(c):
		if r, ok := number(s); ok {
			return r, nil
		}
		return bad("number")
	case c == '@':
		if r, ok := number(s[1:]); ok && !strings.Contains(s[1:len(s)-len(r)], ".") {
			return r, nil
		}
		return bad("date")
	case c == '"':
		for i := 1; i < len(s); i++ {
			switch c := s[i]; {
			case c == '\\':
				if i++; i >= len(s) || s[i] != '"' && s[i] != '\\' {
					return bad("string escape")
				}
			case c == '"':
				return s[i+1:], nil
			case c < 0x20 || c > 0x7e:
				return bad("string")
			}
		}
		return bad("string")
	case c == '%':
		if len(s) < 2 || s[1] != '"' {
			return bad("display string")
		}
		// The decoded bytes must be UTF-8: RFC 9651 fails the parse
		// otherwise.
		var decoded []byte
		for i := 2; i < len(s); i++ {
			switch c := s[i]; {
			case c == '%':
				if i+2 >= len(s) || !isLowerHex(s[i+1]) || !isLowerHex(s[i+2]) {
					return bad("display string")
				}
				decoded = append(decoded, unhex(s[i+1])<<4|unhex(s[i+2]))
				i += 2
			case c == '"':
				if !utf8.Valid(decoded) {
					return bad("display string not UTF-8")
				}
				return s[i+1:], nil
			case c < 0x20 || c > 0x7e:
				return bad("display string")
			default:
				decoded = append(decoded, c)
			}
		}
		return bad("display string")
	case c == ':':
		end := strings.IndexByte(s[1:], ':')
		if end < 0 {
			return bad("byte sequence")
		}
		b64 := s[1 : 1+end]
		if strings.ContainsAny(b64, "\r\n") { // which Go's decoder skips
			return bad("byte sequence")
		}
		if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
			// RFC 8941: a parser should not fail on missing padding.
			if _, err := base64.RawStdEncoding.DecodeString(b64); err != nil {
				return bad("byte sequence")
			}
		}
		return s[2+end:], nil
	case c == '?':
		if len(s) < 2 || s[1] != '0' && s[1] != '1' {
			return bad("boolean")
		}
		return s[2:], nil
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '*':
		i := 1
		for i < len(s) && (isTchar(s[i]) || s[i] == ':' || s[i] == '/') {
			i++
		}
		return s[i:], nil
	}
	return bad("unknown type")
}

func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// unhex is the value of c, a lower-case hex digit.
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// isTchar reports an RFC 9110 token character.
func isTchar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// checkKey checks a key as ParseKey returns it: 1..maxLen bytes of
// printable ASCII (maxLen 0 or less: DefaultMaxKeyLen).
func checkKey(v string, maxLen int) error {
	if maxLen <= 0 {
		maxLen = DefaultMaxKeyLen
	}
	if v == "" {
		return fmt.Errorf("%w: empty", ErrKeyInvalid)
	}
	if len(v) > maxLen {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrKeyInvalid, len(v), maxLen)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return fmt.Errorf("%w: byte %#x at %d", ErrKeyInvalid, v[i], i)
		}
	}
	return nil
}

// AnonymousScope is the scope of requests that carry no credentials. They
// share it with each other, never with an authenticated caller.
const AnonymousScope = "anonymous"

// CredentialScope returns the scope of a request presenting credentials (the
// Authorization header, session cookies, a TLS client certificate, ...):
// "cred:" and the SHA-256 of the parts, so that records of different callers
// never meet and Redis never holds the credentials themselves. With no
// non-empty part it returns AnonymousScope.
func CredentialScope(credentials ...string) string {
	for _, c := range credentials {
		if c != "" {
			b := make([][]byte, len(credentials))
			for i, c := range credentials {
				b[i] = []byte(c)
			}
			return "cred:" + Fingerprint(b...)
		}
	}
	return AnonymousScope
}

// Fingerprint hashes the parts identifying a request (method, route, body
// ...) with SHA-256; parts are length-prefixed, so ("ab","c") and ("a","bc")
// differ.
func Fingerprint(parts ...[]byte) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RecordKey is the Redis key of the record for key within scope (see
// CredentialScope), so two clients' keys never meet. The escaped scope is the
// key's hash tag: a scope's records and its usage share a Redis Cluster slot.
func (s *Store) RecordKey(scope, key string) string {
	return s.scopeTag(scope) + ":" + core.EscapeKey(key)
}

// scopeTag is prefix + "{" + escaped scope + "}"; the empty scope gets "%",
// which no escaped scope spells (an escaped '%' is always "%25").
func (s *Store) scopeTag(scope string) string {
	tag := core.EscapeKey(scope)
	if tag == "" {
		tag = "%"
	}
	return s.prefix + "{" + tag + "}"
}

// keys names the Redis keys one record's scripts touch.
type keys struct{ tag, record, usage, sizes string }

func (s *Store) keys(scope, key string) keys {
	tag := s.scopeTag(scope)
	return keys{tag: tag, record: tag + ":" + core.EscapeKey(key), usage: tag + "#usage", sizes: tag + "#sizes"}
}

// released names the mark a release leaves for token (one reservation's,
// on this key) when token holds no running claim on the key (see
// IdempotencyRelease): a reservation of token still on its way claims
// nothing when it arrives. It shares the scope's hash tag; no record key
// spells it (those have ':' after the tag).
func (k keys) released(token string) string { return k.tag + "#released:" + token }

// Bytes accounted per record besides the response, about what Redis spends on
// the record's key, fields and usage entries.
const recordOverhead = 256

// ReserveState is the outcome of Reserve.
type ReserveState int

const (
	// Claimed: this request runs; finish with Claim.Complete or Claim.Release.
	Claimed ReserveState = iota
	// InFlight: a request with the same key and fingerprint is running.
	InFlight
	// Done: completed before; Response holds the stored response.
	Done
	// Mismatch: the key belongs to a request with a different fingerprint.
	Mismatch
	// OverBudget: the scope keeps as many bytes as WithMaxBytesPerScope
	// allows; nothing was claimed.
	OverBudget
)

// Reservation is what Reserve found.
type Reservation struct {
	State    ReserveState
	Response []byte // Done only
	Claim    *Claim // Claimed only
}

// Reserve claims key (within scope) for a request with fingerprint fp, or
// reports what a previous request with that key left. key is as ParseKey
// returns it: one it would refuse fails with ErrKeyInvalid, nothing sent.
// earlier lists the fingerprints the same request had under earlier ways of
// fingerprinting it (a fingerprint version that counts more of the
// request): a record stored with one of them, by an earlier version, is
// this request's, not a mismatch. A claim made now stores fp. Fingerprints
// of different versions must never be equal (a version prefix).
// Other errors are Redis errors, or ctx's error when it has already ended
// (nothing is sent then).
// The call is bounded by the store timeout; when it fails, a claim it may
// have made anyway is released in the background (until Redis answers), so a
// retry after the error finds the key free once Redis is reachable again.
func (s *Store) Reserve(ctx context.Context, scope, key, fp string, earlier ...string) (Reservation, error) {
	if err := ctx.Err(); err != nil {
		// Nothing sent, nothing to undo: a request whose client has gone
		// leaves no record (not even a release mark) in Redis.
		return Reservation{}, err
	}
	if err := checkKey(key, s.maxKeyLen); err != nil {
		return Reservation{}, err
	}
	k := s.keys(scope, key)
	token := core.NewOwnerID()
	sent := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	r, reached, again, err := s.reserve(ctx, k, fp, token)
	if err != nil {
		// Without a reply the script may still run (a stalled server executes
		// it when it resumes): undo the claim this token may hold, so a retry
		// is not answered "in flight" until the claim TTL runs out. A server
		// out of memory ran nothing (it refuses a script's first write that
		// may use memory, and the claim is this script's first write), and
		// an undo would write a release mark to a full server. A call that never
		// left this process claimed nothing either.
		if re, ok := rueidis.IsRedisErr(err); reached && (!ok || !strings.HasPrefix(re.Error(), "OOM ")) {
			return Reservation{}, s.undo(k, token, err)
		}
		return Reservation{}, err
	}
	switch {
	case r.State == 3: // released before it arrived: only after an error above
		return Reservation{}, errReleased
	case r.State == 4:
		return Reservation{State: OverBudget}, nil
	case r.State == 0:
		c := &Claim{store: s, key: k, token: token, again: again, id: Fingerprint([]byte(k.record), []byte(fp))}
		c.start(sent)
		return Reservation{State: Claimed, Claim: c}, nil
	case r.Fingerprint == nil || *r.Fingerprint != fp && !slices.Contains(earlier, *r.Fingerprint):
		return Reservation{State: Mismatch}, nil
	case r.State == 2:
		return Reservation{State: Done, Response: r.Response}, nil
	default:
		return Reservation{State: InFlight}, nil
	}
}

// reserve runs the reservation script, making it again (with the same token,
// which claims once) while its outcome is unknown: a connection that broke
// under it, or a server still loading its data, until ctx ends. A call that
// could not be sent (no connection to Redis can be opened) fails at once, as
// a lock acquisition does, instead of holding the request for the whole
// timeout. sent reports whether any call may have reached Redis; again
// whether one may still be on its way, its outcome unknown (its connection
// broke under it: its bytes may reach Redis after a later call's): a
// release of the claim then marks the token released, so that the call
// claims nothing when it arrives.
func (s *Store) reserve(ctx context.Context, k keys, fp, token string) (r generated.IdempotencyReserveResult, sent, again bool, err error) {
	sent, err = repeat(ctx, func() error {
		r, err = generated.IdempotencyReserve(ctx, s.client, k.record, k.usage, k.sizes, k.released(token), fp, token, s.claimTTL, s.budget, recordOverhead)
		if _, replied := rueidis.IsRedisErr(err); err != nil && !replied && !notSent(err) {
			again = true
		}
		return err
	})
	return r, sent, again, err
}

// repeat makes call, a script call that changes nothing twice, until Redis
// answers it or ctx ends, again while its outcome is unknown (a connection
// that broke under it, a server still loading its data). A call that could
// not be sent ends it at once, unless the connection's opening was canceled
// by another call's context. sent reports whether a call may have reached
// Redis.
func repeat(ctx context.Context, call func() error) (sent bool, err error) {
	backoff := 5 * time.Millisecond
	for {
		err = call()
		if err == nil {
			return true, nil
		}
		re, redisErr := rueidis.IsRedisErr(err)
		switch {
		case redisErr && !re.IsLoading():
			return true, err // Redis answered: the script ran, or was refused
		case redisErr: // LOADING: nothing ran, try again
		case notSent(err) && errors.Is(err, context.Canceled) && ctx.Err() == nil:
			// A connection whose opening another call's context canceled:
			// rueidis opens it once for every call waiting on it, with the
			// context of the first. Nothing ran and Redis may be fine: try
			// again on a new one.
		case notSent(err):
			return sent, err
		default:
			sent = true
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return sent, err
		case <-t.C:
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// notSent reports a call that never left this process: the connection to
// Redis could not be opened, or the client is closed.
func notSent(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial" || errors.Is(err, rueidis.ErrClosing)
}

// Claim is a running request's hold on its idempotency record. It is renewed
// in the background until Complete or Release. If it is lost before that
// (Redis says it is gone, or renewals fail until it could have expired),
// the contexts from Context end with cause ErrClaimLost, so the request can
// stop before a retry runs it a second time.
type Claim struct {
	store *Store
	key   keys
	token string
	again bool   // an attempt of its reservation may still be on its way (see reserve)
	id    string // see RequestID

	mu      sync.Mutex
	stopped bool
	lost    bool
	timer   *time.Timer // next renewal
	loss    *time.Timer // fires at lossAt
	lossAt  time.Time   // the last confirmed call's send time + claim TTL - margin
	cancels []context.CancelCauseFunc
}

// claimMargin is how long before the claim TTL, counted from when the last
// successful call was sent, the claim is presumed lost: room for the two
// clocks running at slightly different rates, as for a lock's lease.
func claimMargin(ttl time.Duration) time.Duration { return ttl/50 + 5*time.Millisecond }

// start arms renewal and the loss deadline of a claim whose reservation was
// sent at sent.
func (c *Claim) start(sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lossAt = c.deadline(sent)
	c.loss = time.AfterFunc(time.Until(c.lossAt), c.markLost)
	// Due a third of the claim TTL after the reservation was sent, as the
	// claim's TTL runs from then: a reservation made again after its reply
	// was lost may return long after.
	c.timer = time.AfterFunc(max(c.store.claimTTL/3-time.Since(sent), 0), c.renew)
}

func (c *Claim) deadline(sent time.Time) time.Time {
	return sent.Add(c.store.claimTTL - claimMargin(c.store.claimTTL))
}

// schedule arms the next renewal in d.
func (c *Claim) schedule(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.lost {
		return
	}
	c.timer = time.AfterFunc(d, c.renew)
}

// retrySoon is how soon a renewal that failed is tried again, as the lock
// watchdog does: a whole period later could be past the loss deadline (a
// renewal that timed out after a third of the claim TTL fails at two thirds),
// though Redis may answer again long before the claim expires.
func retrySoon(claimTTL time.Duration) time.Duration { return min(claimTTL/12, time.Second) }

func (c *Claim) renew() {
	ctx, cancel := context.WithTimeout(context.Background(), min(c.store.claimTTL/3, c.store.timeout))
	defer cancel()
	sent := time.Now()
	var ok int64
	err := c.store.unpanicked("renewing an idempotency claim", func() (err error) {
		ok, err = generated.IdempotencyRenew(ctx, c.store.client, c.key.record, c.key.usage, c.key.sizes, c.token, c.store.claimTTL)
		return err
	})
	switch {
	case err == nil && ok == 0:
		c.markLost() // claim gone: another request may hold the key now
		return
	case err == nil:
		c.mu.Lock()
		if !c.stopped && !c.lost {
			c.lossAt = c.deadline(sent)
			c.loss.Reset(time.Until(c.lossAt))
		}
		c.mu.Unlock()
		c.schedule(c.store.claimTTL / 3)
		return
	}
	// A Redis error: try again soon while the claim may still live (the loss
	// deadline ends it otherwise).
	c.schedule(retrySoon(c.store.claimTTL))
}

// markLost ends the claim's contexts with ErrClaimLost, unless the claim was
// completed or released first.
func (c *Claim) markLost() {
	c.mu.Lock()
	if c.stopped || c.lost {
		c.mu.Unlock()
		return
	}
	c.lost = true
	c.timer.Stop()
	cancels := c.cancels
	c.cancels = nil
	c.mu.Unlock()
	for _, cancel := range cancels {
		cancel(ErrClaimLost)
	}
}

// Lost reports whether the claim was lost before Complete or Release.
func (c *Claim) Lost() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

// Context returns a context derived from parent that ends with cause
// ErrClaimLost if the claim is lost, and the function that ends it (call it
// when the request is done). The middleware runs the handler under it, as
// the lock middleware runs it under the lock's context. It carries the
// request's RequestID.
func (c *Claim) Context(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.WithValue(parent, requestIDKey{}, c.id))
	c.mu.Lock()
	lost := c.lost
	if !lost && !c.stopped {
		c.cancels = append(c.cancels, cancel)
	}
	c.mu.Unlock()
	if lost {
		cancel(ErrClaimLost)
	}
	return ctx, func() { cancel(nil) }
}

type requestIDKey struct{}

// RequestID returns the identity of the idempotent request that ctx (a
// context from Claim.Context, or derived from it, such as a handler's under
// the middleware) runs: a hash of the store's prefix, the scope, the key and
// the request's fingerprint. It is the same for every retry of the request,
// across processes, and differs for any other request.
//
// A handler records it with the effects that outlive its process (in the
// same database transaction). If the process dies after them but before the
// response is stored, the claim expires and the retry runs again; finding its
// own RequestID on the effects, it can answer as the first run did instead of
// as a later, different request.
func RequestID(ctx context.Context) (string, bool) {
	if ctx == nil {
		return "", false // a nil context carries none, as in scriptlock.Fence
	}
	id, ok := ctx.Value(requestIDKey{}).(string)
	return id, ok
}

func (c *Claim) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	c.cancels = nil
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.loss != nil {
		c.loss.Stop()
	}
}

// Complete stores response for replay for the store's TTL. It reports false
// when the claim had already expired (nothing stored). response is sent
// without a copy, also by the background retries below: do not modify it
// after the call.
//
// When Redis does not answer (a dropped connection, a restart), the request
// has run all the same: Complete returns the error and keeps trying to store
// the response in the background until Redis answers, the claim could have
// expired or the store is closed. Meanwhile the key stays claimed, so a
// duplicate is answered "in flight", and once the response is stored it is
// replayed: the request never runs a second time because its response could
// not be stored at first. The claim is not renewed meanwhile (renewals fail
// in the same outage): it ends the claim TTL after its last renewal, so an
// outage from two thirds of the claim TTL on can leave the key free.
func (c *Claim) Complete(ctx context.Context, response []byte) (bool, error) {
	c.stop()
	complete := func(ctx context.Context) (int64, error) {
		return generated.IdempotencyComplete(ctx, c.store.client, c.key.record, c.key.usage, c.key.sizes, c.token, response, c.store.ttl, recordOverhead)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.store.timeout)
	defer cancel()
	var n int64
	_, err := repeat(ctx, func() (err error) {
		n, err = complete(ctx)
		return err
	})
	if err != nil {
		// Outcome unknown: store the response once Redis answers again (a
		// response stored meanwhile is left alone: the script is idempotent).
		// Releasing the claim instead would let a duplicate run the request
		// again.
		err = c.store.background(false, c.expiry(), err, func(ctx context.Context) error {
			_, err := complete(ctx)
			return err
		})
	}
	return n == 1, err
}

// expiry is the latest the claim may live in Redis: the claim TTL from when
// its last confirmed call was sent, plus the margin for clock drift. No call
// on the claim can succeed after it, so a retry stops there.
func (c *Claim) expiry() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lossAt.Add(2 * claimMargin(c.store.claimTTL))
}

// undo releases token's claim on rk in the background (see background),
// after a call that failed with err, until a claim TTL from now: a claim
// made by a reservation that failed may have been written only now.
func (s *Store) undo(k keys, token string, err error) error {
	return s.undoUntil(time.Now().Add(s.claimTTL), k, token, true, err)
}

// undoUntil is undo for a claim that cannot live past deadline; again as
// for release.
func (s *Store) undoUntil(deadline time.Time, k keys, token string, again bool, err error) error {
	return s.background(true, deadline, err, func(ctx context.Context) error {
		_, err := generated.IdempotencyRelease(ctx, s.client, k.record, k.usage, k.sizes, k.released(token), token, s.claimTTL, again)
		return err
	})
}

// errCallPanicked is the error of a call on a goroutine of the store's own
// whose client wrapper panicked (unpanicked).
var errCallPanicked = errors.New("idempotency: the call panicked (a client wrapper's panic, logged)")

// unpanicked runs call, a script call on a goroutine of the store's own (a
// claim's renewal on its timer's, a background retry), where a panic of
// the client (a wrapper's) has no caller to reach and crashed the process:
// it is returned as an error, and the call taken as one that failed
// (made again). It is logged (WithLogger): at ERROR with its stack the
// first time of its kind since a call last went through (newPanic), at
// DEBUG after that, as a client wrapper that panics at every call would
// log at each renewal and retry.
func (s *Store) unpanicked(what string, call func() error) (err error) {
	returned := false
	var v any
	var stack []byte
	func() {
		defer func() {
			// Not recover's value: under GODEBUG=panicnil=1 a panic(nil)
			// recovers as nil, and would pass for a call that went through.
			if !returned {
				// A panic, or runtime.Goexit, which recover does not stop.
				// The stack is taken here, where the panic's frames are
				// still on it.
				v, stack = recover(), debug.Stack()
			}
		}()
		err = call()
		returned = true
	}()
	if !returned {
		// Only a recovered panic comes this far: a Goexit ends the
		// goroutine, and is no panic to log.
		err = fmt.Errorf("%w: %v", errCallPanicked, v)
		n, news := s.newPanic(what, v)
		defer func() { _ = recover() }() // nor may a log handler's panic go on
		if news {
			s.log.Error("panic recovered", "in", what, "panic", v, "stack", string(stack))
		} else {
			s.log.Debug("panic recovered again", "in", what, "panic", v, "panics", n)
		}
		return err
	}
	if s.panics.Load() != 0 {
		s.panicMu.Lock()
		s.panics.Store(0)
		clear(s.panicSeen)
		s.panicMu.Unlock()
	}
	return err
}

// panicKinds bounds the kinds of panic logged at ERROR between two calls
// that went through: a wrapper whose panic names the key, or a count,
// still logs a bounded number.
const panicKinds = 8

// newPanic counts a panic of value v in what and reports n, the panics
// since a call last went through, and whether it is news: the first of its
// kind (what, v's type and text) since then, up to panicKinds of them. A
// count alone logged a panic of another kind at DEBUG, behind the first.
func (s *Store) newPanic(what string, v any) (n int64, news bool) {
	kind := fmt.Sprintf("%s: %T %v", what, v, v)
	s.panicMu.Lock()
	defer s.panicMu.Unlock()
	n = s.panics.Add(1)
	if s.panicSeen[kind] || len(s.panicSeen) >= panicKinds {
		return n, false
	}
	if s.panicSeen == nil {
		s.panicSeen = map[string]bool{}
	}
	s.panicSeen[kind] = true
	return n, true
}

// background runs op, an idempotent script call on a claim, in the
// background, retrying until Redis answers, deadline has passed (the claim
// is gone by then anyway, so the retry gives its slot back) or the store is
// closed. The first attempt can
// fail like the call it follows up (a new connection cannot be set up while
// the server stalls), so one attempt is not enough; the request does not
// wait for it.
//
// It returns err, the failed call's error, wrapped with ErrRetryDropped when
// op is not retried because maxRetries are running (half of them for an
// undo, whose loss only blocks the key until the claim TTL).
func (s *Store) background(undo bool, deadline time.Time, err error, op func(context.Context) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !time.Now().Before(deadline) {
		return err
	}
	limit := s.maxRetries
	if undo {
		limit /= 2
	}
	if s.retries >= limit {
		return fmt.Errorf("%w (%w)", err, ErrRetryDropped)
	}
	s.retries++
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer func() {
			s.mu.Lock()
			s.retries--
			s.mu.Unlock()
		}()
		backoff := 50 * time.Millisecond
		for {
			ctx, cancel := context.WithTimeout(s.stop, s.timeout)
			ctx, cancelDeadline := context.WithDeadline(ctx, deadline)
			err := s.unpanicked("retrying an idempotency call in the background", func() error { return op(ctx) })
			cancelDeadline()
			cancel()
			if err == nil || !time.Now().Before(deadline) {
				return
			}
			t := time.NewTimer(min(backoff, time.Until(deadline)))
			select {
			case <-s.stop.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, time.Second)
		}
	}()
	return err
}

// Close stops the background releases of reservations that failed (see
// Reserve) and the background stores of responses (see Complete), and waits
// for them. Records are left to expire: a claim whose response was not
// stored yet ends with its claim TTL. The store must not be used after Close.
func (s *Store) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.bg.Wait()
}

// release drops the claim of token on rk if it is still running, bounded by
// the store timeout whatever ctx says; again: an attempt of the token's
// reservation may still be on its way, which must claim nothing after it.
func (s *Store) release(ctx context.Context, k keys, token string, again bool) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	_, err := repeat(ctx, func() error {
		_, err := generated.IdempotencyRelease(ctx, s.client, k.record, k.usage, k.sizes, k.released(token), token, s.claimTTL, again)
		return err
	})
	return err
}

// Release drops the claim so the key can be used again. When Redis does not
// answer, it keeps trying in the background (see Close).
func (c *Claim) Release(ctx context.Context) error {
	c.stop()
	err := c.store.release(ctx, c.key, c.token, c.again)
	if err != nil {
		err = c.store.undoUntil(c.expiry(), c.key, c.token, c.again, err) // keep trying, so the key does not stay "in flight"
	}
	return err
}

// ParseKey is ParseKey with the store's key length limit.
func (s *Store) ParseKey(v string) (string, error) {
	return ParseKey(v, s.maxKeyLen)
}
