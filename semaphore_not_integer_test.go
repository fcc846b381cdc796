package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A semaphore's key holding a string that Lua reads as a number but that is
// neither a count Redis's INCRBY takes nor a float Redisson's addPermits
// writes (NaN, an infinity, a fraction, hex, "1e3", spaces, a leading zero,
// past 64 bits) holds no count: every call of either semaphore is
// ErrWrongKind and changes nothing. Lua's tonumber took them for counts:
// Release and AddPermits failed with Redis's untyped "value is not an
// integer", DrainPermits drained "nan" as -2^63, and AvailablePermits and
// State read it so.
func TestSemaphoreValueNotInteger(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	// One connection for the 400-odd cases' setup and dumps.
	direct := connCommander{node.Client(t)}
	ctx := testCtx(t, 5*time.Minute)
	id := randomID()
	type call struct {
		name string
		do   func(ctx context.Context, s *Semaphore, p *PermitSemaphore) error
	}
	calls := []call{
		{"Semaphore.TrySetPermits", func(ctx context.Context, s *Semaphore, _ *PermitSemaphore) error {
			_, err := s.TrySetPermits(ctx, 1)
			return err
		}},
		{"Semaphore.Acquire", func(ctx context.Context, s *Semaphore, _ *PermitSemaphore) error { return s.Acquire(ctx, 1) }},
		{"Semaphore.TryAcquire", func(ctx context.Context, s *Semaphore, _ *PermitSemaphore) error { return s.TryAcquire(ctx, 1, 0) }},
		{"Semaphore.Release", func(ctx context.Context, s *Semaphore, _ *PermitSemaphore) error { return s.Release(ctx, 1) }},
		{"Semaphore.AddPermits", func(ctx context.Context, s *Semaphore, _ *PermitSemaphore) error {
			_, err := s.AddPermits(ctx, 1)
			return err
		}},
		{"Semaphore.AddPermits(-1)", func(ctx context.Context, s *Semaphore, _ *PermitSemaphore) error {
			_, err := s.AddPermits(ctx, -1)
			return err
		}},
		{"Semaphore.DrainPermits", func(ctx context.Context, s *Semaphore, _ *PermitSemaphore) error {
			_, err := s.DrainPermits(ctx)
			return err
		}},
		{"Semaphore.AvailablePermits", func(ctx context.Context, s *Semaphore, _ *PermitSemaphore) error {
			_, err := s.AvailablePermits(ctx)
			return err
		}},
		{"Semaphore.Delete", func(ctx context.Context, s *Semaphore, _ *PermitSemaphore) error {
			_, err := s.Delete(ctx)
			return err
		}},
		{"PermitSemaphore.TrySetPermits", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			_, err := p.TrySetPermits(ctx, 1)
			return err
		}},
		{"PermitSemaphore.AddPermits", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			_, err := p.AddPermits(ctx, 1)
			return err
		}},
		{"PermitSemaphore.AddPermits(-1)", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			_, err := p.AddPermits(ctx, -1)
			return err
		}},
		{"PermitSemaphore.SetPermits", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			return p.SetPermits(ctx, 3)
		}},
		{"PermitSemaphore.Acquire", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			_, err := p.Acquire(ctx, time.Minute)
			return err
		}},
		{"PermitSemaphore.TryAcquire", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			_, err := p.TryAcquire(ctx, time.Minute, 0)
			return err
		}},
		{"PermitSemaphore.Release", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error { return p.Release(ctx, id) }},
		{"PermitSemaphore.Extend", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			return p.Extend(ctx, id, time.Minute)
		}},
		{"PermitSemaphore.AvailablePermits", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			_, err := p.AvailablePermits(ctx)
			return err
		}},
		{"PermitSemaphore.State", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			_, err := p.State(ctx)
			return err
		}},
		{"PermitSemaphore.Delete", func(ctx context.Context, _ *Semaphore, p *PermitSemaphore) error {
			_, err := p.Delete(ctx)
			return err
		}},
	}
	values := []string{"nan", "-nan", "inf", "-inf", "2.5", "-3.5", "0x10", "1e3", "1e+16", "1e+400", " 2", "2 ", "007", "-0", "+1",
		"9223372036854775808", "-9223372036854775809", "99999999999999999999", "", "-", "1000000000000000000000000000000"}
	for i, value := range values {
		s := mustSem(t, c, fmt.Sprintf("not-integer-%d", i))
		p := mustPermits(t, c, fmt.Sprintf("not-integer-%d", i))
		raw, _ := permitWire(id)
		for _, cl := range calls {
			mustDo(t, direct, "FLUSHALL")
			mustDo(t, direct, "SET", s.Key(), value)
			// A permit held, for Release and Extend to find.
			mustDo(t, direct, "ZADD", redissonSuffix(p.Key(), "timeout"), fmt.Sprint(time.Now().Add(time.Hour).UnixMilli()), string(raw))
			before := dumpKeys(t, direct)
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			err := cl.do(cctx, s, p)
			cancel()
			if !errors.Is(err, ErrWrongKind) {
				t.Errorf("%s on a key holding %q: %v; want ErrWrongKind", cl.name, value, err)
			}
			if after := dumpKeys(t, direct); after != before {
				t.Errorf("%s on a key holding %q changed\n%s\ninto\n%s", cl.name, value, before, after)
			}
		}
	}
	// Counts still count: Redis's integers, a long's extremes included, and
	// Redisson's float sums.
	for _, tc := range []struct {
		value string
		want  int64
	}{
		{"0", 0}, {"-5", -5}, {"9223372036854775807", maxCount}, {"-9223372036854775808", math.MinInt64},
		{"1e+17", maxCount}, {"-1e+17", -1e17}, {"-1.2345678901234568e+17", -123456789012345680},
	} {
		node.Do(t, "FLUSHALL")
		s := mustSem(t, c, "integer")
		p := mustPermits(t, c, "integer")
		node.Do(t, "SET", s.Key(), tc.value)
		if n, err := s.AvailablePermits(ctx); err != nil || n != tc.want {
			t.Errorf("Semaphore.AvailablePermits of %q = %d, %v; want %d", tc.value, n, err, tc.want)
		}
		if n, err := p.AvailablePermits(ctx); err != nil || n != tc.want {
			t.Errorf("PermitSemaphore.AvailablePermits of %q = %d, %v; want %d", tc.value, n, err, tc.want)
		}
		if st, err := p.State(ctx); err != nil || st.Available != tc.want {
			t.Errorf("PermitSemaphore.State of %q = %+v, %v; want %d available", tc.value, st, err, tc.want)
		}
		if n, err := s.DrainPermits(ctx); err != nil || n != tc.want {
			t.Errorf("Semaphore.DrainPermits of %q = %d, %v; want %d", tc.value, n, err, tc.want)
		}
	}
}
