package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicLongAgreesWithServer: a command that takes a fixed number of
// arguments (GET, HGET) given a whole variadic list through unpack fails,
// after the script's earlier writes, when the list holds more values than
// it takes. The generated callers must refuse such a list (a *LongError
// with the count and the most, nothing sent), and send one the server
// takes.
func TestVariadicLongAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, src string
		check     string     // the generated caller's test, "" for none
		keys      [][]string // the first the server takes, the second it refuses
		args      []string
		err       string // what the generator's error holds, "" for none
	}{
		{"GET of the keys", "-- @key ks...\n-- @return string?\nreturn redis.call('GET', unpack(KEYS))\n",
			"if len(ks) > 1 {", [][]string{{"{t}a"}, {"{t}a", "{t}b"}}, nil, ""},
		{"GET of the keys past a log", "-- @key log\n-- @key ks...\n-- @return string?\nredis.call('INCR', KEYS[1])\nreturn redis.call('GET', unpack(KEYS, 2))\n",
			"if len(ks) > 1 {", [][]string{{"{t}l", "{t}a"}, {"{t}l", "{t}a", "{t}b"}}, nil, ""},
		{"HGET of a field from the rest", "-- @key h\n-- @arg f string\n-- @arg rest... string\n-- @return string?\nredis.call('SET', KEYS[1] .. ':f', ARGV[1])\nreturn redis.call('HGET', KEYS[1], unpack(ARGV, 2))\n",
			"if len(rest) > 1 {", [][]string{{"{t}h"}, {"{t}h"}}, []string{"a", "f"}, ""},
		{"HGET of the arguments", "-- @key h\n-- @arg f string\n-- @arg rest... string\n-- @return string?\nreturn redis.call('HGET', KEYS[1], unpack(ARGV))\n",
			"if len(rest) > 0 {", [][]string{{"{t}h"}, {"{t}h"}}, []string{"f"}, ""},
		{"a command taking any number", "-- @key ks...\n-- @return int64\nreturn redis.call('DEL', unpack(KEYS))\n", "", nil, nil, ""},
		{"the script reads the count", "-- @key ks...\n-- @return string?\nif #KEYS > 1 then return nil end\nreturn redis.call('GET', unpack(KEYS))\n", "", nil, nil, ""},
		{"through redis.pcall", "-- @key ks...\n-- @return none\nredis.pcall('GET', unpack(KEYS))\n", "", nil, nil, ""},
		// GET takes one key, RENAME two: on every run, no count suits both.
		{"GET and RENAME of the keys on every run", "-- @key ks...\n-- @return none\nredis.call('GET', unpack(KEYS))\nredis.call('RENAME', unpack(KEYS))\n",
			"", nil, nil, "RENAME (line 5) needs 2 values of ks at least, and GET (line 4) takes 1 at most"},
		// In two branches: the callers must not refuse every count.
		{"GET and RENAME of the keys in two branches", "-- @key ks...\n-- @arg mode string\n-- @return none\nif ARGV[1] == 'get' then redis.call('GET', unpack(KEYS)) else redis.call('RENAME', unpack(KEYS)) end\n",
			"if len(ks) > 2 {", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + tc.src
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("the generator returned %v, want an error holding %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			code := string(out["x.lua.go"])
			if got := strings.Contains(code, "&LongError{"); got != (tc.check != "") || tc.check != "" && !strings.Contains(code, tc.check) {
				t.Errorf("the caller refuses a long list: %v, want %q\n%s", got, tc.check, code)
			}
			for i, keys := range tc.keys {
				args := tc.args
				if i == 1 && len(args) > 0 {
					args = append(append([]string{}, args...), "g")
				}
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()).Error()
				if refused := err != nil && strings.Contains(strings.ToLower(err.Error()), "wrong number of arg"); refused != (i == 1) {
					t.Errorf("%v %v: the server returned %v", keys, args, err)
				}
			}
		})
	}
}
