package gen

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCompareAgreesWithServer runs scripts the checker refuses for comparing
// values Lua never finds equal or cannot order, or for reading a named field
// of a list reply, on a real server: an ordering fails there, an equality is
// always false (an inequality always true), the field always nil, as the
// messages say.
func TestCompareAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	node := redistest.Server(t)
	rc := node.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, body string
		arg        string
		fails      bool   // Redis fails the script ("attempt to compare")
		reply      string // else what it returns: the branch "always" takes
		line       int
		msg        string // in the error, when not a comparison's or a field's
	}{
		{name: "argument ordered with a number", body: "if ARGV[1] > 0 then return 'gt' end\nreturn 'not gt'", arg: "5", fails: true, line: 4},
		{name: "argument equal to a number", body: "local n = ARGV[1]\nif n == 5 then return 'eq' end\nreturn 'ne'", arg: "5", reply: "ne", line: 5},
		{name: "key unequal to a number", body: "if KEYS[1] ~= 1 then return 'ne' end\nreturn 'eq'", arg: "1", reply: "ne", line: 4},
		{name: "string reply ordered with a number", body: "redis.call('SET', KEYS[1], '12')\nif redis.call('GET', KEYS[1]) >= 10 then return 'ge' end\nreturn 'lt'", arg: "1", fails: true, line: 5},
		{name: "nil reply ordered with a number", body: "redis.call('DEL', KEYS[1])\nif redis.call('GET', KEYS[1]) < 10 then return 'lt' end\nreturn 'ge'", arg: "1", fails: true, line: 5},
		{name: "integer reply equal to a string", body: "redis.call('DEL', KEYS[1])\nlocal cur = redis.call('INCR', KEYS[1])\nif cur == '1' then return 'first' end\nreturn 'later'", arg: "1", reply: "later", line: 6},
		{name: "argument equal to true", body: "if ARGV[1] == true then return 'eq' end\nreturn 'ne'", arg: "1", reply: "ne", line: 4},
		{name: "integer reply equal to true", body: "redis.call('SET', KEYS[1], 'v')\nif redis.call('EXISTS', KEYS[1]) == true then return 'eq' end\nreturn 'ne'", arg: "1", reply: "ne", line: 5},
		{name: "named field of HGETALL's reply", body: "redis.call('HSET', KEYS[1], 'owner', 'x')\nlocal h = redis.call('HGETALL', KEYS[1])\nif h.owner then return 'found' end\nreturn 'nil'", arg: "1", reply: "nil", line: 6},
		{name: "nil reply equal to nil", body: "redis.call('DEL', KEYS[1])\nif redis.call('GET', KEYS[1]) == nil then return 'nil' end\nreturn 'not nil'", arg: "1", reply: "not nil", line: 5},
		{name: "status reply equal to a string", body: "redis.call('SET', KEYS[1], 'v')\nif redis.call('TYPE', KEYS[1]) == 'string' then return 'eq' end\nreturn 'ne'", arg: "1", reply: "ne", line: 5},
		{name: "XGROUP CREATE's status equal to OK", body: "redis.call('DEL', KEYS[1])\nif redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '$', 'MKSTREAM') == 'OK' then return 'eq' end\nreturn 'ne'", arg: "1", reply: "ne", line: 5},
		{name: "SET's status equal to OK", body: "redis.call('DEL', KEYS[1])\nif redis.call('SET', KEYS[1], 'v', 'NX') == 'OK' then return 'eq' end\nreturn 'ne'", arg: "1", reply: "ne", line: 5},
		{name: "zero reply as a condition", body: "redis.call('DEL', KEYS[1])\nif redis.call('EXISTS', KEYS[1]) then return 'taken' end\nreturn 'other'", arg: "1", reply: "taken", line: 5, msg: "always true as a condition"},
		{name: "empty list negated", body: "redis.call('DEL', KEYS[1])\nlocal h = redis.call('HGETALL', KEYS[1])\nif not h then return 'empty' end\nreturn 'not empty'", arg: "1", reply: "not empty", line: 6, msg: "is always false"},
		{name: "integer reply ordered with a string", body: "redis.call('DEL', KEYS[1])\nif redis.call('INCR', KEYS[1]) < '5' then return 'lt' end\nreturn 'ge'", arg: "1", fails: true, line: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return string\n" + tc.body + "\n"
			got := checkUsed(t, src)
			want := tc.msg != "" && strings.Contains(got0(got), tc.msg) || tc.msg == "" && (strings.Contains(got0(got), "compares") || strings.Contains(got0(got), "always nil"))
			if len(got) != 1 || !strings.HasPrefix(got[0], "scripts/x.lua:"+strconv.Itoa(tc.line)+":") || !want {
				t.Errorf("checker output %q, want one comparison error on line %d", got, tc.line)
			}
			if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			script := strings.Join(strings.Split(src, "\n")[3:], "\n")
			reply, err := rc.Do(ctx, rc.B().Eval().Script(script).Numkeys(1).Key("{c}k").Arg(tc.arg).Build()).ToString()
			switch {
			case tc.fails && (err == nil || !strings.Contains(err.Error(), "attempt to compare")):
				t.Errorf("Redis: %q, %v; want the script to fail with \"attempt to compare\"", reply, err)
			case !tc.fails && (err != nil || reply != tc.reply):
				t.Errorf("Redis: %q, %v; want %q", reply, err, tc.reply)
			}
			if err != nil && !rueidis.IsRedisNil(err) {
				t.Logf("Redis: %v", err)
			}
		})
	}
}

// checkUsed is the checker's errors for src, but for the reports of a key or
// argument declared and never used (the tests' scripts declare some on
// purpose).
func checkUsed(t *testing.T, src string) []string {
	t.Helper()
	var got []string
	for _, e := range checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}) {
		if !strings.Contains(e, "declared but never used") {
			got = append(got, e)
		}
	}
	return got
}

// got0 is the first of the checker's lines, "" for none.
func got0(got []string) string {
	if len(got) == 0 {
		return ""
	}
	return got[0]
}

// TestReturnsAgreeWithServer runs returns that lose values on the test
// server: a table with named fields, and several values. scriptgen must
// refuse each, and Redis must reply what the message says: the values a
// table lists without a name, or the first value alone.
func TestReturnsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		ret, body string
		want      []string // Redis's reply: an array, or one string when ret is "string"
		message   string
	}{
		{"[]string", "local n = redis.call('INCR', KEYS[1])\nreturn {count = tostring(n), total = '5'}", []string{}, "returns a table with named fields"},
		{"[]string", "return {'a', 'b', total = '5'}", []string{"a", "b"}, "returns a table with named fields"},
		{"[]string", "return {['count'] = '1', 'a'}", []string{"a"}, "returns a table with named fields"},
		{"string", "return 'a', 'b'", []string{"a"}, "returns 2 values, and Redis replies the first alone"},
		{"[]string", "return {'a'}, {'b'}, 'c'", []string{"a"}, "returns 3 values, and Redis replies the first alone"},
	} {
		src := "-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
		got := checkUsed(t, src)
		if len(got) != 1 || !strings.Contains(got[0], tc.message) {
			t.Errorf("%q: checker output %q, want one error %q", tc.body, got, tc.message)
		}
		script := strings.Join(strings.Split(src, "\n")[2:], "\n")
		res := rc.Do(ctx, rc.B().Eval().Script(script).Numkeys(1).Key("{n}k").Build())
		var reply []string
		var err error
		if tc.ret == "string" {
			var one string
			one, err = res.ToString()
			reply = []string{one}
		} else {
			reply, err = res.AsStrSlice()
		}
		if err != nil || !slices.Equal(reply, tc.want) {
			t.Errorf("%q: Redis replied %q, %v; want %q", tc.body, reply, err, tc.want)
		}
	}
}
