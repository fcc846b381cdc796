package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUnpackArityAgreesWithServer: unpack(KEYS) and unpack(ARGV) give as
// many values as the script declares keys or arguments (no fewer than the
// fixed ones before a variadic), so a call they give too many or too few
// words fails every time: the checker must refuse it, and the server fail
// it when called with the declared keys and arguments. A script that may
// change the table is not counted.
func TestUnpackArityAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, decl, body string
		keys, args       []string // what the callers pass
		want             string   // the checker's error, "" for none
	}{
		{"two keys to GET", "-- @key a\n-- @key b\n-- @return string?\n", "return redis.call('GET', unpack(KEYS))",
			[]string{"{t}a", "{t}b"}, nil,
			"scripts/x.lua:5:19: wrong number of arguments for GET: it takes 1 argument, the call passes 2"},
		{"one argument to HSET", "-- @key h\n-- @arg field string\n-- @return int64\n", "return redis.call('HSET', KEYS[1], unpack(ARGV))",
			[]string{"{t}h"}, []string{"f"},
			"scripts/x.lua:5:19: wrong number of arguments for HSET: it takes at least 3 arguments, the call passes 2"},
		{"two fixed keys before a variadic to GET", "-- @key a\n-- @key b\n-- @key more...\n-- @return string?\n", "return redis.call('GET', unpack(KEYS))",
			[]string{"{t}a", "{t}b"}, nil,
			"scripts/x.lua:6:19: wrong number of arguments for GET: it takes 1 argument, the call passes at least 2"},
		{"a field and a value to HSET", "-- @key h\n-- @arg field string\n-- @arg value string\n-- @return int64\n", "return redis.call('HSET', KEYS[1], unpack(ARGV))",
			[]string{"{t}h"}, []string{"f", "v"}, ""},
		{"variadic keys to DEL", "-- @key keys...\n-- @return int64\n", "return redis.call('DEL', unpack(KEYS))",
			[]string{"{t}a", "{t}b"}, nil, ""},
		{"an argument taken out first", "-- @key k\n-- @arg channel string\n-- @arg message string\n-- @arg value string\n-- @return int64\n",
			"redis.call('SET', KEYS[1], table.remove(ARGV))\nreturn redis.call('PUBLISH', unpack(ARGV))",
			[]string{"{t}k"}, []string{"c", "m", "v"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X unpacks.\n" + tc.decl + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(tc.keys))).Key(tc.keys...).Arg(tc.args...).Build()).Error()
			if rueidis.IsRedisNil(err) {
				err = nil
			}
			if failed := err != nil; failed != (tc.want != "") {
				t.Errorf("the server replied %v; the checker refused the script: %v", err, tc.want != "")
			}
		})
	}
}
