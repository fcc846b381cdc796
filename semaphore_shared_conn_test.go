package scriptlock

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Two Clients of one process on one rueidis client subscribe to a
// semaphore's channel on the same pub/sub connection, where the UNSUBSCRIBE
// one sends when its last waiter leaves ends the other's subscription too,
// confirmed or not yet. A wait whose subscription ended before the server
// confirmed it subscribes again: it must not fail with ErrClosed on an open
// Client.
func TestSemaphoreTwoClientsOneRueidisClient(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 30*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for k := range 2 {
		s := mustSem(t, newTestClient(t, rc, prefix), "one-connection")
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Short waits: each joins and leaves the channel many times.
				for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
					err := s.TryAcquire(ctx, 1, time.Duration(1+k)*time.Millisecond)
					if err != nil && !errors.Is(err, ErrNotAcquired) {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("TryAcquire on an open Client: %v", err)
	}
}
