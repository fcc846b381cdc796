package parse

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestRecursiveReturnsBounded: what a call of a local function may return
// is followed through its own calls (return f(n - 1)); each return of such
// a call must not copy what the function returns again, or a recursive
// function with a few dozen returns makes the checker allocate memory that
// doubles with each (and never end). Parsing one with twice the returns
// allocates about twice as much, not thousands of times as much.
func TestRecursiveReturnsBounded(t *testing.T) {
	src := func(n int) []byte {
		var b strings.Builder
		b.WriteString("local function f(n)\n  if n == 0 then return ARGV[3] end\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "  if n == %d then return f(n - 1) end\n", i)
		}
		b.WriteString("  return 'x'\nend\nredis.call('SET', KEYS[1], f(3))\n")
		return []byte(b.String())
	}
	allocated := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, errs := Parse("x.lua", src(n)); len(errs) != 0 {
			t.Fatalf("errors: %v", errs)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(9), allocated(18)
	if large > 8*small {
		t.Errorf("parsing 18 returns of a recursive call allocated %d bytes, 9 of them %d: %.0f times as much", large, small, float64(large)/float64(small))
	}
}
