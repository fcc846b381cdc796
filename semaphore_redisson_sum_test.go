package scriptlock

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Redisson's addPermits writes its sum as a Lua number, which Redis turns
// into the string it stores. Redis 7.0 writes a sum of 10^17 or more either
// way with %.17g ("9.2233720368547758e+18"); Redis 7.2 and newer, and
// Valkey, write one within ±2^62 as its integer and one past that with
// fpconv_dtoa: its shortest digits (17 at most) followed by up to 7 zeros
// ("9223372036854776000", which is past 2^63 - 1), or with an exponent
// ("1e+19"). Every such string is a count: read as Redisson reads it, and
// no call is ErrWrongKind. The plain forms past 64 bits were refused as no
// count, and a Java service's semaphore became unusable from Go on Redis
// 7.2 and newer.
func TestSemaphoreRedissonSumCounts(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, time.Minute)
	java := newRedissonJava(node.Client(t), 1)
	// Each sum as Redisson's own script writes it on this server, then the
	// strings Redis 7.2 and newer write for the same sums (fpconv_dtoa's
	// output for each double, with Redis's integer path below 2^62).
	var values []string
	for _, sum := range [][2]int64{
		{math.MaxInt64, 0}, {math.MaxInt64, 1}, {math.MaxInt64, math.MaxInt32}, {math.MinInt64, 0},
		{math.MinInt64, -1}, {1 << 62, 1024}, {100000000000000000, 0}, {-123456789012345678, 0},
	} {
		name := fmt.Sprintf("redisson-sum-%d-%d", sum[0], sum[1])
		p := mustPermits(t, c, name)
		node.Do(t, "SET", p.Key(), fmt.Sprint(sum[0]))
		if err := java.permitAddPermits(ctx, p.Key(), sum[1]); err != nil {
			t.Fatalf("Redisson's addPermits(%d) on %d: %v", sum[1], sum[0], err)
		}
		v, err := node.Do(t, "GET", p.Key()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	values = append(values, "9223372036854776000", "9223372039002260000", "-9223372036854776000",
		"4611686018427389000", "12345678901234567000", "99999999999999990000000",
		"1e+19", "1.5e+19", "-5e+18")
	for i, value := range values {
		s := mustSem(t, c, fmt.Sprintf("redisson-sum-%d", i))
		p := mustPermits(t, c, fmt.Sprintf("redisson-sum-%d", i))
		node.Do(t, "SET", s.Key(), value)
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(maxCount)
		if f < maxCount {
			want = int64(f) // -2^63 at least: a long's least
		}
		if n, err := s.AvailablePermits(ctx); err != nil || n != want {
			t.Errorf("Semaphore.AvailablePermits of %q = %d, %v; want %d", value, n, err, want)
		}
		if n, err := p.AvailablePermits(ctx); err != nil || n != want {
			t.Errorf("PermitSemaphore.AvailablePermits of %q = %d, %v; want %d", value, n, err, want)
		}
		if st, err := p.State(ctx); err != nil || st.Available != want {
			t.Errorf("PermitSemaphore.State of %q = %+v, %v; want %d available", value, st, err, want)
		}
		if ok, err := s.TrySetPermits(ctx, 1); err != nil || ok {
			t.Errorf("Semaphore.TrySetPermits beside %q = %v, %v; want false, nil", value, ok, err)
		}
		if n, err := s.DrainPermits(ctx); err != nil || n != want {
			t.Errorf("Semaphore.DrainPermits of %q = %d, %v; want %d", value, n, err, want)
		}
	}
}

// A drain of a count past 2^63 - 1 as Redis 7.2 and newer write Redisson's
// float sums ("9223372036854776000") records the permits it took as an
// integer INCRBY takes, 2^63 - 1, as it records "9.2233720368547758e+18":
// recorded as written, its give-back failed with Redis's "value is not an
// integer or out of range" for the record's whole life.
func TestSemaphoreDrainRedissonSumGivenBack(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	for _, count := range []string{"9223372036854776000", "12345678901234567000", "99999999999999990000000"} {
		s := mustSem(t, c, "drain-sum-"+count)
		node.Do(t, "SET", s.Key(), count)
		if n, err := s.DrainPermits(ctx); err != nil || n != maxCount {
			t.Fatalf("DrainPermits of %s = %d, %v; want %d", count, n, err, int64(maxCount))
		}
		records, err := node.Do(t, "KEYS", "redisson_sc_latch:*"+count+"*").AsStrSlice()
		if err != nil || len(records) != 1 {
			t.Fatalf("drain records of %s: %q, %v", count, records, err)
		}
		// The drain's outcome taken as unknown: its permits go back.
		if _, err := s.undoOnce(ctx, records[0], 0); err != nil {
			t.Fatalf("give-back of a drain of %s: %v", count, err)
		}
		if v, err := node.Do(t, "GET", s.Key()).ToString(); err != nil || v != "9223372036854775807" {
			t.Errorf("count after the drain of %s was given back = %q, %v; want 9223372036854775807", count, v, err)
		}
	}
}
