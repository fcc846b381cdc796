package grpclock

import (
	"log/slog"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

type options struct {
	methods    map[string]KeySource
	all        *KeySource
	prefix     string
	maxKeyLen  int
	wait       time.Duration
	failOpen   bool
	retryAfter time.Duration
	logger     *slog.Logger
	outcome    scriptlock.RequestOutcomeFunc
}

var defaultOptions = options{
	prefix:     core.DefaultKeyPrefix,
	maxKeyLen:  core.DefaultMaxKeyLen,
	retryAfter: core.DefaultRetryAfter,
}

// DefaultKeyPrefix is the prefix of lock keys unless WithKeyPrefix says
// otherwise. echolock uses the same, so an HTTP and a gRPC endpoint locking
// the same order id exclude each other.
const DefaultKeyPrefix = core.DefaultKeyPrefix

// Option configures the interceptors.
type Option func(*options)

// WithMethod locks calls of fullMethod ("/pkg.Service/Method") on the key
// found by key. Methods not configured pass through untouched unless
// WithAllMethods is given. A fullMethod not of that form ("Pay",
// "pkg.Service/Method") makes the interceptor constructors panic: no call
// would match it, and the method meant would run unlocked.
func WithMethod(fullMethod string, key KeySource) Option {
	return func(o *options) {
		if o.methods == nil {
			o.methods = map[string]KeySource{}
		}
		o.methods[fullMethod] = key
	}
}

// WithAllMethods locks every method not configured by WithMethod on key.
// To lock a dynamic subset instead, wrap the interceptor in
// go-grpc-middleware's selector.UnaryServerInterceptor with WithAllMethods.
func WithAllMethods(key KeySource) Option {
	return func(o *options) { o.all = &key }
}

// WithKeyPrefix sets the prefix of lock keys (default DefaultKeyPrefix).
// Braces in it must make a complete hash tag ("{orders}:"), which then puts
// every lock of the interceptor in one Redis Cluster slot; others make the
// interceptor constructors panic, as does a prefix that names another lock's
// companion keys ("redisson_lock_token:"), under which no lock may be taken,
// or makes integer keys name them ("orders:rwlock_timeout:", a read hold's
// lease key with "42"). So does one that does so after the key prefix of the
// LockFunc's Client ("timeout:" under Mutexes of a Client whose key prefix is
// "orders:rwlock_"; "sc:" under one whose key prefix is "redisson_").
func WithKeyPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithMaxKeyLen sets the longest request key accepted, in bytes (default 256).
func WithMaxKeyLen(n int) Option { return func(o *options) { o.maxKeyLen = n } }

// WithWait sets how long a call waits for a contended lock (default 0: a
// single attempt, then Aborted).
func WithWait(d time.Duration) Option { return func(o *options) { o.wait = d } }

// WithRetryAfter sets the retry delay suggested (RetryInfo) to a call that
// found its lock held (default 1 s). It is capped by the wait, and by the
// holder's remaining lease when that is an explicit lease shorter still. A
// call answered Unavailable (Redis unreachable) or Aborted for a lost lock
// gets it as it is.
func WithRetryAfter(d time.Duration) Option { return func(o *options) { o.retryAfter = d } }

// WithFailOpen runs handlers without the lock when Redis is unreachable,
// instead of failing with Unavailable. Mutual exclusion is then not guaranteed.
// A lock refused for what it is (its name held by another kind of lock,
// invalid lock options, a closed client) or refused to the client's Redis
// user (NOPERM: an ACL without the scripts' commands, or without a
// command, key or channel a script uses), and any other error
// reply of a reachable Redis that does not clear by itself (ERR unknown
// command from a proxy, a script error), still fails with Unavailable; a
// Redis loading, failing over, busy or out of memory fails open.
func WithFailOpen(on bool) Option { return func(o *options) { o.failOpen = on } }

// WithOutcome reports the outcome of every call the interceptor locks
// (locked, contended, key_invalid, redis_down, fail_open, canceled,
// lock_lost) to f.
func WithOutcome(f scriptlock.RequestOutcomeFunc) Option { return func(o *options) { o.outcome = f } }

// WithLogger sets the logger for failed releases, fail-open decisions and
// the panics of a locked stream's calls beneath SendMsg and RecvMsg, with
// the stack where they were raised (default slog.Default()). Those panics
// are logged on a goroutine of grpclock's, where a record whose handler
// panics is dropped.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

func evaluateOptions(opts []Option) *options {
	o := defaultOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if o.prefix == "" {
		o.prefix = core.DefaultKeyPrefix
	}
	if o.maxKeyLen <= 0 {
		o.maxKeyLen = core.DefaultMaxKeyLen
	}
	if o.retryAfter <= 0 {
		o.retryAfter = core.DefaultRetryAfter
	}
	return &o
}

// LockFunc returns the lock guarding one call key (already prefixed and
// escaped). Any primitive with the scriptlock.Locker shape plugs in.
// An error errors.Is scriptlock.ErrInvalidName answers InvalidArgument; any
// other answers Unavailable. The interceptor constructors call it with two
// names under the key prefix ("probe" and "0" after it), taking no lock, and
// panic if it refuses them as invalid names while taking them without the
// prefix: every call (or every call with an integer key) would be refused.
type LockFunc func(key string) (scriptlock.Locker, error)

// Mutexes returns a LockFunc handing out c's Mutex handles, with opts applied
// to each (scriptlock.WithLease(d) for a lease that expires on its own; none
// for watchdog renewal while the call runs). It panics if opts are invalid,
// as the interceptors do on invalid options.
func Mutexes(c *scriptlock.Client, opts ...scriptlock.LockOption) LockFunc {
	mustClient(c)
	mustValid(c.Mutex("probe", opts...))
	return func(key string) (scriptlock.Locker, error) { return c.Mutex(key, opts...) }
}

// FairMutexes is Mutexes with FairMutex handles: contending calls get the
// lock in arrival order.
func FairMutexes(c *scriptlock.Client, opts ...scriptlock.LockOption) LockFunc {
	mustClient(c)
	mustValid(c.FairMutex("probe", opts...))
	return func(key string) (scriptlock.Locker, error) { return c.FairMutex(key, opts...) }
}

// mustClient panics on a nil client here, at startup, with a message that
// says so, rather than with a nil dereference inside scriptlock.
func mustClient(c *scriptlock.Client) {
	if c == nil {
		panic("grpclock: nil *scriptlock.Client")
	}
}

func mustValid[L any](_ L, err error) {
	if err != nil {
		panic("grpclock: " + err.Error())
	}
}
