package scriptlockotel

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/scriptlock/scriptlock"
)

// ScopeName is the instrumentation scope of the meter and tracer.
const ScopeName = "github.com/scriptlock/scriptlock/otel"

// Attribute keys.
const (
	AttrPrimitive    = attribute.Key("scriptlock.primitive")        // mutex, fair_mutex, lean_mutex, rwmutex_read, rwmutex_write, semaphore, permit_semaphore
	AttrOutcome      = attribute.Key("scriptlock.outcome")          // per metric, see docs/operations.md
	AttrLockName     = attribute.Key("scriptlock.lock.name")        // opt-in on metrics; quoted when not UTF-8
	AttrWakeup       = attribute.Key("scriptlock.wakeup")           // message, timer
	AttrEndCause     = attribute.Key("scriptlock.hold.end_cause")   // unlocked, lost, expired, closed
	AttrAttempts     = attribute.Key("scriptlock.acquire.attempts") // spans only
	AttrCall         = attribute.Key("scriptlock.call")             // acquire, release
	AttrRetries      = attribute.Key("scriptlock.retries")          // spans only, when not 0
	AttrFencingToken = attribute.Key("scriptlock.fencing_token")    // spans only
)

// Option configures New.
type Option func(*config)

type config struct {
	mp       metric.MeterProvider
	tp       trace.TracerProvider
	lockName bool
}

// WithMeterProvider sets the MeterProvider (default: otel.GetMeterProvider()).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithTracerProvider sets the TracerProvider (default: otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithLockNameAttribute adds the lock name to the metrics of calls and holds
// (scriptlock.lock.*); the watchdog's, the failover guard's and the
// middleware's are about no single lock and never carry it. Only turn it on
// when names come from a small fixed set: each distinct name is a new time
// series.
func WithLockNameAttribute(on bool) Option { return func(c *config) { c.lockName = on } }

// Observer implements scriptlock.Observer with OpenTelemetry metrics and
// spans. It also counts middleware outcomes (MiddlewareOutcome).
type Observer struct {
	tracer   trace.Tracer
	lockName bool

	acquireDuration metric.Float64Histogram
	attempts        metric.Int64Counter
	wakeups         metric.Int64Counter
	retries         metric.Int64Counter
	held            metric.Int64UpDownCounter
	holdDuration    metric.Float64Histogram
	releaseDuration metric.Float64Histogram
	renewDuration   metric.Float64Histogram
	renewBatch      metric.Int64Histogram
	renewals        metric.Int64Counter
	guardDuration   metric.Float64Histogram
	guards          metric.Int64Counter
	requests        metric.Int64Counter
}

var _ scriptlock.Observer = (*Observer)(nil)

// Bucket boundaries in seconds, from a fast uncontended acquisition (well
// under a millisecond) to a wait of a minute.
var durationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Hold times run longer: up to an hour.
var holdBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600}

// New creates an Observer and its instruments.
func New(opts ...Option) (*Observer, error) {
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	m := cfg.mp.Meter(ScopeName)
	o := &Observer{tracer: cfg.tp.Tracer(ScopeName), lockName: cfg.lockName}
	var errs []error
	f := func(name, unit, desc string, b []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(b...))
		errs = append(errs, err)
		return h
	}
	cnt := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	o.acquireDuration = f("scriptlock.lock.acquire.duration", "s", "Duration of Lock and TryLock calls, and of permit Acquire and TryAcquire calls, waiting included.", durationBuckets)
	o.attempts = cnt("scriptlock.lock.acquire.attempts", "{attempt}", "Acquire script runs; more than one per call means the lock was contended.")
	o.wakeups = cnt("scriptlock.lock.wait.wakeups", "{wakeup}", "Waits that ended by a release message or by the fallback timer.")
	o.retries = cnt("scriptlock.lock.retries", "{call}", "Calls made again because Redis ran nothing: TRYAGAIN, CLUSTERDOWN, LOADING, READONLY, MASTERDOWN, NOREPLICAS, BUSY, OOM, MISCONF, a node that could not be dialled, a broken connection settled.")
	var err error
	o.held, err = m.Int64UpDownCounter("scriptlock.lock.held", metric.WithUnit("{lock}"), metric.WithDescription("Locks this process holds now."))
	errs = append(errs, err)
	o.holdDuration = f("scriptlock.lock.hold.duration", "s", "How long locks were held, by how the hold ended.", holdBuckets)
	o.releaseDuration = f("scriptlock.lock.release.duration", "s", "Duration of Unlock calls and of permit Release calls.", durationBuckets)
	o.renewDuration = f("scriptlock.watchdog.renewal.duration", "s", "Round-trip time of one watchdog renewal batch.", durationBuckets)
	rb, err := m.Int64Histogram("scriptlock.watchdog.renewal.batch_size", metric.WithUnit("{lease}"),
		metric.WithDescription("Leases renewed in one watchdog round trip."),
		metric.WithExplicitBucketBoundaries(1, 2, 5, 10, 50, 100, 500, 1000))
	o.renewBatch = rb
	errs = append(errs, err)
	o.renewals = cnt("scriptlock.watchdog.renewals", "{lease}", "Lease renewals by result: renewed, lost, failed (retried), ended (the hold ended during the round trip).")
	o.guardDuration = f("scriptlock.failover_guard.duration", "s", "Acquire script plus WAIT for the replicas the guard waits for, one round trip.", durationBuckets)
	o.guards = cnt("scriptlock.failover_guard.waits", "{wait}", "Failover-guard waits by result: acknowledged, not_replicated.")
	o.requests = cnt("scriptlock.middleware.requests", "{request}", "Requests through the lock middleware by outcome.")
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *Observer) attrs(op scriptlock.Op, extra ...attribute.KeyValue) metric.MeasurementOption {
	kv := make([]attribute.KeyValue, 0, 3)
	kv = append(kv, AttrPrimitive.String(string(op.Primitive)))
	kv = append(kv, extra...)
	if o.lockName {
		kv = append(kv, lockName(op.Name))
	}
	return metric.WithAttributes(kv...)
}

// lockName is the scriptlock.lock.name attribute of a lock name. Names are
// bytes, while OTLP's strings must be UTF-8: one invalid string fails the
// export of a whole batch of spans, or of every metric. A name that is not
// UTF-8, or that begins with a double quote (so that the two forms never
// meet), is given in Go's quoted form, "order:\xff\xfe:1", as the scriptlock
// command prints it; strconv.Unquote gives its bytes back.
func lockName(name string) attribute.KeyValue {
	if strings.HasPrefix(name, `"`) || !utf8.ValidString(name) {
		name = strconv.Quote(name)
	}
	return AttrLockName.String(name)
}

// recordError is span.RecordError with the message made UTF-8 (validUTF8):
// an error's text can hold a lock's name (the server's refusal of a
// fencing-token counter names its key), and one invalid string fails the
// export of the whole batch of spans.
func recordError(span trace.Span, err error) {
	if err == nil {
		return
	}
	msg := err.Error()
	if utf8.ValidString(msg) {
		span.RecordError(err)
		return
	}
	// The event RecordError adds, with the same type.
	t := reflect.TypeOf(err)
	typ := t.String()
	if t.PkgPath() != "" || t.Name() != "" {
		typ = t.PkgPath() + "." + t.Name()
	}
	span.AddEvent("exception", trace.WithAttributes(attribute.String("exception.type", typ),
		attribute.String("exception.message", validUTF8(msg))))
}

// validUTF8 is s with each byte that is not part of valid UTF-8 written as
// Go escapes it, \xff: the rest of the text is left as it is.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// AcquireStart starts the "scriptlock.Lock" span.
func (o *Observer) AcquireStart(ctx context.Context, op scriptlock.Op) context.Context {
	ctx, _ = o.tracer.Start(ctx, "scriptlock.Lock", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(AttrPrimitive.String(string(op.Primitive)), lockName(op.Name)))
	return ctx
}

// AcquireEnd records the acquisition and ends its span.
func (o *Observer) AcquireEnd(ctx context.Context, op scriptlock.Op, e scriptlock.AcquireEvent) {
	outcome := e.Outcome.String()
	o.acquireDuration.Record(ctx, e.Wait.Seconds(), o.attrs(op, AttrOutcome.String(outcome)))
	o.attempts.Add(ctx, int64(e.Attempts), o.attrs(op))
	if e.Wakeups > 0 {
		o.wakeups.Add(ctx, int64(e.Wakeups), o.attrs(op, AttrWakeup.String("message")))
	}
	if e.Timers > 0 {
		o.wakeups.Add(ctx, int64(e.Timers), o.attrs(op, AttrWakeup.String("timer")))
	}
	if e.Retries > 0 {
		o.retries.Add(ctx, int64(e.Retries), o.attrs(op, AttrCall.String("acquire")))
	}
	if e.Outcome == scriptlock.Acquired && op.Primitive.Holds() {
		o.held.Add(ctx, 1, o.attrs(op))
	}
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		span.SetAttributes(AttrOutcome.String(outcome), AttrAttempts.Int(e.Attempts))
		if e.Retries > 0 {
			span.SetAttributes(AttrRetries.Int(e.Retries))
		}
		if e.Token > 0 {
			span.SetAttributes(AttrFencingToken.Int64(e.Token))
		}
		switch e.Outcome {
		case scriptlock.Failed, scriptlock.TimedOut:
			recordError(span, e.Err)
			span.SetStatus(codes.Error, outcome)
		}
	}
	span.End()
}

// ReleaseStart starts the "scriptlock.Unlock" span.
func (o *Observer) ReleaseStart(ctx context.Context, op scriptlock.Op) context.Context {
	ctx, _ = o.tracer.Start(ctx, "scriptlock.Unlock", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(AttrPrimitive.String(string(op.Primitive)), lockName(op.Name)))
	return ctx
}

// ReleaseEnd records the release and ends its span.
func (o *Observer) ReleaseEnd(ctx context.Context, op scriptlock.Op, e scriptlock.ReleaseEvent) {
	outcome := "released"
	switch {
	case e.GivenBack && (e.Err == nil || errors.Is(e.Err, scriptlock.ErrNotHeld)):
		// The engine's, after a MultiLock's or RedLock's loss; one that
		// found the member lost too is no error of the program's.
		outcome, e.Err = "given_back", nil
	case errors.Is(e.Err, scriptlock.ErrNotHeld):
		outcome = "not_held"
	case e.Err != nil:
		outcome = "error"
	}
	o.releaseDuration.Record(ctx, e.Duration.Seconds(), o.attrs(op, AttrOutcome.String(outcome)))
	if e.Retries > 0 {
		o.retries.Add(ctx, int64(e.Retries), o.attrs(op, AttrCall.String("release")))
	}
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		span.SetAttributes(AttrOutcome.String(outcome))
		if e.Retries > 0 {
			span.SetAttributes(AttrRetries.Int(e.Retries))
		}
		if e.Err != nil {
			recordError(span, e.Err)
			span.SetStatus(codes.Error, outcome)
		}
	}
	span.End()
}

// HoldEnd records the hold's duration and, for a loss or an expiry, adds the
// "scriptlock.lock.lost" event to the span current at acquisition.
func (o *Observer) HoldEnd(ctx context.Context, op scriptlock.Op, e scriptlock.HoldEvent) {
	cause := e.Cause.String()
	o.held.Add(context.WithoutCancel(ctx), -1, o.attrs(op))
	o.holdDuration.Record(context.WithoutCancel(ctx), e.Held.Seconds(), o.attrs(op, AttrEndCause.String(cause)))
	if e.Cause != scriptlock.EndLost && e.Cause != scriptlock.EndExpired {
		return
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := []attribute.KeyValue{AttrPrimitive.String(string(op.Primitive)), lockName(op.Name),
			AttrEndCause.String(cause), attribute.Float64("scriptlock.hold.duration", e.Held.Seconds())}
		if e.Err != nil {
			attrs = append(attrs, attribute.String("exception.message", validUTF8(e.Err.Error())))
		}
		span.AddEvent("scriptlock.lock.lost", trace.WithAttributes(attrs...))
	}
}

// Renewal records one watchdog round trip.
func (o *Observer) Renewal(e scriptlock.RenewalEvent) {
	ctx := context.Background()
	o.renewDuration.Record(ctx, e.Duration.Seconds())
	o.renewBatch.Record(ctx, int64(e.Batch))
	for _, r := range []struct {
		n       int
		outcome string
	}{{e.Renewed, "renewed"}, {e.Lost, "lost"}, {e.Failed, "failed"}, {e.Ended, "ended"}} {
		if r.n > 0 {
			o.renewals.Add(ctx, int64(r.n), metric.WithAttributes(AttrOutcome.String(r.outcome)))
		}
	}
}

// Guard records one failover-guard wait.
func (o *Observer) Guard(e scriptlock.GuardEvent) {
	ctx := context.Background()
	outcome := "acknowledged"
	if !e.Acknowledged {
		outcome = "not_replicated"
	}
	attr := metric.WithAttributes(AttrOutcome.String(outcome))
	o.guardDuration.Record(ctx, e.Duration.Seconds(), attr)
	o.guards.Add(ctx, 1, attr)
}

// MiddlewareOutcome counts one request by its outcome. Pass it as echolock's
// Config.OnOutcome or IdempotencyConfig.OnOutcome, or to grpclock.WithOutcome
// or grpclock.WithIdempotencyOutcome.
func (o *Observer) MiddlewareOutcome(ctx context.Context, outcome scriptlock.RequestOutcome) {
	o.requests.Add(ctx, 1, metric.WithAttributes(AttrOutcome.String(string(outcome))))
}
