package gen

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicElemTestAgreesWithServer: a test of whether ARGV or KEYS
// holds an element (if ARGV[3] then, if ARGV[1] == 'x' then) shows the
// list holds it and those before it, and nothing of those after it: a
// command that gets a later element, or an unpack that needs more of the
// variadic list, fails on a shorter list as it does without the test, after
// the script's earlier writes. The generated callers must still refuse such
// a list (and take the one the server runs), and take a short list where
// the test covers every element the script reads.
func TestVariadicElemTestAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg mode string\n-- @arg rest... string\n"
	const notString = "arguments must be strings or integers"
	for n, tc := range []struct {
		name, src string
		check     string     // the generated caller's test, "" for none
		group     string     // its test of a group's count, "" for none
		args      [][]string // the first the server takes, the second (if any) it refuses
		marker    string     // what the server's refusal holds
	}{
		{"ARGV[2] after a test of the fixed argument", head + "-- @return none\nif ARGV[1] == 'skip' then return end\nredis.call('SET', KEYS[1], ARGV[2])\n",
			"if len(rest) == 0 {", "", [][]string{{"m", "a"}, {"m"}}, notString},
		{"ARGV[3] after a test of ARGV[2]", head + "-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nif ARGV[2] then redis.call('SET', KEYS[1] .. ':a', ARGV[2]) end\nredis.call('SET', KEYS[1], ARGV[3])\n",
			"if len(rest) < 2 {", "", [][]string{{"m", "a", "b"}, {"m", "a"}}, notString},
		{"a concatenation after a test of the fixed argument", head + "-- @return none\nif ARGV[1] == 'skip' then return end\nredis.call('SET', KEYS[1], 'x' .. ARGV[2])\n",
			"if len(rest) == 0 {", "", [][]string{{"m", "a"}, {"m"}}, "attempt to concatenate"},
		{"an unpack after a test of the fixed argument", head + "-- @return int64\nif ARGV[1] == 'skip' then return 0 end\nreturn redis.call('RPUSH', KEYS[1], unpack(ARGV, 2))\n",
			"if len(rest) == 0 {", "", [][]string{{"m", "a"}, {"m"}}, "wrong number of arg"},
		{"HSET of an unpack after a test of the fixed argument", head + "-- @return int64\nif ARGV[1] == 'skip' then return 0 end\nreturn redis.call('HSET', KEYS[1], unpack(ARGV, 2))\n",
			"if len(rest) < 2 {", "if len(rest)%2 != 0 {", [][]string{{"m", "f", "v"}, {"m", "f"}}, "wrong number of arg"},
		{"HSET of an unpack after a test of its first element", head + "-- @return int64\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nif not ARGV[2] then return 0 end\nreturn redis.call('HSET', KEYS[1], unpack(ARGV, 2))\n",
			"if len(rest) < 2 {", "", [][]string{{"m", "f", "v"}, {"m", "f"}}, "wrong number of arg"},
		// The test covers what the script reads: a short list runs.
		{"ARGV[3] after a test of it", head + "-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nif not ARGV[3] then return end\nredis.call('SET', KEYS[1], ARGV[3])\n",
			"", "", [][]string{{"m"}}, ""},
		{"ARGV[2] in the body of a test of ARGV[3]", head + "-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nif ARGV[3] then redis.call('SET', KEYS[1], ARGV[2] .. ARGV[3]) end\n",
			"", "", [][]string{{"m", "a"}}, ""},
		{"an unpack after a test of its first element", head + "-- @return int64\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nif not ARGV[2] then return 0 end\nreturn redis.call('RPUSH', KEYS[1], unpack(ARGV, 2))\n",
			"", "", [][]string{{"m"}}, ""},
		{"the script reads the count", head + "-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nif #ARGV < 3 then return end\nredis.call('SET', KEYS[1], ARGV[3])\n",
			"", "", [][]string{{"m"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + tc.src
			checkShortListCaller(t, src, tc.check)
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if err != nil {
				t.Fatal(err)
			}
			if code := string(out["x.lua.go"]); tc.group != "" && !strings.Contains(code, tc.group) {
				t.Errorf("the caller does not test the group's count with %q:\n%s", tc.group, code)
			}
			for i, args := range tc.args {
				key := fmt.Sprintf("{t}k%d", n)
				if i == 0 {
					if err := runScript(rc, src, []string{key}, args...); err != nil {
						t.Errorf("%v: the server returned %v", args, err)
					}
					continue
				}
				if refused, err := evalRefused(ctx, rc, src, []string{key}, args, tc.marker); !refused {
					t.Errorf("%v: the server returned %v", args, err)
				}
			}
		})
	}
}
