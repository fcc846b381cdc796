package scriptlock_test

import (
	"context"
	"log"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
)

// slowLocks logs acquisitions that waited longer than a second; the
// embedded NopObserver covers the other events.
type slowLocks struct{ scriptlock.NopObserver }

func (slowLocks) AcquireEnd(_ context.Context, op scriptlock.Op, e scriptlock.AcquireEvent) {
	if e.Wait > time.Second {
		log.Printf("%s %q: %s after %s and %d attempts", op.Primitive, op.Name, e.Outcome, e.Wait, e.Attempts)
	}
}

// An Observer of your own, here reporting slow acquisitions. For
// OpenTelemetry use the module github.com/scriptlock/scriptlock/otel.
func ExampleWithObserver() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	client, err := scriptlock.New(rc, scriptlock.WithObserver(slowLocks{}))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}
