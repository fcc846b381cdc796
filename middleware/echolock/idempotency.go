package echolock

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"net/textproto"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// HeaderIdempotencyKey is the request header carrying the key.
const HeaderIdempotencyKey = "Idempotency-Key"

// HeaderIdempotentReplayed is set to "true" on replayed responses.
const HeaderIdempotentReplayed = "Idempotent-Replayed"

// IdempotencyConfig configures the Idempotency-Key middleware.
type IdempotencyConfig struct {
	// Skipper skips the middleware for a request when it returns true.
	Skipper Skipper
	// Store keeps the records. Required.
	Store *idempotency.Store
	// Header names the key header (default "Idempotency-Key"). It must be a
	// valid header field name; ToMiddleware fails otherwise (ErrConfig).
	Header string
	// Required answers 400 when the header is missing; otherwise such requests
	// run without idempotency.
	Required bool
	// Scope returns the namespace of a request's keys: a stored response is
	// replayed only to requests of the same scope. Default CredentialScope:
	// a hash of the Authorization header, cookies and TLS client
	// certificate, so a caller never sees
	// another caller's responses and requests without credentials share one
	// anonymous scope. Return the authenticated account or tenant instead
	// when credentials change between retries (rotating tokens, tracking
	// cookies); Unscoped opts into one namespace shared by every client.
	Scope func(c echo.Context) string
	// FingerprintHeaders names request headers that change what a request
	// means (a currency, a tenant, a lock key taken from a header): their
	// values count in the request's fingerprint with method, route, URI and
	// body, so the same key with another value answers 422 like another body.
	// An absent header counts as absent, not as empty. "Host" is the
	// request's host (Go keeps it out of the header map). Names must be
	// valid header field names; ToMiddleware fails otherwise (ErrConfig). Records stored
	// before a change of this list do not match requests after it (422).
	FingerprintHeaders []string
	// MaxBodyBytes bounds the request body read for the fingerprint (default
	// 1 MiB); larger requests answer 413.
	MaxBodyBytes int64
	// MaxResponseBytes bounds the stored response body (default 1 MiB). A
	// larger response is sent normally but not stored: its key is marked used,
	// and duplicates answer 409 (the request is neither run again nor replayed).
	MaxResponseBytes int
	// MaxReplayDecodedBytes bounds the body of a replay decoded from a
	// gzip-compressed stored answer for a retry whose Accept-Encoding does
	// not take gzip (default 16 MiB): MaxResponseBytes bounds the compressed
	// bytes, which may decode to a thousand times as many. A stored answer
	// that decodes past it is not replayed to that retry: it answers 406,
	// asking for gzip; a retry that takes gzip gets the answer as stored.
	MaxReplayDecodedBytes int64
	// StoredHeaders lists the response headers stored and replayed (default
	// Content-Type, Content-Encoding, Content-Language, Content-Location,
	// Content-Disposition (Echo's c.Attachment and c.Inline: the file's
	// name), Location, ETag, Last-Modified, Cache-Control, and those a stored status
	// requires: Allow, WWW-Authenticate, Proxy-Authenticate, Content-Range).
	// A replay sets each header the record holds to its stored values,
	// replacing any a middleware further out had set under that name; other
	// headers are left alone.
	// Names match case-insensitively: one listed twice is stored once.
	// Names must be valid header field names; ToMiddleware fails otherwise
	// (ErrConfig).
	StoredHeaders []string
	// StoreStatus decides from the status code whether a response is stored
	// (default FinalStatus: below 500 and not 408, 409, 423, 425 or 429). A
	// response not stored releases the key, so the client can retry with it.
	// Answers of the lock middleware (contended, lock lost, Redis down) are
	// never stored, whatever StoreStatus says.
	StoreStatus func(status int) bool
	// ErrorHandler, when set, gets every error the middleware would return (an
	// *echo.HTTPError wrapping the cause, which errors.Unwrap returns) and
	// returns what to return.
	ErrorHandler func(c echo.Context, err error) error
	// Logger receives store failures after the handler ran. Default slog.Default().
	Logger *slog.Logger
	// OnOutcome, when set, gets the outcome of every request that carries a
	// key or lacks a required one (executed, replayed, idempotency_conflict,
	// over_budget, key_invalid, body_refused for the 413, 400 and 500 answers
	// to a body over MaxBodyBytes, unreadable, or read by a middleware in
	// front, redis_down, and canceled for a request whose context ended
	// before its key was reserved).
	OnOutcome scriptlock.RequestOutcomeFunc
}

// DefaultIdempotencyConfig is the configuration Idempotency starts from.
var DefaultIdempotencyConfig = IdempotencyConfig{
	Skipper:               DefaultSkipper,
	Header:                HeaderIdempotencyKey,
	MaxBodyBytes:          1 << 20,
	MaxResponseBytes:      1 << 20,
	MaxReplayDecodedBytes: 16 << 20,
	StoredHeaders: []string{echo.HeaderContentType, echo.HeaderContentEncoding, "Content-Language",
		"Content-Location", echo.HeaderContentDisposition, echo.HeaderLocation, "ETag", echo.HeaderLastModified, "Cache-Control",
		// Required by the status they come with (RFC 9110): 405, 401, 407,
		// 206 and 416 are stored, and a replay without them is not the answer.
		echo.HeaderAllow, echo.HeaderWWWAuthenticate, "Proxy-Authenticate", "Content-Range"},
	StoreStatus: FinalStatus,
	Scope:       CredentialScope,
}

// FinalStatus reports whether a response with status is a final outcome
// worth replaying: below 500 and not one that asks the client to retry (408
// Request Timeout, 409 Conflict, 423 Locked, 425 Too Early, 429 Too Many
// Requests).
func FinalStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusLocked, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return status < 500
}

// CredentialScope is the default IdempotencyConfig.Scope: the request's
// credentials (every Authorization header line, every cookie, sorted by
// name, and the TLS client certificate) hashed by
// idempotency.CredentialScope, or idempotency.AnonymousScope for a request
// without any.
func CredentialScope(c echo.Context) string {
	req := c.Request()
	parts := []string{strings.Join(req.Header.Values(echo.HeaderAuthorization), "\n")}
	cookies := req.Cookies()
	sort.SliceStable(cookies, func(i, j int) bool { return cookies[i].Name < cookies[j].Name })
	for _, ck := range cookies {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	// A client authenticated by its certificate (mutual TLS) has a scope of
	// its own. The part is added only when there is a certificate, so other
	// requests keep their scope; no cookie part spells it (a cookie name
	// holds no ':').
	if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
		parts = append(parts, "tls-client-certificate:"+string(req.TLS.PeerCertificates[0].Raw))
	}
	return idempotency.CredentialScope(parts...)
}

// Unscoped puts every client's keys in one namespace: any client presenting
// a key sees the response stored under it. Use it only when keys are
// unguessable secrets issued per client, or every client is trusted.
func Unscoped(echo.Context) string { return "" }

// Answers of the Idempotency-Key middleware (IETF httpapi Idempotency-Key draft).
var (
	ErrIdempotencyKeyMissing = echo.NewHTTPError(http.StatusBadRequest, "Idempotency-Key header missing")
	ErrIdempotencyKeyInvalid = echo.NewHTTPError(http.StatusBadRequest, "Idempotency-Key header invalid")
	ErrIdempotencyInFlight   = echo.NewHTTPError(http.StatusConflict, "a request with this Idempotency-Key is being processed")
	ErrIdempotencyMismatch   = echo.NewHTTPError(http.StatusUnprocessableEntity, "Idempotency-Key was used for a different request")
	ErrIdempotencyUsed       = echo.NewHTTPError(http.StatusConflict, "Idempotency-Key was used; its response was not stored (too large, or cut off by an error)")
	ErrIdempotencyBody       = echo.NewHTTPError(http.StatusRequestEntityTooLarge, "request body too large for Idempotency-Key")
	ErrIdempotencyBodyRead   = echo.NewHTTPError(http.StatusBadRequest, "request body could not be read")
	// ErrIdempotencyClaimLost: the request's claim on its key ended while the
	// handler ran (Redis lost it or could not renew it in time) and the
	// handler wrote nothing; the handler's context ended with
	// idempotency.ErrClaimLost. The key is not stored: a retry runs again
	// (Retry-After: 1 says when).
	ErrIdempotencyClaimLost = echo.NewHTTPError(http.StatusServiceUnavailable, "Idempotency-Key claim lost while handling the request")
	ErrIdempotencyStore     = echo.NewHTTPError(http.StatusServiceUnavailable, "idempotency store unavailable")
	ErrIdempotencyBudget    = echo.NewHTTPError(http.StatusTooManyRequests, "too many stored Idempotency-Key responses for this client")
	// ErrIdempotencyReplayEncoding: the stored response is gzip-compressed
	// and decodes past IdempotencyConfig.MaxReplayDecodedBytes, and the
	// retry does not take gzip. Nothing ran; a retry that takes gzip gets it.
	ErrIdempotencyReplayEncoding = echo.NewHTTPError(http.StatusNotAcceptable, "the stored response is gzip-compressed and too large to decode: retry with Accept-Encoding: gzip")
)

var errOverBudget = errors.New("idempotency: scope over its byte budget")

// errIdempotencyBodyGone answers a request whose body a middleware in front
// has read, leaving nothing to fingerprint (see the middleware).
var errIdempotencyBodyGone = echo.NewHTTPError(http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError))

// claimedKey holds, in the echo.Context, the claim the request runs under
// (see claimed): an Idempotency middleware nested in the same chain on the
// same store, scoping the request alike, runs the request under it instead
// of claiming the key again. A request the handler serves through the router
// (a new echo.Context) claims its own.
const claimedKey = "scriptlock.echolock.idempotency"

// claimed names a claim by its store, scope and key: a middleware whose
// scope differs keeps records of its own, which the claim does not cover.
type claimed struct {
	store *idempotency.Store
	scope string
	key   string
}

// ErrConfig: a configuration the middleware refuses to be built with (a
// Header, StoredHeaders or FingerprintHeaders name that is no header field name; a
// KeyLookup source that no request can carry). ToMiddleware returns it
// wrapped with the detail.
var ErrConfig = errors.New("echolock: invalid configuration")

// Idempotency returns the Idempotency-Key middleware on store with
// DefaultIdempotencyConfig.
//
// The first request with a key runs and its response (status, StoredHeaders,
// body) is stored; a duplicate while it runs answers 409; a duplicate after it
// completed, with the same method, route (in an Echo v4 with virtual hosts,
// e.Host, with the router that routed it: a virtual host's route with its
// host, the default router's as the default router's; Echo v5's virtual
// hosts, Echo instances of their own behind echo.NewVirtualHostHandler,
// share records of the same route unless FingerprintHeaders names Host or
// each has a store of its own), URI, body and body
// media type
// (Content-Type in canonical form) (and
// IdempotencyConfig.FingerprintHeaders), gets the stored
// response byte for byte plus "Idempotent-Replayed: true" (a body stored
// gzip-compressed, Echo's Gzip inside this middleware, is decoded for a
// retry whose Accept-Encoding does not take gzip); the same key with a
// different request answers 422. When a middleware in front of it has already
// read the body as a form (CSRF with a form token, ...), the parsed form (its
// values and files) counts as the body; a body it has read otherwise, leaving
// nothing to read, is refused with 500, as it cannot be fingerprinted (a body
// of declared length sent without Content-Encoding: a compressed one that a
// decoder in front finds empty is run as empty; a chunked one when net/http's
// reader, also under http.MaxBytesReader or Echo's BodyLimit, shows it was
// read to its end before). Keys are scoped to the caller's credentials
// (CredentialScope). Only final outcomes are stored (FinalStatus): 5xx,
// 409, 423, 429 and the lock middleware's own answers release the key, so the
// client can retry with it. A handler error is answered inside, by Echo's
// HTTPErrorHandler, and stored only when it is an *echo.HTTPError (on Echo
// v5, any error with an echo.HTTPStatusCoder in its chain) with a
// status StoreStatus stores (and returned on: Echo calls HTTPErrorHandler
// again with it, so a custom one must return when the response is committed,
// as Echo's DefaultHTTPErrorHandler does); any other is returned unanswered to the error
// handling further out (a middleware mapping it, then Echo's
// HTTPErrorHandler), and the key is released, so a retry runs again. A
// handler that panics releases the key too, unless
// it had already sent its answer: that answer is stored like any other, or,
// when the panic is http.ErrAbortHandler (the answer aborted, perhaps cut
// short), the key is kept and a retry answers 409; likewise when the client
// went away after the answer began (103 Early Hints included), whatever the
// handler returns and also when it panics (an event stream stopped on
// ctx.Done is cut short), unless the answer was whole (all of its
// Content-Length written, a 204 or 304, or an answer to HEAD). Applied twice to a route on
// one store (with e.Use and on the route) with one Scope, the inner middleware
// runs the request under the outer one's claim; with another Scope it keeps
// records of its own.
func Idempotency(store *idempotency.Store) echo.MiddlewareFunc {
	c := DefaultIdempotencyConfig
	c.Store = store
	return IdempotencyWithConfig(c)
}

// IdempotencyWithConfig returns the middleware for config; it panics on an
// invalid config.
func IdempotencyWithConfig(config IdempotencyConfig) echo.MiddlewareFunc {
	mw, err := config.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
}

// ToMiddleware validates config, fills defaults, and returns the middleware.
func (config IdempotencyConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	d := DefaultIdempotencyConfig
	if config.Store == nil {
		return nil, errors.New("echolock: IdempotencyConfig.Store is required")
	}
	if config.Skipper == nil {
		config.Skipper = d.Skipper
	}
	if config.Header == "" {
		config.Header = d.Header
	}
	// No request carries a header by a name that is no header field name:
	// every request would run without idempotency (or, Required, be refused).
	if !validHeaderName(config.Header) {
		return nil, fmt.Errorf("%w: IdempotencyConfig.Header: %q is not a header field name", ErrConfig, config.Header)
	}
	if config.MaxBodyBytes <= 0 {
		config.MaxBodyBytes = d.MaxBodyBytes
	}
	// The body is read one byte past the limit to tell a body over it; at
	// math.MaxInt64 that would overflow and read nothing.
	config.MaxBodyBytes = min(config.MaxBodyBytes, math.MaxInt64-1)
	if config.MaxResponseBytes <= 0 {
		config.MaxResponseBytes = d.MaxResponseBytes
	}
	if config.MaxReplayDecodedBytes <= 0 {
		config.MaxReplayDecodedBytes = d.MaxReplayDecodedBytes
	}
	// Read one byte past the limit to tell a body over it, as above.
	config.MaxReplayDecodedBytes = min(config.MaxReplayDecodedBytes, math.MaxInt64-1)
	if config.StoredHeaders == nil {
		config.StoredHeaders = d.StoredHeaders
	}
	stored, err := storedHeaders(config.StoredHeaders)
	if err != nil {
		return nil, err
	}
	config.StoredHeaders = stored
	if config.StoreStatus == nil {
		config.StoreStatus = d.StoreStatus
	}
	if config.Scope == nil {
		config.Scope = d.Scope
	}
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	fpHeaders, err := fingerprintHeaders(config.FingerprintHeaders)
	if err != nil {
		return nil, err
	}
	fail := func(c echo.Context, base *echo.HTTPError, cause error) error {
		he := withInternal(base, cause)
		if config.ErrorHandler != nil {
			return config.ErrorHandler(c, he)
		}
		return he
	}
	store := config.Store

	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			if config.Skipper(c) {
				return next(c)
			}
			req := c.Request()
			hv := req.Header.Values(config.Header)
			if len(hv) == 0 {
				if config.Required {
					config.OnOutcome.Report(req.Context(), scriptlock.RequestKeyInvalid)
					return fail(c, ErrIdempotencyKeyMissing, core.ErrKeyMissing)
				}
				return next(c)
			}
			if len(hv) > 1 {
				config.OnOutcome.Report(req.Context(), scriptlock.RequestKeyInvalid)
				return fail(c, ErrIdempotencyKeyInvalid, fmt.Errorf("%w: %d header lines", idempotency.ErrKeyInvalid, len(hv)))
			}
			key, err := store.ParseKey(hv[0])
			if err != nil {
				config.OnOutcome.Report(req.Context(), scriptlock.RequestKeyInvalid)
				return fail(c, ErrIdempotencyKeyInvalid, err)
			}
			refuseBody := func(base *echo.HTTPError, cause error) error {
				config.OnOutcome.Report(req.Context(), scriptlock.RequestBodyRefused)
				return fail(c, base, cause)
			}
			var body []byte
			bodyRead := req.Body != nil && req.Body != http.NoBody
			// Asked before the body is read here: whether one read in
			// front already reached its end (see below).
			readInFront := bodyRead && bodyReadToEnd(req.Body)
			if bodyRead {
				body, err = io.ReadAll(io.LimitReader(req.Body, config.MaxBodyBytes+1))
				if err != nil {
					if bodyTooLarge(err) {
						return refuseBody(ErrIdempotencyBody, err)
					}
					return refuseBody(ErrIdempotencyBodyRead, err)
				}
				if int64(len(body)) > config.MaxBodyBytes {
					return refuseBody(ErrIdempotencyBody, fmt.Errorf("body over %d bytes", config.MaxBodyBytes))
				}
				req.Body = io.NopCloser(bytes.NewReader(body))
			}
			fpParts := [][]byte{[]byte(req.Method), []byte(c.Path()), []byte(req.URL.RequestURI()), body}
			content, form := len(body) > 0, false // a body, or a form standing for it
			if len(body) == 0 {
				// A middleware in front (CSRF with a form token, ...) may
				// have parsed the body as a form, leaving nothing to read:
				// the form then stands for the body.
				parsed, ferr := parsedForm(req)
				if ferr != nil {
					return refuseBody(ErrIdempotencyBodyRead, ferr)
				}
				switch {
				case parsed != nil:
					fpParts = append(fpParts, parsed)
					content, form = true, true
				case (req.ContentLength > 0 || readInFront) && !encodedBody(req) && !readAsForm(req):
					// The request has a body, which a middleware in front
					// has read otherwise (bound for validation) and not put
					// back: fingerprinted without it, the same key with
					// another payload would be answered with this one's
					// response. A server misconfiguration: refused. Not for
					// a body sent encoded: its length is the encoded
					// bytes', and a decoder in front (Echo's Decompress)
					// may rightly find nothing in them. A body of unknown
					// length (chunked) counts when net/http's reader says
					// it was read to its end before this middleware read it
					// (see bodyReadToEnd).
					config.Logger.ErrorContext(req.Context(), "echolock: request body read by a middleware in front of Idempotency; it cannot be fingerprinted", "content_length", req.ContentLength)
					return refuseBody(errIdempotencyBodyGone, fmt.Errorf("body of %d bytes already read", req.ContentLength))
				}
			}
			if fpHeaders != nil {
				fpParts = append(fpParts, core.FieldsPart("headers", fpHeaders, func(name string) []string {
					if name == "Host" {
						return []string{req.Host}
					}
					return req.Header.Values(name)
				}))
			}
			// The fingerprint version 1 had no media type: a record it
			// stored is read with the fingerprint it computed (see
			// fingerprintVersion).
			fingerprints := func(parts [][]byte) (v1, fp string) {
				v1 = idempotency.Fingerprint(parts...)
				fp = v1
				if content {
					// The same bytes as JSON, as a form or as text are
					// different requests: the body counts with its media
					// type. A request without a body keeps its version 1
					// fingerprint, which says all version 2 would: a
					// release still computing version 1 during a rolling
					// deploy reads its record as the same request's, not
					// another's (422).
					parts = append(parts[:len(parts):len(parts)], []byte("content-type"), mediaType(req.Header.Values(echo.HeaderContentType), form))
					fp = fingerprintVersion + idempotency.Fingerprint(parts...)
				}
				return v1, fp
			}
			v1, fp := fingerprints(fpParts)
			earlier := []string{v1}
			if route, alone, ok := routerRoute(c); ok {
				// The Echo has virtual hosts (e.Host): the same path on
				// another host may be another route, with a handler of its
				// own, so the route counts with the router that routed it
				// (a virtual host's with its host, or the default one).
				// Releases before fingerprinted the path alone: a record
				// one of them stored is read with what they computed only
				// where that says whose it is, the path served by this
				// router alone or the Host counted; otherwise another
				// host's answer would be replayed here (422 instead).
				fpParts[1] = route
				if alone || slices.Contains(fpHeaders, "Host") {
					earlier = append(earlier, fp)
				} else {
					earlier = nil
				}
				_, fp = fingerprints(fpParts)
			}
			scope := config.Scope(c)
			running := claimed{store, scope, key}
			if r, ok := c.Get(claimedKey).(claimed); ok && r == running {
				// A middleware further out on the same store (applied to
				// every route and again on this one) runs this request
				// under its claim on the key already; claiming it again
				// would find it in flight. This one's own checks of the
				// key and body above stand.
				return next(c)
			}
			ctx := req.Context()
			res, err := store.Reserve(ctx, scope, key, fp, earlier...)
			if err != nil {
				// A 503 says when to try again, as the lock middleware's
				// does for an unreachable Redis; also one for a request
				// whose context ended meanwhile: a server-side deadline
				// (ContextTimeout) leaves the client waiting for it.
				c.Response().Header().Set("Retry-After", "1")
				if ctx.Err() != nil { // the client has gone, or its deadline passed; Redis may be fine
					config.OnOutcome.Report(ctx, scriptlock.RequestCanceled)
					return fail(c, ErrIdempotencyStore, err)
				}
				config.Logger.ErrorContext(ctx, "echolock: idempotency store unavailable", "err", err)
				config.OnOutcome.Report(ctx, scriptlock.RequestRedisDown)
				return fail(c, ErrIdempotencyStore, err)
			}
			switch res.State {
			case idempotency.Mismatch, idempotency.InFlight:
				config.OnOutcome.Report(ctx, scriptlock.RequestIdempotencyConflict)
			case idempotency.Done:
				// Reported by replay: a record it cannot read is no replay.
			case idempotency.OverBudget:
				config.OnOutcome.Report(ctx, scriptlock.RequestOverBudget)
			}
			switch res.State {
			case idempotency.Mismatch:
				return fail(c, ErrIdempotencyMismatch, idempotency.ErrFingerprintMismatch)
			case idempotency.InFlight:
				c.Response().Header().Set("Retry-After", "1")
				return fail(c, ErrIdempotencyInFlight, idempotency.ErrInFlight)
			case idempotency.Done:
				return replay(c, res.Response, config.MaxReplayDecodedBytes, config.Logger, config.OnOutcome, fail)
			case idempotency.OverBudget:
				return fail(c, ErrIdempotencyBudget, errOverBudget)
			}

			claim := res.Claim
			// Until the claim ends only: a middleware further out that calls
			// the chain again on this echo.Context (a retry) claims anew.
			outer := c.Get(claimedKey)
			c.Set(claimedKey, running)
			hctx, detach := claim.Context(ctx)
			rec := &recorder{limit: config.MaxResponseBytes, stored: config.StoredHeaders, ctx: ctx, head: req.Method == http.MethodHead}
			resp, unwrap := wrapWriter(c, func(w http.ResponseWriter) http.ResponseWriter {
				rec.ResponseWriter = w
				return rec
			})
			c.SetRequest(req.WithContext(hctx))
			// Every way out completes or releases the claim exactly once;
			// settled says it was done (see the last deferred call below).
			settled := false
			release := func() {
				settled = true
				if rerr := claim.Release(ctx); rerr != nil {
					config.Logger.WarnContext(ctx, "echolock: idempotency release failed", "key", key, "err", rerr)
				}
			}
			// complete stores the answer sent, or releases the key when the
			// answer is not one to store.
			complete := func(lost bool) {
				rec.sync(resp)
				status := resp.Status
				if lost || !resp.Committed || !config.StoreStatus(status) || c.Get(lockAnswerKey) != nil {
					release()
					return
				}
				sr := idempotency.StoredResponse{Status: status}
				if rec.overflow || rec.incomplete {
					sr.NotReplayable = true
				} else {
					sr.Body = rec.buf.Bytes()
					sr.Header = rec.header
				}
				settled = true
				switch ok, serr := claim.Complete(ctx, sr.Encode()); {
				case errors.Is(serr, idempotency.ErrRetryDropped):
					// Lost: once the claim expires, a retry runs the request again.
					config.Logger.ErrorContext(ctx, "echolock: idempotent response not stored and not retried", "key", key, "err", serr)
				case serr != nil: // the store keeps trying in the background
					config.Logger.WarnContext(ctx, "echolock: idempotent response not stored yet", "key", key, "err", serr)
				case !ok:
					config.Logger.WarnContext(ctx, "echolock: idempotent response not stored", "key", key, "claim_lost", true)
				}
			}
			// Deferred first, so run last, also when the deferred call below
			// panics: a panic that left the claim neither completed nor
			// released (in StoreStatus, in Echo's error handler) releases
			// it, so that the retry runs; a claim left behind would be
			// renewed, and the key answered 409, for as long as the process
			// runs.
			defer func() {
				if !settled {
					release()
				}
			}()
			// Reported once the claim is released on every way out, a
			// panic of OnOutcome included.
			config.OnOutcome.Report(ctx, scriptlock.RequestExecuted)
			finished := false
			// nilPanic: the handler panicked with a value recover returns
			// as nil (panic(nil) under GODEBUG=panicnil=1).
			nilPanic := false
			defer func() {
				detach()
				c.Set(claimedKey, outer)
				rec.sync(resp) // before unwrap, which passes on what it says
				unwrap()
				if !finished {
					// A panic. Before an answer was sent, the key is
					// released so a retry runs. After one was (Recover
					// further out lets it reach the client), the request
					// got as far as answering: that answer is stored like
					// any other, so a retry gets it instead of running the
					// request again. http.ErrAbortHandler aborts the
					// answer (a proxy whose upstream broke off mid-body):
					// what was sent may be cut short, so, as after an
					// error, it is not replayed; so is an answer its client
					// went away from before the panic (see rec.cutByClient).
					// The panic goes on.
					p := recover()
					if p == http.ErrAbortHandler || rec.cutByClient() {
						rec.incomplete = true
					}
					complete(false)
					if p != nil || nilPanic {
						panic(p)
					}
				}
			}()
			nextReturned := false
			func() {
				defer func() {
					if !nextReturned {
						// A panic, or runtime.Goexit, which recover does
						// not stop. One recover tells goes on to the
						// deferred call above, its frames still on the
						// stack.
						if p := recover(); p != nil {
							panic(p)
						}
					}
				}()
				err = next(c)
				nextReturned = true
			}()
			if !nextReturned {
				// Only a panic recover returned as nil comes this far (a
				// Goexit goes on ending the goroutine): it goes on too, as
				// without the middleware.
				nilPanic = true
				panic(nil)
			}
			c.SetRequest(req)
			if bodyRead {
				// The handler has read the body handed to it: a middleware
				// further out that calls the chain again (a retry) finds it
				// again, and this middleware the same fingerprint.
				req.Body = io.NopCloser(bytes.NewReader(body))
			}
			rec.sync(resp)
			if err == nil && rec.cutByClient() {
				// Its client went away while it answered, and it stopped
				// without an error, as an event loop does on ctx.Done:
				// the client did not get the answer whole, and what was
				// sent may be cut short, so, as after an error, it is not
				// replayed.
				rec.incomplete = true
			}
			// A claim lost after the handler wrote its answer is still tried
			// by Complete: the script stores it only if the claim is still
			// this request's (it was presumed lost early, not taken).
			lost := claim.Lost() && !resp.Committed
			switch {
			case lost:
				// A retry may be running the request already: answer so that
				// the client retries, and store nothing.
				cause := err
				if cause == nil {
					cause = context.Cause(hctx)
				} else if _, ok := cause.(*echo.HTTPError); ok {
					cause = fmt.Errorf("handler: %w", cause) // keep the 503, see fail
				}
				// The retry runs the request: say when, as for a lost lock.
				c.Response().Header().Set("Retry-After", "1")
				err = fail(c, ErrIdempotencyClaimLost, cause)
				writeError(c, err)
			case !resp.Committed && lostFurtherOut(ctx):
				// A lock middleware further out (e.Use(Lock)) lost its
				// lock, or an outer Idempotency its claim, and the handler
				// wrote nothing: whatever it returned (nil, an error this
				// middleware would store) is left to that middleware, which
				// answers 503, as with this one in front of it, and the key
				// is released below. An answer stored here (an empty 200 for
				// nil) would be replayed for work abandoned under the loss.
			case err != nil && !resp.Committed && ctx.Err() != nil &&
				(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
				// The handler stopped on the request's own context, which
				// ended (a server-side deadline, such as ContextTimeout's,
				// or the client gone): no answer to store, so the error is
				// left to the middleware further out that set the deadline
				// (ContextTimeout answers 503), as for a request without a
				// key, and the key is released below.
			case err != nil && !resp.Committed && !storedError(err, config.StoreStatus):
				// An error Echo answers with a status not stored (an error
				// that chooses no status is a 500 to Echo): it is left
				// unanswered to the error handling further out (a middleware
				// mapping domain errors, then Echo's HTTPErrorHandler), so
				// that its answer is the client's; the key is released below,
				// so a retry runs again and is answered alike, rather than
				// replayed an answer that the mapping never saw.
			case err != nil:
				if resp.Committed {
					// The handler failed after its answer began (a stream
					// cut off): what was sent may be cut short, so a retry
					// gets 409 rather than a replay of part of it.
					rec.incomplete = true
				}
				writeError(c, err) // write the error response now, so it can be stored
			case !resp.Committed:
				// The handler wrote nothing: net/http would answer 200 with an
				// empty body once it returns. Answer that now, so that it is
				// what is stored and what a retry gets, not a second run.
				err = c.NoContent(http.StatusOK)
			}
			finished = true
			complete(lost)
			return err
		}
	}, nil
}

// clientGone reports whether ctx, a request's context as the middleware got
// it, ended because its client went away: net/http cancels it then without a
// cause. A context canceled with a cause of its own is not the client's
// doing: the lock middleware further out cancels it with
// scriptlock.ErrLockLost, an Idempotency middleware further out with
// idempotency.ErrClaimLost, and the client, still there, has what was sent.
func clientGone(ctx context.Context) bool {
	return ctx.Err() != nil && context.Cause(ctx) == context.Canceled
}

// lostFurtherOut reports whether ctx, a request's context as the middleware
// got it, ended because a lock middleware further out lost its lock or an
// outer Idempotency middleware its claim.
func lostFurtherOut(ctx context.Context) bool {
	return core.LockLost(ctx) || ctx.Err() != nil && errors.Is(context.Cause(ctx), idempotency.ErrClaimLost)
}

// storedError reports whether err, a handler's error, is answered inside the
// middleware so that its answer can be stored: an error that chooses its
// status as Echo's DefaultHTTPErrorHandler reads it (errorStatus: an
// *echo.HTTPError; on Echo v5 any error with an echo.HTTPStatusCoder in its
// chain), with a status storeStatus stores.
func storedError(err error, storeStatus func(int) bool) bool {
	status, ok := errorStatus(err)
	return ok && storeStatus(status)
}

// fingerprintVersion prefixes the fingerprints of requests with a body
// stored since the body's media type counts in them (version 1 stored the
// bare hash, which no version-2 fingerprint equals): a record version 1
// stored is compared with the fingerprint version 1 computes, so that it is
// replayed to the request it was made for, as version 1 would, rather than
// answered 422. A request without a body has no media type to count: its
// fingerprint is version 1's, bare, which both versions read alike.
const fingerprintVersion = "2:"

// mediaType returns the Content-Type lines of a request in canonical form:
// one well-formed line as its type/subtype in lower case and its parameters
// sorted, names in lower case, values unquoted as needed (charset, whose
// values are case-insensitive, in lower case); anything else as sent, tagged
// so that it never spells a canonical one. No line gives an empty part.
// form says the parsed form stands for the body: a multipart boundary, which
// only delimits the parts in the body, is left out.
func mediaType(lines []string, form bool) []byte {
	if len(lines) == 0 {
		return nil
	}
	if len(lines) == 1 {
		if mt, params, err := mime.ParseMediaType(lines[0]); err == nil {
			if form {
				delete(params, "boundary")
			}
			if cs, ok := params["charset"]; ok {
				params["charset"] = strings.ToLower(cs)
			}
			if f := mime.FormatMediaType(mt, params); f != "" {
				return []byte(f)
			}
		}
	}
	return core.FieldsPart("raw", []string{echo.HeaderContentType}, func(string) []string { return lines })
}

// fingerprintHeaders validates IdempotencyConfig.FingerprintHeaders and
// returns the names canonical, sorted and without duplicates (nil for none),
// so that their order in the config does not change fingerprints.
func fingerprintHeaders(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		if !validHeaderName(n) {
			return nil, fmt.Errorf("%w: IdempotencyConfig.FingerprintHeaders: %q is not a header field name", ErrConfig, n)
		}
		out = append(out, textproto.CanonicalMIMEHeaderKey(n))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// storedHeaders validates IdempotencyConfig.StoredHeaders and returns the
// names canonical and without duplicates, in their order: a name listed under
// two spellings would store, and replay, its values twice.
func storedHeaders(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !validHeaderName(n) {
			return nil, fmt.Errorf("%w: IdempotencyConfig.StoredHeaders: %q is not a header field name", ErrConfig, n)
		}
		if n = textproto.CanonicalMIMEHeaderKey(n); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// validHeaderValue reports whether v may be sent as a header field value:
// no control character but the horizontal tab (RFC 9110 field-value), so no
// line break that would end the header line.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// checkStoredHeaders refuses a stored record whose headers could not have
// been stored by this middleware: they are not written into a response.
func checkStoredHeaders(fs []idempotency.HeaderField) error {
	for _, f := range fs {
		if !validHeaderName(f.Name) || !validHeaderValue(f.Value) {
			return fmt.Errorf("%w: header %q", errStoredHeader, f.Name)
		}
	}
	return nil
}

var errStoredHeader = errors.New("echolock: malformed stored response: invalid header")

// checkStoredStatus refuses a stored status that is no final HTTP status
// (the recorder stores 101 or 200..999): net/http panics on a code outside
// 100..999, and a 1xx other than 101 is no answer.
func checkStoredStatus(code int) error {
	if code != http.StatusSwitchingProtocols && (code < 200 || code > 999) {
		return fmt.Errorf("%w %d", errStoredStatus, code)
	}
	return nil
}

var errStoredStatus = errors.New("echolock: malformed stored response: invalid status")

// validHeaderName reports whether n is an HTTP field name (RFC 9110 token).
func validHeaderName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// encodedBody reports whether req's body is sent with a content coding
// (Content-Encoding other than identity), whose declared length is that of
// the encoded bytes, not of what a decoder in front hands on.
func encodedBody(req *http.Request) bool {
	for _, v := range req.Header.Values(echo.HeaderContentEncoding) {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

// bodyReadToEnd reports whether b, a request body as net/http hands it to
// the handler (possibly under http.MaxBytesReader, Echo's BodyLimit, or the
// reader net/http puts on a body sent with Expect: 100-continue), has
// already been read to its end: net/http's readers keep that, unexported,
// in their sawEOF field. It tells a chunked body that a middleware in front
// consumed from one that was sent empty; no exported API does. A reader of
// another type (one a middleware in front put in its place) or a field net/http
// no longer has reports false: nothing is known.
func bodyReadToEnd(b io.ReadCloser) bool {
	v := reflect.ValueOf(b)
	for range 8 { // wrappers
		if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
			return false
		}
		e := v.Elem()
		t := e.Type()
		var inner string
		switch t.PkgPath() + "." + t.Name() {
		case "net/http.body", "net/http.http2requestBody",
			// HTTP/2 from Go 1.27 on, and x/net/http2's own server.
			"net/http/internal/http2.requestBody", "golang.org/x/net/http2.requestBody":
			f := e.FieldByName("sawEOF")
			return f.IsValid() && f.Kind() == reflect.Bool && f.Bool()
		case "net/http.expectContinueReader":
			inner = "readCloser"
		case "net/http.maxBytesReader":
			inner = "r"
		case "github.com/labstack/echo/v4/middleware.limitedReader",
			"github.com/labstack/echo/v5/middleware.limitedReader":
			inner = "reader"
		default:
			return false
		}
		f := e.FieldByName(inner)
		if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() {
			return false
		}
		v = f.Elem() // the reader wrapped, only looked at
	}
	return false
}

// readAsForm reports whether an earlier ParseForm has read req's body, a
// url-encoded form by its Content-Type, also when it found no value in it
// (fields separated by ';', which Go refuses): the parsed form, as empty as
// the handler finds it, stands for the body. (A multipart body read by
// ParseMultipartForm leaves a MultipartForm, which parsedForm digests.)
func readAsForm(req *http.Request) bool {
	if req.PostForm == nil {
		return false
	}
	mt, _, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	return mt == echo.MIMEApplicationForm
}

// parsedForm returns a digest of the form an earlier ParseForm or
// ParseMultipartForm read from req's body (its values and, for multipart,
// each file's field, name and content), or nil when none was read.
func parsedForm(req *http.Request) ([]byte, error) {
	if len(req.PostForm) == 0 && req.MultipartForm == nil {
		return nil, nil
	}
	parts := [][]byte{[]byte("form"), []byte(req.PostForm.Encode())}
	if mf := req.MultipartForm; mf != nil {
		fields := make([]string, 0, len(mf.File))
		for name := range mf.File {
			fields = append(fields, name)
		}
		sort.Strings(fields)
		for _, name := range fields {
			for _, fh := range mf.File[name] {
				f, err := fh.Open()
				if err != nil {
					return nil, fmt.Errorf("form file %q: %w", name, err)
				}
				h := sha256.New()
				_, err = io.Copy(h, f)
				f.Close()
				if err != nil {
					return nil, fmt.Errorf("form file %q: %w", name, err)
				}
				parts = append(parts, []byte(name), []byte(fh.Filename), h.Sum(nil))
			}
		}
	}
	return []byte(idempotency.Fingerprint(parts...)), nil
}

func replay(c echo.Context, stored []byte, maxDecoded int64, log *slog.Logger, report scriptlock.RequestOutcomeFunc, fail func(echo.Context, *echo.HTTPError, error) error) error {
	sr, err := idempotency.DecodeStoredResponse(stored)
	if err == nil {
		err = checkStoredStatus(sr.Status)
	}
	if err == nil {
		err = checkStoredHeaders(sr.Header)
	}
	if errors.Is(err, idempotency.ErrStoredVersion) {
		// Answered 503 like a store that cannot be reached, and counted so:
		// the client got no replay.
		report.Report(c.Request().Context(), scriptlock.RequestRedisDown)
		// A later version stored it during a rolling deploy: the request
		// ran, so it must not run again, and an instance that reads the
		// record replays it to the retry.
		log.WarnContext(c.Request().Context(), "echolock: stored response written by a later version")
		c.Response().Header().Set("Retry-After", "1")
		return fail(c, ErrIdempotencyStore, err)
	}
	if err != nil {
		// A record this version should read but cannot is a store failure
		// to the client, which gets no replay: counted like the other.
		report.Report(c.Request().Context(), scriptlock.RequestRedisDown)
		log.ErrorContext(c.Request().Context(), "echolock: stored response", "err", err)
		return fail(c, ErrIdempotencyStore, err)
	}
	if sr.NotReplayable {
		// Nothing is replayed: the duplicate is refused like a reused key.
		report.Report(c.Request().Context(), scriptlock.RequestIdempotencyConflict)
		return fail(c, ErrIdempotencyUsed, idempotency.ErrNotReplayable)
	}
	// A body stored gzip-compressed (Echo's Gzip inside this middleware
	// compressed it for the first client) is decoded for a retry that does
	// not take gzip, rather than sent in a coding it refused; its stored size
	// bounds the compressed bytes only, so decoding is bounded too.
	gz := storedGzip(sr.Header)
	decode := false
	if gz && !acceptsGzip(c.Request().Header.Values(echo.HeaderAcceptEncoding)) {
		switch n := gzipDecodedSize(sr.Body, maxDecoded); {
		case n > maxDecoded:
			report.Report(c.Request().Context(), scriptlock.RequestIdempotencyConflict)
			log.WarnContext(c.Request().Context(), "echolock: stored gzip response decodes past MaxReplayDecodedBytes; not replayed to a retry that does not take gzip",
				"max_decoded_bytes", maxDecoded)
			// Refused by Accept-Encoding, where one taking gzip gets the
			// answer: a cache must not give the refusal to such a client.
			if h := c.Response().Header(); !varies(h.Values(echo.HeaderVary), echo.HeaderAcceptEncoding) {
				h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
			}
			return fail(c, ErrIdempotencyReplayEncoding, fmt.Errorf("stored gzip response decodes past %d bytes", maxDecoded))
		case n >= 0:
			decode = true
		}
	}
	report.Report(c.Request().Context(), scriptlock.RequestReplayed)
	// Each stored header replaces what a middleware further out has set
	// under its name (a request id, a default Content-Type), so the replay
	// carries the stored values once; other headers are left as they are.
	h := c.Response().Header()
	for _, f := range sr.Header {
		h.Del(f.Name)
	}
	for _, f := range sr.Header {
		// A stored Content-Length (StoredHeaders may name it) counts the
		// compressed bytes.
		if !decode || !strings.EqualFold(f.Name, echo.HeaderContentEncoding) && !strings.EqualFold(f.Name, echo.HeaderContentLength) {
			h.Add(f.Name, f.Value)
		}
	}
	if gz && !varies(h.Values(echo.HeaderVary), echo.HeaderAcceptEncoding) {
		// Sent compressed or decoded by the retry's Accept-Encoding: a
		// cache must not give one to a client that would get the other.
		h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	}
	h.Set(HeaderIdempotentReplayed, "true")
	c.Response().WriteHeader(sr.Status)
	if decode {
		zr, err := gzip.NewReader(bytes.NewReader(sr.Body))
		if err != nil {
			return err // gzipWhole read it: not reached
		}
		// gzipDecodedSize read it to its end within maxDecoded bytes.
		_, err = io.Copy(c.Response(), io.LimitReader(zr, maxDecoded))
		return err
	}
	_, err = c.Response().Write(sr.Body)
	return err
}

// storedGzip reports whether stored headers say the body is gzip-compressed
// and nothing else: one Content-Encoding, gzip (or its alias x-gzip).
func storedGzip(fs []idempotency.HeaderField) bool {
	n, gz := 0, false
	for _, f := range fs {
		if strings.EqualFold(f.Name, echo.HeaderContentEncoding) {
			n++
			v := strings.TrimSpace(f.Value)
			gz = strings.EqualFold(v, "gzip") || strings.EqualFold(v, "x-gzip")
		}
	}
	return n == 1 && gz
}

// varies reports whether Vary lines name the request header name (or "*").
func varies(lines []string, name string) bool {
	for _, l := range lines {
		for _, f := range strings.Split(l, ",") {
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, name) {
				return true
			}
		}
	}
	return false
}

// acceptsGzip reports whether a request's Accept-Encoding lines take gzip
// (RFC 9110 12.5.3): no line takes any coding; otherwise gzip (or x-gzip),
// or else "*", must be listed with a weight above 0. A weight that does not
// parse is taken as 1.
func acceptsGzip(lines []string) bool {
	if len(lines) == 0 {
		return true
	}
	named, star := -1.0, -1.0
	for _, l := range lines {
		for _, el := range strings.Split(l, ",") {
			name, params, _ := strings.Cut(el, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
						q = f
					}
				}
			}
			switch name {
			case "gzip", "x-gzip":
				named = max(named, q)
			case "*":
				star = max(star, q)
			}
		}
	}
	if named >= 0 {
		return named > 0
	}
	return star > 0
}

// gzipDecodedSize returns the size b decodes to as a gzip stream, read
// without keeping what it decodes and no further than limit+1 bytes (a
// result above limit: it decodes past limit), or -1 when it does not decode
// to its end: such a body is replayed as stored, not cut off in the middle of
// an answer already begun.
func gzipDecodedSize(b []byte, limit int64) int64 {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return -1
	}
	n, err := io.Copy(io.Discard, io.LimitReader(zr, limit+1))
	if n > limit {
		return n
	}
	if err != nil {
		return -1
	}
	return n
}

// recorder copies the response body, up to limit bytes, as it is written,
// and the stored headers as they are when the status is written: what the
// handler sent, before middleware further out (Gzip) changes the headers for
// the body it re-encodes, so that a replay's headers describe its body.
type recorder struct {
	http.ResponseWriter
	buf        bytes.Buffer
	limit      int
	overflow   bool // the answer was larger than limit: not stored
	incomplete bool // the handler failed, or its client left, after its answer began: not stored
	stored     []string
	header     []idempotency.HeaderField
	status     int // the final status sent, 0 before it
	// ctx is the request's context; endedAtStart says it had ended when
	// the answer began (an answer written after it ended is whole).
	ctx          context.Context
	endedAtStart bool
	// declared is the Content-Length the answer declared when it began (-1
	// for none), written the body bytes written since.
	declared, written int64
	// hinted says an informational status (103 Early Hints) was sent
	// while the request's context was live: the answer had begun.
	hinted bool
	// head says the request is a HEAD: its answer has no body.
	head bool
}

// cutByClient reports whether the answer began before the request's client
// went away (see clientGone) and may be cut short: not one known whole,
// with no body (a 204 or 304, an answer to HEAD) or all of the
// Content-Length it declared written, which is replayed as it is. Hints
// sent before the client left with no final status after them are cut
// short too: the empty 200 net/http sends for the handler is no answer it
// gave.
func (r *recorder) cutByClient() bool {
	if r.ctx == nil || !clientGone(r.ctx) {
		return false
	}
	if r.status == 0 {
		return r.hinted
	}
	whole := r.head || r.status == http.StatusNoContent || r.status == http.StatusNotModified ||
		r.declared >= 0 && r.written == r.declared
	return !whole && !r.endedAtStart
}

// sync makes res say what was sent when the handler answered through the
// underlying writer (http.ServeContent on the writer under Echo's response, ...), past
// echo.Response's bookkeeping: the status stored, and checked by
// StoreStatus, is the one the client got, and Echo's error handler does not
// write a second answer. echo.Response also takes an informational status
// (103 Early Hints written through it) for the answer: the final status
// sent after it is the answer's, and with none sent yet the answer has not
// begun (net/http sends 200 once the handler returns).
func (r *recorder) sync(res *echo.Response) {
	switch {
	case r.status != 0:
		res.Committed, res.Status = true, r.status
	case res.Committed && res.Status < http.StatusOK && res.Status != http.StatusSwitchingProtocols:
		res.Committed = false
	case res.Committed && !r.hinted && !r.overflow:
		// Marked committed above the recorder with nothing sent through it
		// (Echo v5's headResponseWriter holds a HEAD's status back until
		// the handler returns, and a panic skips that): no answer began.
		res.Committed = false
	}
}

// snapshot copies the stored headers, once: when the final status is sent.
// Each value is stored as net/http sends it (line breaks as spaces, outer
// blanks trimmed); one still holding a control character, which HTTP/2 does
// not send and a replay refuses as malformed, is left out, so that a record
// never holds what its own replay would refuse.
func (r *recorder) snapshot() {
	r.endedAtStart = r.ctx != nil && r.ctx.Err() != nil
	h := r.ResponseWriter.Header()
	r.declared = -1
	if cl := h.Values(echo.HeaderContentLength); len(cl) == 1 {
		if n, err := strconv.ParseInt(textproto.TrimString(cl[0]), 10, 64); err == nil && n >= 0 {
			r.declared = n
		}
	}
	if r.head && r.declared >= 0 && !slices.ContainsFunc(r.stored, func(n string) bool { return strings.EqualFold(n, echo.HeaderContentLength) }) {
		// A HEAD's answer has no body to replay: its Content-Length is
		// the answer's (Echo v5's AutoHandleHEAD sets it below the recorder).
		r.header = append(r.header, idempotency.HeaderField{Name: echo.HeaderContentLength, Value: strconv.FormatInt(r.declared, 10)})
	}
	for _, name := range r.stored {
		for _, v := range h.Values(name) {
			v = textproto.TrimString(headerNewlineToSpace.Replace(v))
			if validHeaderValue(v) {
				r.header = append(r.header, idempotency.HeaderField{Name: name, Value: v})
			}
		}
	}
}

// headerNewlineToSpace is what net/http does to a header value's line breaks
// when it writes the header.
var headerNewlineToSpace = strings.NewReplacer("\n", " ", "\r", " ")

func (r *recorder) WriteHeader(code int) {
	// An informational status (103 Early Hints) precedes the final one,
	// except 101 Switching Protocols, which is final.
	switch {
	case r.status != 0:
	case code >= 200 || code == http.StatusSwitchingProtocols:
		r.snapshot()
		r.status = code
	case r.ctx == nil || r.ctx.Err() == nil:
		r.hinted = true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.snapshot()
		r.status = http.StatusOK
	}
	if !r.overflow {
		if r.buf.Len()+len(b) > r.limit {
			r.overflow = true
			r.buf = bytes.Buffer{}
		} else {
			r.buf.Write(b)
		}
	}
	n, err := r.ResponseWriter.Write(b)
	r.written += int64(n)
	return n, err
}

func (r *recorder) Flush() { _ = r.FlushError() }

// FlushError flushes through the writer wrapped, found as
// http.ResponseController finds it (a writer further out may offer Flush only
// through Unwrap), and reports, as the controller does, a writer that cannot.
func (r *recorder) FlushError() error {
	// Before any status, the flush sends the headers with 200 (net/http
	// does so): that is the answer's status, and its headers, as they are
	// before the flush, are the ones stored.
	first := r.status == 0
	if first {
		r.snapshot()
	}
	err := http.NewResponseController(r.ResponseWriter).Flush()
	switch {
	case errors.Is(err, http.ErrNotSupported):
		if first {
			r.header = nil // nothing was sent
		}
	case first:
		// Also when the connection failed under the flush: net/http
		// counts the headers written all the same.
		r.status = http.StatusOK
	}
	return err
}

func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err == nil {
		// A hijacked connection's bytes are not seen here. A refused
		// Hijack (HTTP/2) leaves the answer to be written as usual.
		r.overflow = true
	}
	return conn, rw, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
