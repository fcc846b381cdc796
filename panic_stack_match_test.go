package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:noinline
func groupOnePanics() { panic("group one panicked") }

//go:noinline
func groupTwoPanics() { panic("group two panicked") }

// Two slot groups of a round's guarded renewals panic (as a Cluster's
// guarded batch runs them, each on a goroutine of its own and its calls on
// one more, cuttable), and the panic that goes on to the round is the
// second's, which reached the batch first: the round logs it with its own
// stack, not the other group's, kept first.
func TestCarriedPanicLoggedWithItsStack(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	w := &watchdog{log: slog.New(slog.NewTextHandler(&logs, nil))}
	fail := func(error) int { return -1 }
	_, ok := w.unpanicked(context.Background(), func(ctx context.Context) []renewReply {
		var caught firstPanic
		var wg sync.WaitGroup
		oneKept, oneOn := make(chan struct{}), make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			caught.runIn(ctx, func() {
				// Group one's goroutine is slow to go on with its panic.
				defer func() { close(oneKept); <-oneOn }()
				cuttable(ctx, nil, "group one", func() int { groupOnePanics(); return 0 }, fail)
			})
		}()
		<-oneKept
		go func() {
			defer wg.Done()
			caught.runIn(ctx, func() {
				cuttable(ctx, nil, "group two", func() int { groupTwoPanics(); return 0 }, fail)
			})
		}()
		eventually(5*time.Second, func() bool {
			caught.mu.Lock()
			defer caught.mu.Unlock()
			return caught.set
		})
		close(oneOn)
		wg.Wait()
		panic(caught.value)
	})
	if ok {
		t.Fatal("the round did not panic")
	}
	line := firstLine(logs.String(), "panic recovered")
	if !strings.Contains(line, `panic="group two panicked"`) {
		t.Fatalf("the round logged another panic than the one carried to it:\n%s", line)
	}
	if !strings.Contains(line, "groupTwoPanics") {
		t.Fatalf("the panic of group two was logged with another stack than its own:\n%s", line)
	}
}
