package gen

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3HelperCalledAfterAgreesWithServer: a local function written
// above redis.setresp(3) runs in the protocol of the place it is called
// from: called below it, its replies are in RESP3 (a hash's a map, read as
// h.map), called above it in RESP2. The checker must pass h.map and refuse
// h[1] exactly where the server hands the helper a RESP3 map.
func TestResp3HelperCalledAfterAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Hset().Key("{t}h").FieldValue().FieldValue("a", "1").FieldValue("b", "2").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const byMap = "local function count(k)\n  local h = redis.call('HGETALL', k)\n  local n = 0\n  for _ in pairs(h.map) do n = n + 1 end\n  return n\nend\n"
	const byIndex = "local function count(k)\n  local h = redis.call('HGETALL', k)\n  return #h / 2\nend\n"
	for _, tc := range []struct {
		name, body, want string
		reply            int64
	}{
		{"map called after", byMap + "redis.setresp(3)\nreturn count(KEYS[1]) + count(KEYS[1])", "", 4},
		{"map called after, in a condition", byMap + "redis.setresp(3)\nif count(KEYS[1]) > 1 then\n  return 1\nend\nreturn 0", "", 1},
		{"map called by a helper called after", byMap + "local function both(k)\n  return count(k) * 2\nend\nredis.setresp(3)\nreturn both(KEYS[1])", "", 4},
		{"index called after", byIndex + "redis.setresp(3)\nreturn count(KEYS[1])",
			"scripts/x.lua:6:10: # of h (the reply of HGETALL), which after redis.setresp(3) (line 8) is a map, handed to Lua as a table {map = {...}} with nothing at 1, 2, ...: its length is always 0; count it with a command (HLEN, SCARD, ...), or call HGETALL before redis.setresp(3)", 0},
		{"index called before", byIndex + "local n = count(KEYS[1])\nredis.setresp(3)\nreturn n", "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X counts.\n-- @key k\n-- @return int64\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			n, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}h").Build()).AsInt64()
			if err != nil || n != tc.reply {
				t.Errorf("the server replied %d, %v; want %d", n, err, tc.reply)
			}
		})
	}
}

// TestResp3NestedHelpersCheckedQuickly: the protocol each local function
// starts in is found once, not again for every call of every function that
// calls it: a script of helpers calling helpers, each several times, is
// checked at once.
func TestResp3NestedHelpersCheckedQuickly(t *testing.T) {
	var b strings.Builder
	b.WriteString("-- X counts.\n-- @key k\n-- @return int64\nlocal function f0() return #redis.call('HGETALL', KEYS[1]) end\n")
	for i := 1; i <= 12; i++ {
		prev := fmt.Sprintf("f%d()", i-1)
		fmt.Fprintf(&b, "local function f%d() return %s end\n", i, strings.Repeat(prev+" + ", 7)+prev)
	}
	b.WriteString("local n = f12()\nredis.setresp(3)\nreturn n\n")
	done := make(chan error, 1)
	go func() {
		_, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(b.String())}})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Generate: %v, want no error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the checker did not finish within 10s")
	}
}

// TestResp3RecursiveHelpersCheckedQuickly: the protocol a local function
// that calls itself starts in is found once too: its call of itself adds
// nothing to those of its other calls. A script of recursive helpers
// calling helpers, each several times (1.5 KB), called above
// redis.setresp(3), is checked at once.
func TestResp3RecursiveHelpersCheckedQuickly(t *testing.T) {
	var b strings.Builder
	b.WriteString("-- X counts.\n-- @key k\n-- @return int64\nlocal function f0(d) if d > 0 then return f0(d - 1) end return #redis.call('HGETALL', KEYS[1]) end\n")
	const n = 14
	for i := 1; i <= n; i++ {
		prev := fmt.Sprintf("f%d(d)", i-1)
		fmt.Fprintf(&b, "local function f%d(d) if d > 0 then return f%d(d - 1) end return %s end\n", i, i, strings.Repeat(prev+" + ", 3)+prev)
	}
	fmt.Fprintf(&b, "local n = f%d(1)\nredis.setresp(3)\nreturn n\n", n)
	done := make(chan error, 1)
	go func() {
		_, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(b.String())}})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Generate: %v, want no error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the checker did not finish within 10s")
	}
}
