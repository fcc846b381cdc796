package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGroupVariadicAgreesWithServer: a variadic key or argument list that
// a command taking its words in groups gets through unpack (HSET key
// field value ..., MSET key value ...) fails that command when its count
// leaves a group short, after the script's earlier writes. The generated
// callers must refuse such a count (with the words before it: a fixed
// argument given first makes the variadic's count odd) before sending,
// and take one the server takes.
func TestGroupVariadicAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	// The scripts the generator refuses, with what its error holds.
	refused := map[string]string{
		"HSET of every argument, and of the rest": "HSET (line 8) needs an even count of rest, and HSET (line 7) needs an odd count",
	}
	for _, tc := range []struct {
		name, src string
		check     string // the generated caller's test, "" for none
		args      [][]string
	}{
		{"HSET of the pairs", "-- @key k\n-- @arg pairs... string\n-- @return int64\nreturn redis.call('HSET', KEYS[1], unpack(ARGV))\n",
			"if len(pairs)%2 != 0 {", [][]string{{"f", "v"}, {"f", "v", "g"}}},
		{"HSET of a field and the rest", "-- @key k\n-- @arg f string\n-- @arg rest... string\n-- @return int64\nreturn redis.call('HSET', KEYS[1], unpack(ARGV))\n",
			"if len(rest)%2 != 1 {", [][]string{{"f", "v"}, {"f", "v", "g"}}},
		{"HSET of the rest past its first value", "-- @key k\n-- @arg f string\n-- @arg rest... string\n-- @return int64\nreturn redis.call('HSET', KEYS[1], unpack(ARGV, 3))\n",
			"if len(rest)%2 != 1 {", [][]string{{"a", "x", "f", "v"}, {"a", "x", "f", "v", "g"}}},
		{"MSET of the keys", "-- @key ks...\n-- @return none\nredis.call('MSET', unpack(KEYS))\n",
			"if len(ks)%2 != 0 {", nil},
		{"the script reads the count", "-- @key k\n-- @arg pairs... string\n-- @return int64\nif #ARGV % 2 == 1 then return 0 end\nreturn redis.call('HSET', KEYS[1], unpack(ARGV))\n", "", nil},
		{"a command name of @commands, one of them not in groups", "-- @key k\n-- @arg cmd string\n-- @arg rest... string\n-- @commands HSET SADD\n-- @return none\nredis.call(ARGV[1], KEYS[1], unpack(ARGV, 2))\n", "", nil},
		{"a command name of @commands, HSET alone", "-- @key k\n-- @arg cmd string\n-- @arg rest... string\n-- @commands HSET\n-- @return none\nredis.call(ARGV[1], KEYS[1], unpack(ARGV, 2))\n",
			"if len(rest)%2 != 0 {", [][]string{{"HSET", "f", "v"}, {"HSET", "f", "v", "g"}}},
		{"HSET of every argument, and of the rest", "-- @key k\n-- @key k2\n-- @arg f string\n-- @arg rest... string\n-- @return none\nredis.call('HSET', KEYS[1], unpack(ARGV))\nredis.call('HSET', KEYS[2], unpack(ARGV, 2))\n",
			"", nil},
		{"through redis.pcall", "-- @key k\n-- @arg pairs... string\n-- @return none\nredis.pcall('HSET', KEYS[1], unpack(ARGV))\n", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + tc.src
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if want, ok := refused[tc.name]; ok {
				// Every run makes two calls that no count meets both of.
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("the generator returned %v, want an error holding %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			code := string(out["x.lua.go"])
			if got := strings.Contains(code, "&GroupError{"); got != (tc.check != "") || tc.check != "" && !strings.Contains(code, tc.check) {
				t.Errorf("the caller refuses a count that leaves a group short: %v, want %q\n%s", got, tc.check, code)
			}
			// The first count is the server's to take, the second its to refuse.
			for i, args := range tc.args {
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}h").Arg(args...).Build()).Error()
				if refused := err != nil && strings.Contains(err.Error(), "wrong number of arguments"); refused != (i == 1) {
					t.Errorf("%v: the server returned %v", args, err)
				}
			}
		})
	}
}
