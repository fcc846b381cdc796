package gen

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCommandsUncheckable: with @commands, a command name the generated
// callers cannot check before sending (derived from an argument, part of a
// variadic, not a string) is refused; only a plain string @arg is accepted,
// and its callers check it.
func TestCommandsUncheckable(t *testing.T) {
	const how = "the generated callers can check a command name against @commands only when it is exactly one string @arg, passed as it is (redis.call(ARGV[n], ...))"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "derived by a function",
			src:  "-- @key k\n-- @arg cmd string\n-- @commands get\n-- @return none\nredis.call(string.lower(ARGV[1]), KEYS[1])\n",
			want: []string{"scripts/x.lua:5:12: the command name (an expression) is not exactly one argument: " + how},
		},
		{
			name: "derived by concatenation",
			src:  "-- @key k\n-- @arg cmd string\n-- @commands get\n-- @return none\nredis.call(ARGV[1] .. '', KEYS[1])\n",
			want: []string{"scripts/x.lua:5:12: command name ARGV[1] is not exactly one argument: " + how},
		},
		{
			name: "one of two arguments",
			src:  "-- @key k\n-- @arg a string\n-- @arg b string\n-- @commands get\n-- @return none\nlocal cmd = ARGV[1]\nif #KEYS > 1 then cmd = ARGV[2] end\nredis.call(cmd, KEYS[1])\n",
			want: []string{"scripts/x.lua:8:12: command name cmd is not exactly one argument: " + how},
		},
		{
			name: "variadic",
			src:  "-- @key k\n-- @arg cmd... string\n-- @commands get\n-- @return none\nredis.call(ARGV[1], KEYS[1])\n",
			want: []string{"scripts/x.lua:5:12: command name ARGV[1] is part of the variadic @arg cmd: " + how + "; declare the command name as its own @arg before it"},
		},
		{
			name: "bytes",
			src:  "-- @key k\n-- @arg cmd bytes\n-- @commands get\n-- @return none\nredis.call(ARGV[1], KEYS[1])\n",
			want: []string{"scripts/x.lua:5:12: command name ARGV[1] is @arg cmd bytes: " + how + "; declare it as @arg cmd string"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}

	// The accepted form gets its guard in every caller.
	src := "-- @key k\n-- @arg cmd string\n-- @commands get\n-- @return none\nlocal c = ARGV[1]\nredis.call(c, KEYS[1])\n"
	out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out["x.lua.go"]), `!commandIs(`); n != 3 {
		t.Errorf("x.lua.go has %d command checks, want 3 (X, XMulti, XCommand):\n%s", n, out["x.lua.go"])
	}
}
