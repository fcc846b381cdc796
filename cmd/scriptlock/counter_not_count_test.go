package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestInspectCounterAsSemaphoresRead: inspect reads a string under a name as
// a count exactly when the semaphores do (an integer INCRBY takes, or a
// float sum Redisson's addPermits writes for 10^17 or more either way, as
// Redis 7.0 or 7.2 and newer write it). A string Lua would read as a number
// but that holds no count ("nan", "2.5", "0x10", " 2", "007", "-0", "+1",
// past 64 bits) is shown as no lock layout, as every semaphore call on it is
// ErrWrongKind, not as a count; a float sum is shown as a count (at the
// int64 nearest it), as the semaphores count it.
func TestInspectCounterAsSemaphoresRead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{name: "single", url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, time.Minute)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	for i, tc := range []struct {
		value string
		count *int64 // nil: no count
	}{
		{"nan", nil}, {"-nan", nil}, {"inf", nil}, {"2.5", nil}, {"0x10", nil}, {" 2", nil}, {"2 ", nil},
		{"007", nil}, {"-0", nil}, {"+1", nil}, {"1e3", nil}, {"1e+16", nil},
		{"9223372036854775808", nil}, {"99999999999999999999", nil},
		{"42", ptr(42)}, {"-3", ptr(-3)}, {"0", ptr(0)}, {"9223372036854775807", ptr(math.MaxInt64)},
		{"1e+17", ptr(100000000000000000)}, {"-1.2345678901234568e+17", ptr(-123456789012345680)},
		{"9.2233720368547758e+18", ptr(math.MaxInt64)}, {"9223372036854776000", ptr(math.MaxInt64)},
		{"-9223372036854776000", ptr(math.MinInt64)}, {"12345678901234567000", ptr(math.MaxInt64)},
	} {
		name := fmt.Sprintf("count-%d", i)
		s := mustSem(t, c, name)
		node.Do(t, "SET", s.Key(), tc.value)
		_, semErr := s.AvailablePermits(ctx)
		if (tc.count == nil) != errors.Is(semErr, scriptlock.ErrWrongKind) {
			t.Fatalf("%q: Semaphore.AvailablePermits %v; the test's table says count %v", tc.value, semErr, tc.count != nil)
		}
		r := inspectJSON(t, ctx, d, prefix, name)
		text := cli(ctx, d, "", "inspect", "--key-prefix", prefix, name).out
		switch {
		case tc.count == nil && (r.Kind != kindUnknown || r.Counter != nil || strings.Contains(text, "COUNT")):
			t.Errorf("%q, no count to the semaphores (AvailablePermits: %v): inspect kind %s, counter %v\n%s", tc.value, semErr, r.Kind, show(r.Counter), text)
		case tc.count != nil && (r.Kind != kindCounter || r.Counter == nil || *r.Counter != *tc.count ||
			!strings.Contains(text, fmt.Sprintf("COUNT   %d\n", *tc.count))):
			t.Errorf("%q, a count to the semaphores: inspect kind %s, counter %v; want counter %d\n%s", tc.value, r.Kind, show(r.Counter), *tc.count, text)
		}
		// With a permit lease beside it, the name is a PermitSemaphore
		// whose State reads the count, or no lock layout when it has none.
		p := mustPermits(t, c, name)
		node.Do(t, "ZADD", layout.For(p.Key(), false).Permits, fmt.Sprint(time.Now().Add(time.Hour).UnixMilli()), "0123456789abcdef")
		_, stErr := p.State(ctx)
		r = inspectJSON(t, ctx, d, prefix, name)
		if got := r.Kind == kindPermits; got != (stErr == nil) {
			t.Errorf("%q with a permit lease: PermitSemaphore.State %v; inspect kind %s, counter %v", tc.value, stErr, r.Kind, show(r.Counter))
		}
	}
}

func ptr(v int64) *int64 { return &v }

func show(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
