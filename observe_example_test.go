package scriptlock_test

import (
	"context"
	"fmt"
	"log"

	"github.com/scriptlock/scriptlock"
)

// printAcquisitions prints every acquisition's outcome; the embedded
// NopObserver covers the other events. Observer methods run on the lock's
// path: a real one records a metric or a log line and returns at once.
type printAcquisitions struct{ scriptlock.NopObserver }

func (printAcquisitions) AcquireEnd(_ context.Context, op scriptlock.Op, e scriptlock.AcquireEvent) {
	fmt.Printf("%s %q: %s after %d attempt(s)\n", op.Primitive, op.Name, e.Outcome, e.Attempts)
}

// An Observer of your own, here printing acquisitions. For OpenTelemetry use
// the module github.com/scriptlock/scriptlock/otel.
func ExampleWithObserver() {
	locks, closeLocks := connect(scriptlock.WithObserver(printAcquisitions{}))
	defer closeLocks()
	ctx := context.Background()

	m, err := locks.Mutex("observed")
	if err != nil {
		log.Fatal(err)
	}
	lctx, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, _ = m.Lock(lctx) // re-entry
	_, _ = m.TryLock(context.Background(), 0)
	_ = m.Unlock(lctx)
	_ = m.Unlock(lctx)
	// Output:
	// mutex "observed": acquired after 1 attempt(s)
	// mutex "observed": reentered after 1 attempt(s)
	// mutex "observed": contended after 1 attempt(s)
}
