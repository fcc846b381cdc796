package grpclock

import (
	"log/slog"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware"
)

type options struct {
	methods   map[string]KeySource
	all       *KeySource
	prefix    string
	maxKeyLen int
	wait      time.Duration
	failOpen  bool
	logger    *slog.Logger
	outcome   scriptlock.RequestOutcomeFunc
}

var defaultOptions = options{
	prefix:    middleware.DefaultKeyPrefix,
	maxKeyLen: middleware.DefaultMaxKeyLen,
}

// Option configures the interceptors.
type Option func(*options)

// WithMethod locks calls of fullMethod ("/pkg.Service/Method") on the key
// found by key. Methods not configured pass through untouched unless
// WithAllMethods is given.
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

// WithKeyPrefix sets the prefix of lock keys (default middleware.DefaultKeyPrefix).
func WithKeyPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithMaxKeyLen sets the longest request key accepted, in bytes (default 256).
func WithMaxKeyLen(n int) Option { return func(o *options) { o.maxKeyLen = n } }

// WithWait sets how long a call waits for a contended lock (default 0: a
// single attempt, then Aborted).
func WithWait(d time.Duration) Option { return func(o *options) { o.wait = d } }

// WithFailOpen runs handlers without the lock when Redis is unreachable,
// instead of failing with Unavailable. Mutual exclusion is then not guaranteed.
func WithFailOpen(on bool) Option { return func(o *options) { o.failOpen = on } }

// WithLogger sets the logger for failed releases and fail-open decisions
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithOutcome reports the outcome of every call the interceptor locks
// (locked, contended, key_invalid, redis_down, fail_open, canceled,
// lock_lost) to f.
func WithOutcome(f scriptlock.RequestOutcomeFunc) Option { return func(o *options) { o.outcome = f } }

func evaluateOptions(opts []Option) *options {
	o := defaultOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if o.prefix == "" {
		o.prefix = middleware.DefaultKeyPrefix
	}
	if o.maxKeyLen <= 0 {
		o.maxKeyLen = middleware.DefaultMaxKeyLen
	}
	return &o
}
