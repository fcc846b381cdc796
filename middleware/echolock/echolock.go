// Package echolock is Echo middleware that runs each request under a
// distributed lock named after a value taken from the request (an order id, an
// account number, ...).
//
// It comes for Echo v4 (github.com/scriptlock/scriptlock/middleware/echolock)
// and for Echo v5 (github.com/scriptlock/scriptlock/middleware/echolock/v5),
// with the same API, configuration and answers; on v5 a handler and the
// config's functions take *echo.Context.
//
//	e.POST("/orders/:id/pay", pay, echolock.Lock(client)) // client: *scriptlock.Client
//
//	e.POST("/recharge", recharge, echolock.LockWithConfig(echolock.LockConfig{
//		KeyLookup: "header:X-Account-Id,json:account.id",
//		Client:    client,
//		Fair:      true,
//		Wait:      2 * time.Second,
//	}))
//
// LockConfig.Lock plugs in any other primitive with the scriptlock.Locker shape.
//
// The handler's request context is the lock's context: it is cancelled when
// the lock is lost, scriptlock.Fence gives the fencing token, and code under
// the handler that locks the same key with the request context re-enters the
// lock instead of blocking on it.
//
// Outcomes: a missing or invalid key answers 400 (413 for a json: lookup on a
// body over MaxBodyBytes, a form: lookup on a form over net/http's limits); a lock still held by someone else after Wait
// answers 409 (LockConfig.ContendedStatus, e.g. http.StatusLocked) with
// Retry-After (LockConfig.RetryAfter, 1 s by default); Redis unreachable answers 503 unless FailOpen; a lock lost
// while the handler ran answers 503 if the handler had not written a response
// (nor taken the connection over, as a WebSocket upgrade does). Every 503
// carries Retry-After (RetryAfter).
// The lock is released after the handler in every case, panics included.
//
// # Idempotency-Key
//
// Idempotency and IdempotencyWithConfig replay a completed request's stored
// response to a retry that carries the same Idempotency-Key header, through an
// idempotency.Store. Put them in front of the lock (a replay needs no lock):
//
//	store, err := idempotency.NewStore(rc) // rc: a rueidis.Client; store.Close() on shutdown
//	e.POST("/orders/:id/recharge", recharge,
//		echolock.Idempotency(store),
//		echolock.Lock(client))
//
// A duplicate while the first request runs answers 409; the same key with
// another method, route (in Echo v4 the same path on another virtual host,
// e.Host, or on a host the default router serves, is another route; Echo
// v5's virtual hosts are Echo instances of their own, told apart by naming
// Host in IdempotencyConfig.FingerprintHeaders), request URI
// (path and query as sent) or body
// answers 422. Records are scoped to the
// caller's credentials (CredentialScope: Authorization, cookies and TLS
// client certificate, hashed), so one client never receives another's
// response; only final answers are stored (FinalStatus), never the lock
// middleware's own 409 or 503.
package echolock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// Skipper reports whether the middleware should be skipped for a request.
type Skipper func(c echo.Context) bool

// DefaultSkipper never skips.
func DefaultSkipper(echo.Context) bool { return false }

// LockConfig configures the lock middleware.
type LockConfig struct {
	// Skipper skips the middleware for a request when it returns true.
	Skipper Skipper

	// KeyLookup lists where the key is looked for, first match wins:
	// "param:<name>", "header:<name>", "query:<name>", "form:<name>",
	// "cookie:<name>", "json:<field>" or "json:<a.b.c>" (a string or number in
	// a JSON body; the body is put back for the handler). Default "param:id".
	// A source without the key yields nothing and the next one is tried; an
	// invalid value stops the lookup (400), as does a header, query, form or
	// cookie key sent more than once with different values ("id=1; id=2"),
	// which a handler may read either way. "header:Host" is the request's
	// host (Request.Host: Go keeps it out of the header map), in lower case
	// and without a fully qualified name's final dot, an empty port, port 80
	// or 443 or a port's leading zeros.
	// A json: source reads a JSON body
	// whatever its Content-Type; a body that is not JSON (a form) yields
	// nothing unless its Content-Type declares JSON (then it is invalid), and
	// when no later source yields a key either, the key is invalid (400). A
	// body declared a form or XML, which Echo's Bind reads as that, that is
	// JSON naming a key and also a form with values or XML with elements is
	// invalid (400): it could name one key for the lock and another for the
	// handler. JSON that is no such form (curl -d sends JSON as a form)
	// keeps its key. A form: key of a request whose body is declared JSON
	// or XML comes from the query string (such a body is no form), while
	// Bind reads the body: one naming another key (a JSON member, an XML
	// element under the root or a root attribute, named like the key in any
	// case) is invalid (400).
	// A "param:" value is the decoded path segment whatever its spelling:
	// Echo hands a parameter as sent when the path is not in its default
	// encoding ("/orders/%31%32%33"), and the middleware then decodes it
	// (url.PathUnescape), so that it locks "123" as "/orders/123" does; a
	// parameter that does not decode is an invalid key (400).
	// A source that no request can carry (a header: or cookie: name that is
	// no token, a json: path with an empty member name) fails ToMiddleware
	// with ErrConfig.
	KeyLookup string
	// KeyFunc, when set, is used instead of KeyLookup. Returning "" with a nil
	// error means the key is missing. An error that wraps the request
	// context's error once it has ended (the client went away) is reported
	// as canceled and answered 503, as a request canceled while waiting for
	// its lock is; any other error is an invalid key (400).
	KeyFunc func(c echo.Context) (string, error)
	// KeyPrefix is prepended to the escaped key. Default DefaultKeyPrefix.
	// Braces in it must make a complete hash tag ("{orders}:"), which then
	// puts every lock of the middleware in one Redis Cluster slot; others
	// fail ToMiddleware, as does a prefix that, after the Client's key
	// prefix, names another lock's companion keys ("redisson_lock_token:"),
	// under which no lock may be taken, or makes integer keys name them
	// ("orders:rwlock_timeout:", a read hold's lease key with "42"; so
	// "timeout:" after a Client's key prefix "orders:rwlock_"), also under a
	// Lock of such a Client.
	KeyPrefix string
	// MaxKeyLen is the longest key accepted, in bytes. Default 256.
	MaxKeyLen int
	// MaxBodyBytes bounds how much of the body a json: lookup, or a form:
	// lookup of a body declared JSON or XML, reads. Default 1 MiB.
	MaxBodyBytes int64

	// Lock returns the lock for a key. When nil, Client is used: its Mutex
	// (FairMutex with Fair) with Lease. An error errors.Is
	// scriptlock.ErrInvalidName answers 400; any other answers 503.
	// ToMiddleware calls it with two names under KeyPrefix ("probe" and "0"
	// after it), taking no lock, and fails if it refuses them as invalid
	// names while taking them without KeyPrefix (a Client's key prefix
	// before KeyPrefix naming companion keys): every request, or every one
	// with an integer key, would be answered 400.
	Lock func(key string) (scriptlock.Locker, error)
	// Client provides the locks when Lock is nil.
	Client *scriptlock.Client
	// Lease is the locks' lease when built from Client; 0 renews them with
	// the watchdog while the handler runs.
	Lease time.Duration
	// Fair takes FairMutex locks from Client: waiting requests are served in
	// arrival order.
	Fair bool
	// Wait is how long to wait for a contended lock; 0 makes a single attempt.
	Wait time.Duration

	// RetryAfter is the Retry-After suggested when Wait runs out (default
	// 1 s, sent in whole seconds). It is capped by Wait, and by the holder's
	// remaining lease when that is an explicit lease shorter still. Every 503
	// of the middleware (Redis unavailable, a wait the request's context
	// ended, a lost lock) carries it uncapped.
	RetryAfter time.Duration
	// ContendedStatus is the status answered when Wait runs out. Default 409
	// (the answer the Idempotency-Key draft gives a request still in flight);
	// http.StatusLocked (423) is the common alternative. It must be a 4xx or
	// 5xx status; others fail ToMiddleware.
	ContendedStatus int
	// FailOpen runs the handler without the lock when Redis is unreachable
	// instead of answering 503. Mutual exclusion is then not guaranteed. A
	// lock refused for what it is (its name held by another kind of lock,
	// invalid lock options, a closed client) or refused to the client's
	// Redis user (NOPERM: an ACL without the scripts' commands, or without
	// a command, key or channel a script uses), and any
	// other error reply of a reachable Redis that does not clear by itself
	// (ERR unknown command from a proxy, a script error), still answers 503;
	// a Redis loading, failing over, busy or out of memory fails open.
	FailOpen bool
	// ErrorHandler, when set, gets every error the middleware would return (an
	// *echo.HTTPError with the Code and Message of ErrKeyMissing,
	// ErrKeyInvalid, ErrBodyTooLarge, ErrContended, ErrUnavailable or
	// ErrLockLost, wrapping the cause, which errors.Unwrap returns: the key's defect,
	// scriptlock.ErrNotAcquired, scriptlock.ErrLockLost or a Redis error) and
	// returns what to return instead.
	ErrorHandler func(c echo.Context, err error) error
	// OnOutcome, when set, gets the outcome of every request the middleware
	// does not skip (locked, contended, key_invalid, redis_down, fail_open,
	// canceled, lock_lost).
	OnOutcome scriptlock.RequestOutcomeFunc
	// Logger receives failed releases and fail-open decisions. Default slog.Default().
	Logger *slog.Logger
}

// DefaultLockConfig is the configuration Lock starts from.
var DefaultLockConfig = LockConfig{
	Skipper:         DefaultSkipper,
	KeyLookup:       "param:id",
	KeyPrefix:       core.DefaultKeyPrefix,
	MaxKeyLen:       core.DefaultMaxKeyLen,
	MaxBodyBytes:    1 << 20,
	ContendedStatus: http.StatusConflict,
	RetryAfter:      core.DefaultRetryAfter,
}

// DefaultKeyPrefix is the prefix of lock keys unless LockConfig.KeyPrefix
// says otherwise. grpclock uses the same, so an HTTP and a gRPC endpoint
// locking the same order id exclude each other.
const DefaultKeyPrefix = core.DefaultKeyPrefix

// lockAnswerKey marks, in the echo.Context, an answer of the lock middleware
// itself, which the Idempotency middleware never stores.
const lockAnswerKey = "scriptlock.echolock.answer"

// scopeKey holds, in the echo.Context, the request's scope for
// core.Acquire: lock middlewares in its chain share the owner, but a
// request the handler serves through the router with its context (a new
// echo.Context, its store empty) gets one of its own.
const scopeKey = "scriptlock.echolock.scope"

// scope is one request's (not zero-sized: distinct values have distinct
// addresses).
type scope struct{ _ byte }

func requestScope(c echo.Context) *scope {
	s, _ := c.Get(scopeKey).(*scope)
	if s == nil {
		s = new(scope)
		c.Set(scopeKey, s)
	}
	return s
}

// Errors answered by the middleware; the error returned wraps the cause.
var (
	ErrKeyMissing = echo.NewHTTPError(http.StatusBadRequest, "lock key missing")
	ErrKeyInvalid = echo.NewHTTPError(http.StatusBadRequest, "lock key invalid")
	// ErrBodyTooLarge: a json: key lookup met a body over MaxBodyBytes, a
	// form: lookup a form over net/http's limits (10 MB url-encoded), or
	// the body was over a limit set in front of the middleware.
	ErrBodyTooLarge = echo.NewHTTPError(http.StatusRequestEntityTooLarge, "request body too large")
	ErrContended    = echo.NewHTTPError(http.StatusConflict, "resource is locked by another request")
	ErrUnavailable  = echo.NewHTTPError(http.StatusServiceUnavailable, "lock service unavailable")
	ErrLockLost     = echo.NewHTTPError(http.StatusServiceUnavailable, "lock lost while handling the request")
)

// Lock returns the middleware with DefaultLockConfig, locking c's Mutex named
// after the "id" path parameter, renewed by the watchdog while the handler runs.
func Lock(c *scriptlock.Client) echo.MiddlewareFunc {
	cfg := DefaultLockConfig
	cfg.Client = c
	return LockWithConfig(cfg)
}

// LockWithConfig returns the middleware for config; it panics on an invalid config.
func LockWithConfig(config LockConfig) echo.MiddlewareFunc {
	mw, err := config.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
}

// ToMiddleware validates config, fills defaults, and returns the middleware.
func (config LockConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	fromClient := config.Lock == nil
	if fromClient {
		if config.Client == nil {
			return nil, errors.New("echolock: LockConfig.Lock or LockConfig.Client is required")
		}
		var opts []scriptlock.LockOption
		if config.Lease != 0 {
			opts = append(opts, scriptlock.WithLease(config.Lease))
		}
		c := config.Client
		if config.Fair {
			config.Lock = func(key string) (scriptlock.Locker, error) { return c.FairMutex(key, opts...) }
		} else {
			config.Lock = func(key string) (scriptlock.Locker, error) { return c.Mutex(key, opts...) }
		}
	}
	if config.Skipper == nil {
		config.Skipper = DefaultLockConfig.Skipper
	}
	if config.KeyLookup == "" {
		config.KeyLookup = DefaultLockConfig.KeyLookup
	}
	if config.KeyPrefix == "" {
		config.KeyPrefix = DefaultLockConfig.KeyPrefix
	}
	if fromClient {
		// Bad options fail here, at startup, not on every request; so does
		// a prefix that, after the Client's own, makes every lock name
		// invalid (another lock's companion key, "redisson_lock_token:"),
		// or every integer key's ("orders:rwlock_" and "timeout:", a read
		// hold's lease key with "42").
		for _, probe := range []string{"probe", "0"} {
			if _, err := config.Lock(config.KeyPrefix + probe); err != nil {
				return nil, fmt.Errorf("echolock: %w", err)
			}
		}
	} else if err := core.CheckLockPrefix(config.Lock, config.KeyPrefix); err != nil {
		// A Lock factory may put a Client's key prefix first too.
		return nil, fmt.Errorf("echolock: %w", err)
	}
	if config.MaxKeyLen <= 0 {
		config.MaxKeyLen = DefaultLockConfig.MaxKeyLen
	}
	if config.MaxBodyBytes <= 0 {
		config.MaxBodyBytes = DefaultLockConfig.MaxBodyBytes
	}
	// A json: lookup reads one byte past the limit to tell a body over it;
	// at math.MaxInt64 that would overflow and read nothing.
	config.MaxBodyBytes = min(config.MaxBodyBytes, math.MaxInt64-1)
	if config.RetryAfter <= 0 {
		config.RetryAfter = DefaultLockConfig.RetryAfter
	}
	if config.ContendedStatus == 0 {
		config.ContendedStatus = DefaultLockConfig.ContendedStatus
	}
	if config.Wait < 0 {
		return nil, fmt.Errorf("echolock: negative Wait %s", config.Wait)
	}
	// Checked here: net/http panics on a code outside 100-999 when the first
	// contended request is answered, and a success would tell the client its
	// request ran.
	if config.ContendedStatus < 400 || config.ContendedStatus > 599 {
		return nil, fmt.Errorf("echolock: ContendedStatus %d is not a 4xx or 5xx status", config.ContendedStatus)
	}
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	if err := core.CheckPrefix(config.KeyPrefix, config.MaxKeyLen, scriptlock.MaxNameLen); err != nil {
		return nil, fmt.Errorf("echolock: %w", err)
	}
	keyFunc := config.KeyFunc
	if keyFunc == nil {
		extractors, err := parseLookup(config.KeyLookup, config.MaxBodyBytes)
		if err != nil {
			return nil, err
		}
		keyFunc = func(c echo.Context) (string, error) { return lookupKey(c, extractors) }
	}
	fail := func(c echo.Context, base *echo.HTTPError, cause error) error {
		// Contention, a lost lock and Redis errors are transient, and a bad
		// key is refused before the handler runs: the Idempotency middleware
		// stores none of them, so bad input leaves nothing in Redis.
		c.Set(lockAnswerKey, true)
		if base == ErrUnavailable || base == ErrLockLost {
			// A 503 says when to try again (RFC 9110), or clients and
			// proxies may give up or retry at once: also one for a wait
			// a server-side deadline ended, or for a lost lock.
			c.Response().Header().Set("Retry-After", strconv.FormatInt(core.RetryAfterSeconds(config.RetryAfter), 10))
		}
		he := withInternal(base, cause)
		if config.ErrorHandler != nil {
			return config.ErrorHandler(c, he)
		}
		return he
	}
	// proceed is called as the request goes on to the handler. A middleware
	// between Idempotency and this one may have called the chain again on
	// the echo.Context (a retry) after an answer of a lock middleware: that
	// answer, and its Retry-After, no longer describe the request, whose
	// answer is now the handler's to store.
	proceed := func(c echo.Context) {
		if c.Get(lockAnswerKey) != nil {
			c.Set(lockAnswerKey, nil)
			c.Response().Header().Del("Retry-After")
		}
	}

	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if config.Skipper(c) {
				return next(c)
			}
			raw, err := keyFunc(c)
			if err == nil && raw == "" {
				err = core.ErrKeyMissing
			}
			var key string
			if err == nil {
				key, err = core.Key(config.KeyPrefix, raw, config.MaxKeyLen)
			}
			if err != nil && core.KeyCanceled(c.Request().Context(), err) {
				// The client went away while the key was looked up: no bad
				// key, answered as a request canceled while waiting is.
				config.OnOutcome.Report(c.Request().Context(), scriptlock.RequestCanceled)
				return fail(c, ErrUnavailable, err)
			}
			if err != nil {
				config.OnOutcome.Report(c.Request().Context(), scriptlock.RequestKeyInvalid)
				switch {
				case errors.Is(err, core.ErrKeyMissing):
					return fail(c, ErrKeyMissing, err)
				case errors.Is(err, errBodyTooLarge) || bodyTooLarge(err):
					return fail(c, ErrBodyTooLarge, err)
				}
				return fail(c, ErrKeyInvalid, err)
			}

			req := c.Request()
			ctx := req.Context()
			lctx, release, err := core.Acquire(ctx, config.Lock, key, config.Wait, requestScope(c))
			if err != nil {
				switch f, remaining := core.ClassifyLockError(ctx, err); f {
				case core.Invalid:
					config.OnOutcome.Report(ctx, scriptlock.RequestKeyInvalid)
					return fail(c, ErrKeyInvalid, err)
				case core.Contended:
					retry := core.RetryHint(config.RetryAfter, config.Wait, remaining)
					c.Response().Header().Set("Retry-After", strconv.FormatInt(core.RetryAfterSeconds(retry), 10))
					config.OnOutcome.Report(ctx, scriptlock.RequestContended)
					he := *ErrContended
					he.Code = config.ContendedStatus
					return fail(c, &he, err)
				case core.Canceled:
					config.OnOutcome.Report(ctx, scriptlock.RequestCanceled)
					return fail(c, ErrUnavailable, err)
				default:
					if config.FailOpen && core.MayFailOpen(err) {
						config.OnOutcome.Report(ctx, scriptlock.RequestFailOpen)
						config.Logger.WarnContext(ctx, "echolock: lock unavailable, running without it (fail open)", "key", key, "err", err)
						proceed(c)
						return next(c)
					}
					config.OnOutcome.Report(ctx, scriptlock.RequestRedisDown)
					config.Logger.ErrorContext(ctx, "echolock: lock service unavailable", "key", key, "err", err)
					return fail(c, ErrUnavailable, err)
				}
			}
			defer func() {
				if err := release(); err != nil && !errors.Is(err, scriptlock.ErrNotHeld) {
					config.Logger.WarnContext(ctx, "echolock: release failed", "key", key, "err", err)
				}
			}()
			proceed(c)
			c.SetRequest(req.WithContext(lctx))
			// A handler may answer through the writer under Echo's response itself
			// (http.ServeContent, a wrapped http.Handler): note what it sent
			// there, so that a lock lost after the answer does not add an
			// error body to it, or release an Idempotency key whose answer
			// the client already has.
			tw := &commitTracker{}
			res, unwrap := wrapWriter(c, func(w http.ResponseWriter) http.ResponseWriter {
				tw.ResponseWriter = w
				return tw
			})
			returned := false
			defer func() {
				if !returned {
					// The handler panicked: its request held the lock
					// all the same, and OnOutcome gets every request.
					config.OnOutcome.Report(ctx, core.HeldOutcome(lctx))
				}
			}()
			herr := next(c)
			returned = true
			switch {
			case tw.status != 0:
				res.Committed, res.Status = true, tw.status
			case res.Committed && res.Status < http.StatusOK && res.Status != http.StatusSwitchingProtocols:
				// Only 103 Early Hints went through echo.Response, which
				// takes it for the answer: the answer has not begun.
				res.Committed = false
			}
			unwrap()
			c.SetRequest(req)
			config.OnOutcome.Report(ctx, core.HeldOutcome(lctx))
			// A hijacked connection (a WebSocket) carries the handler's
			// answer: no 503 is written on a connection Echo no longer owns.
			if core.LockLost(lctx) && !res.Committed && !tw.hijacked {
				if herr == nil {
					herr = context.Cause(lctx)
				} else if _, ok := herr.(*echo.HTTPError); ok {
					// Echo v4's error handler answers with an *HTTPError
					// found directly in Internal; keep the handler's error as
					// the cause without letting it replace the 503.
					herr = fmt.Errorf("handler: %w", herr)
				}
				return fail(c, ErrLockLost, herr)
			}
			return herr
		}
	}, nil
}

// commitTracker notes the final status written to the underlying writer.
type commitTracker struct {
	http.ResponseWriter
	status   int
	hijacked bool // the handler took the connection over
}

func (w *commitTracker) WriteHeader(code int) {
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *commitTracker) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush before any status sends the headers with 200 (net/http does so): the
// answer has begun.
func (w *commitTracker) Flush() {
	if http.NewResponseController(w.ResponseWriter).Flush() == nil && w.status == 0 {
		w.status = http.StatusOK
	}
}

func (w *commitTracker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, rw, err
}

func (w *commitTracker) Unwrap() http.ResponseWriter { return w.ResponseWriter }
