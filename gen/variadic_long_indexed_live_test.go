package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicLongAgainstIndexed: a script that reads KEYS[n] or ARGV[n]
// past the fixed ones in place as an argument of redis.call needs n of the
// list, as a command that gets the list through unpack may; when every run
// makes that call and one taking fewer values of the whole list (GET of
// unpack(KEYS)), every count fails (too short: nil in the first call; long
// enough: the second, after the first one's write), and the script must be
// refused, naming both lines.
func TestVariadicLongAgainstIndexed(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, src string
		keys      []string
		args      []string
		err       string
	}{
		{"KEYS[2] then GET of the keys", "-- @key ks...\n-- @return string?\nredis.call('SET', KEYS[2], 'x')\nreturn redis.call('GET', unpack(KEYS))\n",
			[]string{"{t}a", "{t}b"}, nil, "KEYS[2] in SET (line 4) needs 2 values of ks at least, and GET (line 5) takes 1 at most"},
		{"ARGV[2] then HGET of the arguments", "-- @key h\n-- @arg rest... string\n-- @return string?\nredis.call('HSET', KEYS[1], 'f', ARGV[2])\nreturn redis.call('HGET', KEYS[1], unpack(ARGV))\n",
			[]string{"{t}h"}, []string{"f", "v"}, "ARGV[2] in HSET (line 5) needs 2 values of rest at least, and HGET (line 6) takes 1 at most"},
		{"unpack(KEYS, 3, 3) then GET of the keys", "-- @key ks...\n-- @return string?\nredis.call('SET', KEYS[1], unpack(KEYS, 3, 3))\nreturn redis.call('GET', unpack(KEYS))\n",
			[]string{"{t}a", "{t}b", "{t}c"}, nil, "unpack(KEYS, 3, 3) in SET (line 4) needs 3 values of ks at least, and GET (line 5) takes 1 at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + tc.src
			// The server fails the shortest count that passes the first
			// call, after its write.
			err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(tc.keys))).Key(tc.keys...).Arg(tc.args...).Build()).Error()
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "wrong number of arg") {
				t.Errorf("the server returned %v, want wrong number of arguments", err)
			}
			_, err = Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("the generator returned %v, want an error holding %q", err, tc.err)
			}
		})
	}
}
