package scriptlock

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Redisson waiter reads a semaphore's message as a Long and wakes
// min(waiting acquirers, message.intValue()) of its acquirers
// (SemaphorePubSub.onMessage): a count past 2^31 - 1 wraps to 0 or below,
// which wakes none of them (a negative one throws in the listener), and
// Redisson's acquire() waits for messages alone. Every message a Go call
// publishes while permits are free must read as at least 1 there.
func TestSemaphoreMessageBeyondJavaInt(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	var permitID string // the permit case's, from its setup to its run
	cases := []struct {
		name  string
		setup func(ctx context.Context, t *testing.T, name string) // before listening
		run   func(ctx context.Context, t *testing.T, name string)
	}{
		{"semaphore try set", nil, func(ctx context.Context, t *testing.T, name string) {
			if _, err := mustSem(t, c, name).TrySetPermits(ctx, 1<<32); err != nil {
				t.Fatal(err)
			}
		}},
		{"semaphore release", nil, func(ctx context.Context, t *testing.T, name string) {
			if err := mustSem(t, c, name).Release(ctx, 1<<31); err != nil {
				t.Fatal(err)
			}
		}},
		{"semaphore add", nil, func(ctx context.Context, t *testing.T, name string) {
			if _, err := mustSem(t, c, name).AddPermits(ctx, 1<<32); err != nil {
				t.Fatal(err)
			}
		}},
		{"permit try set", nil, func(ctx context.Context, t *testing.T, name string) {
			if _, err := mustPermits(t, c, name).TrySetPermits(ctx, 1<<32); err != nil {
				t.Fatal(err)
			}
		}},
		{"permit add", nil, func(ctx context.Context, t *testing.T, name string) {
			if _, err := mustPermits(t, c, name).AddPermits(ctx, 1<<32); err != nil {
				t.Fatal(err)
			}
		}},
		{"permit set", nil, func(ctx context.Context, t *testing.T, name string) {
			if err := mustPermits(t, c, name).SetPermits(ctx, 1<<32); err != nil {
				t.Fatal(err)
			}
		}},
		{"permit release", func(ctx context.Context, t *testing.T, name string) {
			p := mustPermits(t, c, name)
			if _, err := p.TrySetPermits(ctx, 1<<32); err != nil {
				t.Fatal(err)
			}
			id, err := p.Acquire(ctx, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			permitID = id
		}, func(ctx context.Context, t *testing.T, name string) {
			if err := mustPermits(t, c, name).Release(ctx, permitID); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 10*time.Second)
			name := strings.ReplaceAll(tc.name, " ", "-")
			channel := redissonName("redisson_sc", mustSem(t, c, name).Key())
			if tc.setup != nil {
				tc.setup(ctx, t, name)
			}
			msgs := listen(t, node, channel)
			tc.run(ctx, t, name)
			got := strings.TrimPrefix(msgs.next(t, 3*time.Second), channel+" ")
			v, err := strconv.ParseInt(got, 10, 64)
			if err != nil {
				t.Fatalf("message %q is not a number", got)
			}
			if java := int32(v); java < 1 {
				t.Fatalf("published %q with permits free: a Redisson waiter reads it as %d and wakes none of its acquirers", got, java)
			}
		})
	}
}
