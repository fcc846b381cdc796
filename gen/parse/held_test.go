package parse

import (
	"fmt"
	"strings"
	"testing"
)

// Held lists the literals a local may hold on some paths, bounded: each is
// checked at each use of the local, so a local given thousands of literals
// in ifs and passed thousands of times would take the checker quadratic
// time (2,000 of each took 17 s).
func TestHeldBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("local n = 5\n")
	for i := range 100 {
		fmt.Fprintf(&b, "if redis.call('EXISTS', KEYS[1]) == %d then n = %d end\n", i, i+10)
	}
	b.WriteString("redis.call('EXPIRE', KEYS[1], n)\n")
	f, errs := Parse("x.lua", []byte(b.String()))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	last := f.Calls[len(f.Calls)-1]
	held := last.Args[len(last.Args)-1].Held
	if len(held) == 0 || len(held) > maxAlternatives {
		t.Errorf("n holds %d literals: %v; want 1 to %d", len(held), held, maxAlternatives)
	}
	if held[0] != "5" {
		t.Errorf("n holds %v first; want 5, which it is declared with", held)
	}
}
