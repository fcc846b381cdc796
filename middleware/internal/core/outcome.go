package core

import (
	"context"

	"github.com/scriptlock/scriptlock"
)

// LockOutcome is the outcome of a request whose lock could not be taken
// with err (see ClassifyLockError).
func LockOutcome(ctx context.Context, err error) scriptlock.RequestOutcome {
	switch f, _ := ClassifyLockError(ctx, err); f {
	case Contended:
		return scriptlock.RequestContended
	case Canceled:
		return scriptlock.RequestCanceled
	case Invalid:
		return scriptlock.RequestKeyInvalid
	}
	return scriptlock.RequestRedisDown
}
