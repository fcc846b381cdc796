// Package scriptlockotel exports what scriptlock's locks do as OpenTelemetry
// metrics and spans. It is a module of its own, so programs that do not use
// OpenTelemetry never download it.
//
//	obs, err := scriptlockotel.New()      // global MeterProvider and TracerProvider
//	client, err := scriptlock.New(rc, scriptlock.WithObserver(obs))
//
// Metrics carry bounded attributes only: the primitive, the outcome, and
// where a metric has them the wake-up (message, timer), the call made again
// (acquire, release) and how a hold ended (unlocked, lost, expired, closed).
// The lock name, which is often derived from requests and so unbounded, is added
// to the metrics of calls and holds (scriptlock.lock.*) only with
// WithLockNameAttribute(true); spans always carry it.
//
// Lock and Unlock calls become spans named "scriptlock.Lock" and
// "scriptlock.Unlock", children of the span in the caller's context (an
// otelecho or otelgrpc request span, for example). A hold that ends by loss
// or expiry adds the event "scriptlock.lock.lost" to the span that was
// current when the lock was acquired, so a trace shows where protection
// ended.
package scriptlockotel
