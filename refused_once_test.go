package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A recorded call (a release, AddPermits, SetPermits, CountDown, a Delete,
// a TrySet) that a script refuses with an error it declares (NOT_COUNT:
// another kind of lock holds the name; RANGE: the count would overflow) has
// its answer: it fails at once, typed, after one run of the script, not after
// three more runs spread over 300 ms as if its reply had been lost.
func TestRecordedCallRefusedByScriptOnce(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	other := mustSem(t, c, "refused-other")
	node.Do(t, "SET", other.Key(), "someone:else")
	big := mustSem(t, c, "refused-big")
	if _, err := big.TrySetPermits(ctx, maxCount); err != nil {
		t.Fatal(err)
	}
	const id = "0123456789abcdef0123456789abcdef"
	calls := []struct {
		name string
		want error
		do   func(ctx context.Context) error
	}{
		{"Semaphore.Release on another kind", ErrWrongKind, func(ctx context.Context) error { return other.Release(ctx, 1) }},
		{"Semaphore.AddPermits beyond 2^53-1", ErrInvalidArgument, func(ctx context.Context) error {
			_, err := big.AddPermits(ctx, 1)
			return err
		}},
		{"Semaphore.Release beyond 2^53-1", ErrInvalidArgument, func(ctx context.Context) error { return big.Release(ctx, 1) }},
		{"Semaphore.DrainPermits on another kind", ErrWrongKind, func(ctx context.Context) error {
			_, err := other.DrainPermits(ctx)
			return err
		}},
		{"Semaphore.Delete on another kind", ErrWrongKind, func(ctx context.Context) error {
			_, err := other.Delete(ctx)
			return err
		}},
		{"Semaphore.TrySetPermits on another kind", ErrWrongKind, func(ctx context.Context) error {
			_, err := mustSem(t, c, "refused-other").TrySetPermits(ctx, 1)
			return err
		}},
		{"PermitSemaphore.Release on another kind", ErrWrongKind, func(ctx context.Context) error {
			return mustPermits(t, c, "refused-other").Release(ctx, id)
		}},
		{"PermitSemaphore.SetPermits on another kind", ErrWrongKind, func(ctx context.Context) error {
			return mustPermits(t, c, "refused-other").SetPermits(ctx, 1)
		}},
		{"CountDownLatch.CountDown on another kind", ErrWrongKind, func(ctx context.Context) error {
			return mustLatch(t, c, "refused-other").CountDown(ctx)
		}},
	}
	// Calls that reserve their record first, a script run of its own
	// (reservedCall), and drop the reservation once refused, another.
	reserving := map[string]bool{"Semaphore.Delete on another kind": true, "Semaphore.DrainPermits on another kind": true,
		"PermitSemaphore.SetPermits on another kind": true}
	for _, call := range calls {
		if err := call.do(ctx); err == nil { // scripts loaded
			t.Fatalf("%s: no error", call.name)
		}
		before := commandCalls(t, node)
		start := time.Now()
		err := call.do(ctx)
		took := time.Since(start)
		after := commandCalls(t, node)
		if !errors.Is(err, call.want) {
			t.Errorf("%s: %v, want %v", call.name, err, call.want)
		}
		want := int64(1)
		if reserving[call.name] {
			want = 3 // the reservation, the call, the reservation dropped
		}
		if runs := after["evalsha"] + after["eval"] - before["evalsha"] - before["eval"]; runs != want {
			t.Errorf("%s: the scripts ran %d times in %s, want %d: a refusal is an answer, not a lost reply", call.name, runs, took.Round(time.Millisecond), want)
		}
	}
	if v := countAt(t, node, big.Key()); v != maxCount {
		t.Errorf("count after the refused calls = %d, want %d", v, int64(maxCount))
	}
}
