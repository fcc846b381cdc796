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
// fixed ones before a variadic), and unpack(ARGV, i, j) with integer
// literals those from i to j (to the last without j), so a call they give
// too many or too few words fails every time: the checker must refuse it, and the server fail
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
		// unpack of a table constructor gives what it lists.
		{"one listed value to HSET", "-- @key h\n-- @return int64\n", "return redis.call('HSET', KEYS[1], unpack({'f'}))",
			[]string{"{t}h"}, nil,
			"scripts/x.lua:4:19: wrong number of arguments for HSET: it takes at least 3 arguments, the call passes 2"},
		{"two listed values to HSET", "-- @key h\n-- @return int64\n", "return redis.call('HSET', KEYS[1], unpack({'f', 'v'}))",
			[]string{"{t}h"}, nil, ""},
		{"two listed values to GET", "-- @key k\n-- @return string?\n", "return redis.call('GET', unpack({KEYS[1], 'x'}))",
			[]string{"{t}k"}, nil,
			"scripts/x.lua:4:19: wrong number of arguments for GET: it takes 1 argument, the call passes 2"},
		// Each listed value counts as written in place: HSET's pairs too.
		{"three listed values to HSET", "-- @key h\n-- @return int64\n", "return redis.call('HSET', KEYS[1], unpack({'f', 'v', 'g'}))",
			[]string{"{t}h"}, nil,
			"scripts/x.lua:4:19: HSET takes field value pairs after key, and the call gives 3 words there: Redis refuses it at run time (wrong number of arguments); give every field its value"},
		{"three declared arguments to HSET", "-- @key h\n-- @arg a string\n-- @arg b string\n-- @arg c string\n-- @return int64\n", "return redis.call('HSET', KEYS[1], unpack(ARGV))",
			[]string{"{t}h"}, []string{"f", "v", "g"},
			"scripts/x.lua:7:19: HSET takes field value pairs after key, and the call gives 3 words there: Redis refuses it at run time (wrong number of arguments); give every field its value"},
		{"three values of a local function to HSET", "-- @key h\n-- @return int64\n", "local function fv() return 'f', 'v', 'g' end\nreturn redis.call('HSET', KEYS[1], fv())",
			[]string{"{t}h"}, nil,
			"scripts/x.lua:5:19: HSET takes field value pairs after key, and the call gives 3 words there: Redis refuses it at run time (wrong number of arguments); give every field its value"},
		{"two of three arguments to HSET", "-- @key h\n-- @arg a string\n-- @arg b string\n-- @arg c string\n-- @return int64\n",
			"redis.call('SET', KEYS[1] .. ':c', ARGV[3])\nreturn redis.call('HSET', KEYS[1], unpack(ARGV, 1, 2))",
			[]string{"{t}h"}, []string{"f", "v", "g"}, ""},
		{"variadic keys to DEL", "-- @key keys...\n-- @return int64\n", "return redis.call('DEL', unpack(KEYS))",
			[]string{"{t}a", "{t}b"}, nil, ""},
		{"past the last argument to SET", "-- @key k\n-- @arg a string\n-- @arg b string\n-- @return none\n",
			"redis.call('SET', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[1], unpack(ARGV, 3))",
			[]string{"{t}k"}, []string{"a", "b"},
			"scripts/x.lua:7:12: wrong number of arguments for SET: it takes at least 2 arguments, the call passes 1"},
		{"the keys after the only one to DEL", "-- @key k\n-- @return int64\n", "redis.call('DEL', KEYS[1])\nreturn redis.call('DEL', unpack(KEYS, 2))",
			[]string{"{t}k"}, nil,
			"scripts/x.lua:5:19: wrong number of arguments for DEL: it takes at least 1 argument, the call passes 0"},
		{"the second argument on to GET", "-- @key k\n-- @arg a string\n-- @arg b string\n-- @return string?\n",
			"redis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('GET', KEYS[1], unpack(ARGV, 2))",
			[]string{"{t}k"}, []string{"a", "b"},
			"scripts/x.lua:7:19: wrong number of arguments for GET: it takes 1 argument, the call passes 2"},
		{"the first two arguments to HGET", "-- @key h\n-- @arg a string\n-- @arg b string\n-- @arg c string\n-- @return string?\n",
			"redis.call('SET', KEYS[1] .. ':c', ARGV[3])\nreturn redis.call('HGET', KEYS[1], unpack(ARGV, 1, 2))",
			[]string{"{t}h"}, []string{"a", "b", "c"},
			"scripts/x.lua:8:19: wrong number of arguments for HGET: it takes 2 arguments, the call passes 3"},
		{"past the last argument to HSET", "-- @key h\n-- @arg a string\n-- @arg f string\n-- @return int64\n",
			"redis.call('SET', KEYS[1] .. ':a', ARGV[1])\nreturn redis.call('HSET', KEYS[1], unpack(ARGV, 2, 3))",
			[]string{"{t}h"}, []string{"a", "f"},
			`scripts/x.lua:7:36: argument 2 of redis.call is unpack(ARGV, 2, 3), but only 2 args are declared: it gives nil past them, and Redis refuses it at run time ("Lua redis lib command arguments must be strings or integers")`},
		{"past the only key to DEL", "-- @key k\n-- @return int64\n", "return redis.call('DEL', unpack(KEYS, 1, 2))",
			[]string{"{t}k"}, nil,
			`scripts/x.lua:4:26: argument 1 of redis.call is unpack(KEYS, 1, 2), but only 1 key is declared: it gives nil past them, and Redis refuses it at run time ("Lua redis lib command arguments must be strings or integers")`},
		{"the second argument on to SET", "-- @key k\n-- @arg a string\n-- @arg b string\n-- @return none\n",
			"redis.call('SET', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[1], unpack(ARGV, 2))",
			[]string{"{t}k"}, []string{"a", "b"}, ""},
		{"the second and third arguments to HSET", "-- @key h\n-- @arg a string\n-- @arg f string\n-- @arg v string\n-- @return int64\n",
			"redis.call('SET', KEYS[1] .. ':a', ARGV[1])\nreturn redis.call('HSET', KEYS[1], unpack(ARGV, 2, 3))",
			[]string{"{t}h"}, []string{"a", "f", "v"}, ""},
		{"the keys after the first of a variadic to DEL", "-- @key k\n-- @key more...\n-- @return int64\n",
			"redis.call('GET', KEYS[1])\nreturn redis.call('DEL', unpack(KEYS, 2))",
			[]string{"{t}k", "{t}m"}, nil, ""},
		{"an empty range past the keys", "-- @key k\n-- @arg a string\n-- @return int64\n",
			"redis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('DEL', KEYS[1], unpack(KEYS, 3, 2))",
			[]string{"{t}k"}, []string{"a"}, ""},
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
