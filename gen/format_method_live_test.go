package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestFormatMethodAgreesWithServer: ('%s:x'):format(KEYS[1]) is
// string.format('%s:x', KEYS[1]), a key extended on the right, which Redis
// runs; the checker must take it as such (and have the callers check its
// hash tag), and a number it formats with %d as an argument read as a
// number, as for string.format.
func TestFormatMethodAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const src = "-- Get reads a counter's value.\n-- @key counter\n-- @arg n int64\n-- @return string?\n" +
		"redis.call('SET', ('%s:x'):format(KEYS[1]), ('%d'):format(ARGV[1]))\nreturn redis.call('GET', ('%s:x'):format(KEYS[1]))\n"
	out, err := Generate("generated", []File{{Path: "scripts/get.lua", Source: []byte(src)}})
	if err != nil {
		t.Fatalf("the checker refused the script: %v", err)
	}
	code := string(out["get.lua.go"])
	for _, want := range []string{`checkHashTags("Get", "counter", counter)`, `checkNumbers("Get", "n", n)`} {
		if !strings.Contains(code, want) {
			t.Errorf("Get does not check %s before sending", want)
		}
	}
	v, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}c").Arg("42").Build()).ToString()
	if err != nil || v != "42" {
		t.Errorf("the server replied %q, %v; want 42", v, err)
	}
}
