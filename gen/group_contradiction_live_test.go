package gen

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGroupConditionsThatContradict: two commands taking their words in
// groups may get one variadic list with words before it that make their
// conditions on its count contradict (HSET of every argument, one of them
// fixed, needs an odd count of the rest; HSET of the rest an even one).
// When every run makes both calls, no count succeeds: the generator
// refuses the script, naming both lines. When a branch the checker cannot
// decide holds one, the generated callers must not refuse every count: a
// condition of a call that may not run is left out where it contradicts
// another, and one that contradicts a call every run makes is warned of.
func TestGroupConditionsThatContradict(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg f string\n-- @arg rest... string\n-- @return none\n"
	for _, tc := range []struct {
		name, body string
		err        []string // what the generator's error holds; nil for none
		warn       string   // what its warning holds; "" for none
		checks     []string // the generated caller's group checks
		ok         [][]string
	}{
		{"both on every run", "redis.call('HSET', KEYS[1], unpack(ARGV))\nredis.call('HSET', KEYS[1] .. 'x', unpack(ARGV, 2))\n",
			[]string{"x.lua:7:", "HSET (line 7) needs an even count of rest, and HSET (line 6) needs an odd count"}, "", nil, nil},
		{"both on every run, in a do block and a condition", "do redis.call('HSET', KEYS[1], unpack(ARGV)) end\nif redis.call('HSET', KEYS[1] .. 'x', unpack(ARGV, 2)) > 0 then end\n",
			[]string{"x.lua:7:", "(line 6)"}, "", nil, nil},
		{"in the two branches of an if", "if redis.call('EXISTS', KEYS[1]) == 1 then\n  redis.call('HSET', KEYS[1], unpack(ARGV))\nelse\n  redis.call('HSET', KEYS[1], unpack(ARGV, 2))\nend\n",
			nil, "", nil, [][]string{{"a", "x", "y"}, {"a", "x"}}},
		{"after a return that may come first", "if redis.call('EXISTS', KEYS[1]) == 0 then return end\nredis.call('HSET', KEYS[1], unpack(ARGV, 2))\nredis.call('HSET', KEYS[1], unpack(ARGV))\n",
			nil, "", nil, [][]string{{"a", "x"}, {"a", "x", "y"}}},
		{"one in a function", "local function set() redis.call('HSET', KEYS[1], unpack(ARGV, 2)) end\nif redis.call('EXISTS', KEYS[1]) == 1 then set() else redis.call('HSET', KEYS[1], unpack(ARGV)) end\n",
			nil, "", nil, [][]string{{"a", "x"}, {"a", "x", "y"}}},
		{"one on the right of and", "local _ = redis.call('EXISTS', KEYS[1]) == 0 and redis.call('HSET', KEYS[1], unpack(ARGV, 2))\n",
			nil, "", []string{"if len(rest)%2 != 0 {"}, [][]string{{"a", "x", "y"}}},
		{"one under a branch, one on every run", "redis.call('HSET', KEYS[1], unpack(ARGV))\nif redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 2)) end\n",
			nil, "x.lua:7:", []string{"if len(rest)%2 != 1 {"}, [][]string{{"a", "x"}}},
		{"two that agree, one under a branch", "redis.call('HSET', KEYS[1], unpack(ARGV))\nif redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'g', unpack(ARGV, 2)) end\n",
			nil, "", []string{"if len(rest)%2 != 1 {"}, [][]string{{"a", "x"}, {"a", "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body
			out, warns, err := GenerateWarnings("generated", []File{{Path: "x.lua", Source: []byte(src)}}, false)
			if tc.err != nil {
				if err == nil {
					t.Fatalf("generated, want an error holding %q\n%s", tc.err, out["x.lua.go"])
				}
				for _, s := range tc.err {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not hold %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := warns.Error(); tc.warn == "" && len(warns) > 0 || tc.warn != "" && (len(warns) == 0 || !strings.Contains(got, tc.warn)) {
				t.Errorf("warnings %q, want %q", got, tc.warn)
			}
			code := string(out["x.lua.go"])
			for _, c := range []string{"if len(rest)%2 != 0 {", "if len(rest)%2 != 1 {"} {
				if got, want := strings.Contains(code, c), slices.Contains(tc.checks, c); got != want {
					t.Errorf("the caller checks %q: %v, want %v\n%s", c, got, want, code)
				}
			}
			// Counts the server takes: the callers take them too.
			if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			for _, args := range tc.ok {
				if err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}h").Arg(args...).Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
					t.Errorf("%v: the server returned %v", args, err)
				}
				if n := len(args) - 1; strings.Contains(code, "if len(rest)%2 != 0 {") && n%2 != 0 || strings.Contains(code, "if len(rest)%2 != 1 {") && n%2 != 1 {
					t.Errorf("%v: the callers refuse a count of %d the script takes", args, n)
				}
			}
		})
	}
}
