package scriptlock

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A latch's key holding a string that Lua reads as a number but Redis cannot
// count down (NaN, an infinity, a fraction, hex, an exponent, spaces, a
// leading zero, past 64 bits, or -2^63, which DECR cannot lower) holds no
// count: every latch call is ErrWrongKind and changes nothing. Lua's tonumber took them for counts: Count read "nan" as
// -2^63 and Await found such a latch open, CountDown failed with Redis's
// untyped "value is not an integer", and Delete deleted the key.
func TestLatchValueNotInteger(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := redistest.Prefix(t)
	c, err := New(node.Client(t), WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := testCtx(t, 30*time.Second)
	calls := []struct {
		name string
		do   func(ctx context.Context, l *CountDownLatch) error
	}{
		{"TrySetCount", func(ctx context.Context, l *CountDownLatch) error {
			_, err := l.TrySetCount(ctx, 1)
			return err
		}},
		{"CountDown", func(ctx context.Context, l *CountDownLatch) error { return l.CountDown(ctx) }},
		{"Count", func(ctx context.Context, l *CountDownLatch) error {
			_, err := l.Count(ctx)
			return err
		}},
		{"Await", func(ctx context.Context, l *CountDownLatch) error { return l.Await(ctx) }},
		{"AwaitTimeout", func(ctx context.Context, l *CountDownLatch) error {
			_, err := l.AwaitTimeout(ctx, 100*time.Millisecond)
			return err
		}},
		{"Delete", func(ctx context.Context, l *CountDownLatch) error {
			_, err := l.Delete(ctx)
			return err
		}},
	}
	snapshot := func() map[string]string {
		t.Helper()
		keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, k := range keys {
			v, err := node.Do(t, "DUMP", k).ToString()
			if err != nil {
				t.Fatalf("DUMP %s: %v", k, err)
			}
			m[k] = v
		}
		return m
	}
	for _, value := range []string{"nan", "-nan", "inf", "1.5", "0x10", " 2", "1e3", "007", "-0", "9223372036854775808", "99999999999999999999", "-9223372036854775808"} {
		l := mustLatch(t, c, "not-integer")
		node.Do(t, "SET", l.Key(), value)
		before := snapshot()
		for _, cl := range calls {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := cl.do(cctx, l)
			cancel()
			if !errors.Is(err, ErrWrongKind) {
				t.Errorf("%s on a latch key holding %q: %v; want ErrWrongKind", cl.name, value, err)
			}
			if after := snapshot(); !maps.Equal(before, after) {
				t.Errorf("%s on a latch key holding %q changed Redis: %d keys before, %d after", cl.name, value, len(before), len(after))
				before = after
			}
		}
		node.Do(t, "DEL", l.Key())
	}
	// The counts Redis counts still count, a long's extremes included.
	l := mustLatch(t, c, "integer")
	for _, value := range []string{"0", "-5", "-9223372036854775807", "9223372036854775807"} {
		node.Do(t, "SET", l.Key(), value)
		if _, err := l.Count(ctx); err != nil {
			t.Errorf("Count of %q: %v", value, err)
		}
		if err := l.CountDown(ctx); err != nil {
			t.Errorf("CountDown of %q: %v", value, err)
		}
	}
}
