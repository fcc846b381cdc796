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

// HeldOutcome is the outcome of a request that held its lock, whose
// context is lctx: lock_lost if the lock was lost meanwhile, else locked.
func HeldOutcome(lctx context.Context) scriptlock.RequestOutcome {
	if LockLost(lctx) {
		return scriptlock.RequestLockLost
	}
	return scriptlock.RequestLocked
}
