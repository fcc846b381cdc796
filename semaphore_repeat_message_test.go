package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A call made again after its reply was lost publishes the count again, as
// it finds it: one another client wrote (Redisson's addPermits writes a sum
// of 10^17 or more either way as a float, "-1.152921504606847e+18") was
// published as written, and a Redisson waiter, which reads a message as a
// Long (LongCodec), could not read it. Every message is an integer within
// Java's int range. A string that holds no count ("2.5", "007", by hand)
// is no count to publish: a repeated release is ErrNotCount, a repeated
// give-back answers as its first attempt did, and neither publishes.
func TestSemaphoreRepeatMessageJavaLong(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	id := []byte("0123456789abcdef")
	cases := []struct {
		name string
		run  func(ctx context.Context, t *testing.T, key, channel string) error
	}{
		{"semaphore release", func(ctx context.Context, t *testing.T, key, channel string) error {
			latch := c.recordKey("redisson_sc_latch", key)
			node.Do(t, "SET", latch, "released", "PX", "60000")
			_, err := generated.SemaphoreRelease(ctx, c.rc, key, channel, latch, 1, "publish", time.Minute, false)
			return err
		}},
		{"semaphore undo", func(ctx context.Context, t *testing.T, key, channel string) error {
			latch := c.recordKey("redisson_sc_latch", key)
			node.Do(t, "SET", latch, "undone:2", "PX", "60000")
			_, err := generated.SemaphoreUndo(ctx, c.rc, key, channel, latch, redissonName("redisson_sc_latch", key)+":deleted", time.Minute, "publish")
			return err
		}},
		{"permit release", func(ctx context.Context, t *testing.T, key, channel string) error {
			latch := c.recordKey("redisson_sc_latch", key)
			node.Do(t, "SET", latch, "1", "PX", "60000")
			_, err := generated.PermitRelease(ctx, c.rc, key, redissonSuffix(key, "timeout"), channel, latch, id, "publish", time.Minute)
			return err
		}},
		{"permit undo", func(ctx context.Context, t *testing.T, key, channel string) error {
			record := c.recordKey("redisson_sc_latch", key)
			node.Do(t, "SET", record, "given", "PX", "60000")
			_, err := generated.PermitUndo(ctx, c.rc, key, redissonSuffix(key, "timeout"), channel, record, id, "publish", time.Minute)
			return err
		}},
	}
	for _, tc := range cases {
		for _, count := range []string{"-1.152921504606847e+18", "-1e+17", "-9223372036854775808"} {
			t.Run(tc.name+" "+count, func(t *testing.T) {
				ctx := testCtx(t, 10*time.Second)
				key := mustSem(t, c, strings.ReplaceAll(tc.name, " ", "-")+count).Key()
				channel := redissonName("redisson_sc", key)
				node.Do(t, "SET", key, count)
				msgs := listen(t, node, channel)
				if err := tc.run(ctx, t, key, channel); err != nil {
					t.Fatalf("repeat beside a count of %s: %v", count, err)
				}
				got := strings.TrimPrefix(msgs.next(t, 3*time.Second), channel+" ")
				v, err := strconv.ParseInt(got, 10, 64)
				if err != nil {
					t.Fatalf("a repeat beside a count of %s published %q, which a Redisson waiter cannot read as a Long", count, got)
				}
				if v != int64(int32(v)) {
					t.Fatalf("a repeat beside a count of %s published %d, which a Redisson waiter reads as %d", count, v, int32(v))
				}
			})
		}
		for _, count := range []string{"-3.5", "2.5", "007"} {
			t.Run(tc.name+" "+count, func(t *testing.T) {
				ctx := testCtx(t, 10*time.Second)
				key := mustSem(t, c, strings.ReplaceAll(tc.name, " ", "-")+count).Key()
				channel := redissonName("redisson_sc", key)
				node.Do(t, "SET", key, count)
				msgs := listen(t, node, channel)
				err := tc.run(ctx, t, key, channel)
				if refused := strings.HasSuffix(tc.name, "release"); refused && !errors.Is(err, generated.ErrNotCount) || !refused && err != nil {
					t.Fatalf("repeat beside a count of %s: %v", count, err)
				}
				msgs.quiet(t, 200*time.Millisecond)
			})
		}
	}
}
