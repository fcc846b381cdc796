package middleware

import "context"

// Outcome is what a lock or Idempotency-Key middleware did with one request,
// for metrics (the otel module counts them) and logs. The set is closed and
// small, so it is safe as a metric attribute.
type Outcome string

const (
	// OutcomeLocked: the handler ran under the lock.
	OutcomeLocked Outcome = "locked"
	// OutcomeContended: another request held the lock for the whole wait.
	OutcomeContended Outcome = "contended"
	// OutcomeKeyInvalid: the lock key or Idempotency-Key was missing or invalid.
	OutcomeKeyInvalid Outcome = "key_invalid"
	// OutcomeRedisDown: Redis could not be reached; the request was refused.
	OutcomeRedisDown Outcome = "redis_down"
	// OutcomeFailOpen: Redis could not be reached; the handler ran without the
	// lock because the middleware fails open.
	OutcomeFailOpen Outcome = "fail_open"
	// OutcomeCanceled: the request's context ended while it waited.
	OutcomeCanceled Outcome = "canceled"
	// OutcomeLockLost: the lock was lost while the handler ran.
	OutcomeLockLost Outcome = "lock_lost"
	// OutcomeExecuted: a first request with an Idempotency-Key ran.
	OutcomeExecuted Outcome = "executed"
	// OutcomeReplayed: a completed duplicate got the stored response.
	OutcomeReplayed Outcome = "replayed"
	// OutcomeIdempotencyConflict: a duplicate arrived while the first ran, or
	// the key was used for a different request, or its response could not be
	// stored.
	OutcomeIdempotencyConflict Outcome = "idempotency_conflict"
)

// OutcomeFunc receives the Outcome of each request. It runs on the request's
// path: it must be quick.
type OutcomeFunc func(ctx context.Context, o Outcome)

// LockOutcome is the Outcome of a request whose lock could not be taken
// with err (see ClassifyLockError).
func LockOutcome(ctx context.Context, err error) Outcome {
	switch f, _ := ClassifyLockError(ctx, err); f {
	case Contended:
		return OutcomeContended
	case Canceled:
		return OutcomeCanceled
	}
	return OutcomeRedisDown
}

// Report calls f when it is set.
func (f OutcomeFunc) Report(ctx context.Context, o Outcome) {
	if f != nil {
		f(ctx, o)
	}
}
