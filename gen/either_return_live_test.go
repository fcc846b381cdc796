package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestEitherReturnAgreesWithServer returns and/or expressions (v or 0,
// c and 'a' or 'b'), which give either value as the data decides: the
// checker must refuse one of whose values @return does not read, and the
// server give that value, on a key missing or set as the case says; a value
// never given (the right of an or whose left is never nil) is not held
// against the script.
func TestEitherReturnAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const fits = "returns an and/or expression, which gives either of its values as the data decides, and one does not fit: "
	for _, tc := range []struct {
		name, ret, body string
		set             bool   // the key holds "v" when the script runs
		want            string // the checker's error, "" for none
		reply           string // what the server replies then: string, integer or nil
	}{
		{"a default number for a string", "string", "return redis.call('GET', KEYS[1]) or 0", false,
			"scripts/x.lua:4:8: " + fits + "returns an integer (0), but @return string needs a string reply: Lua numbers reach the caller as integers; return tostring(...)", "integer"},
		{"a string with a default number", "int64", "return redis.call('GET', KEYS[1]) or 0", true,
			"scripts/x.lua:4:8: " + fits + "GET replies a string or nil, but @return int64 needs an integer reply", "string"},
		{"a number or a string", "string", "return redis.call('EXISTS', KEYS[1]) == 1 and 1 or 'no'", true,
			"scripts/x.lua:4:8: " + fits + "returns an integer (1), but @return string needs a string reply: Lua numbers reach the caller as integers; return tostring(...)", "integer"},
		{"and without or", "string", "return redis.call('EXISTS', KEYS[1]) == 1 and 'yes'", false,
			"scripts/x.lua:4:8: " + fits + "returns nil, but @return string needs a string reply: declare @return string? for a nullable reply", "nil"},
		{"a string default", "string", "return redis.call('GET', KEYS[1]) or ''", false, "", "string"},
		{"a number default", "int64", "return tonumber(redis.call('GET', KEYS[1])) or 0", false, "", "integer"},
		{"strings either way", "string", "return redis.call('EXISTS', KEYS[1]) == 1 and 'yes' or 'no'", false, "", "string"},
		{"a default never given", "int64", "return redis.call('INCR', KEYS[1]) or 'none'", false, "", "integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns either.\n-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			if tc.set {
				if err := rc.Do(ctx, rc.B().Set().Key("{t}k").Value("v").Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			m, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToMessage()
			if err != nil && !rueidis.IsRedisNil(err) {
				t.Fatal(err)
			}
			got := "nil"
			switch {
			case m.IsString():
				got = "string"
			case m.IsInt64():
				got = "integer"
			}
			if got != tc.reply {
				t.Errorf("the server replied %s, want %s", m.String(), tc.reply)
			}
		})
	}
}
