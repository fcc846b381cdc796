package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicShortTailAgreesWithServer: an unpack that starts past the
// fixed keys or arguments (unpack(ARGV, 3) after one @arg) skips the
// variadic list's first values, so a list no longer than that skip gives
// the command nothing, and one a little longer too few words: Redis fails
// the call after the script's earlier writes. The generated callers must
// refuse a list shorter than what the command needs (with an *EmptyError
// that gives the count and the least), and send one the server takes.
func TestVariadicShortTailAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, src string
		check     string     // the generated caller's test, "" for none
		keys      []string   // what the server is called with
		args      [][]string // the first the server takes, the second it refuses
	}{
		{"RPUSH of the rest past its first value", "-- @key log\n-- @key list\n-- @arg mark string\n-- @arg rest... string\n-- @return int64\nredis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('RPUSH', KEYS[2], unpack(ARGV, 3))\n",
			"if len(rest) < 2 {", []string{"{t}log", "{t}list"}, [][]string{{"m", "h", "v"}, {"m", "h"}}},
		{"DEL of the keys past the first two", "-- @key log\n-- @key ks...\n-- @return int64\nredis.call('INCR', KEYS[1])\nreturn redis.call('DEL', unpack(KEYS, 3))\n",
			"if len(ks) < 2 {", nil, nil},
		{"HSET of the rest past its first value", "-- @key k\n-- @arg f string\n-- @arg rest... string\n-- @return int64\nredis.call('SET', KEYS[1] .. ':f', ARGV[1])\nreturn redis.call('HSET', KEYS[1], unpack(ARGV, 3))\n",
			"if len(rest) < 3 {", []string{"{t}h"}, [][]string{{"a", "x", "f", "v"}, {"a", "x"}}},
		{"the rest from its first value", "-- @key list\n-- @arg mark string\n-- @arg rest... string\n-- @return int64\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nreturn redis.call('RPUSH', KEYS[1], unpack(ARGV, 2))\n",
			"if len(rest) == 0 {", []string{"{t}l"}, [][]string{{"m", "v"}, {"m"}}},
		{"the script reads the count", "-- @key list\n-- @arg mark string\n-- @arg rest... string\n-- @return int64\nif #ARGV < 3 then return 0 end\nreturn redis.call('RPUSH', KEYS[1], ARGV[1], unpack(ARGV, 3))\n",
			"", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + tc.src
			checkShortListCaller(t, src, tc.check)
			for i, args := range tc.args {
				if refused, err := evalRefused(ctx, rc, src, tc.keys, args, "wrong number of arg"); refused != (i == 1) {
					t.Errorf("%v: the server returned %v", args, err)
				}
			}
		})
	}
}

// TestVariadicIndexAgreesWithServer: KEYS[n] or ARGV[n] written as an
// argument of redis.call past the fixed keys or arguments reads a variadic
// list, which may hold fewer: the script then passes nil, and Redis fails
// the call after the script's earlier writes. The generated callers must
// refuse a list too short to hold it, unless the script tests it first or
// calls through redis.pcall, which hands it the error.
func TestVariadicIndexAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	type call struct{ keys, args []string }
	for _, tc := range []struct {
		name, src string
		check     string // the generated caller's test, "" for none
		calls     []call // the first the server takes, the second it refuses
	}{
		{"ARGV[3] past one fixed argument", "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nredis.call('SET', KEYS[1], ARGV[3])\n",
			"if len(rest) < 2 {", []call{{[]string{"{t}k"}, []string{"m", "a", "b"}}, {[]string{"{t}k"}, []string{"m", "a"}}}},
		{"KEYS[2], the first of the variadic", "-- @key log\n-- @key more...\n-- @return none\nredis.call('INCR', KEYS[1])\nredis.call('DEL', KEYS[2])\n",
			"if len(more) == 0 {", []call{{[]string{"{t}l", "{t}a"}, nil}, {[]string{"{t}l"}, nil}}},
		{"ARGV[3] through a local", "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nlocal v = ARGV[3]\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nredis.call('SET', KEYS[1], v)\n",
			"if len(rest) < 2 {", []call{{[]string{"{t}k"}, []string{"m", "a", "b"}}, {[]string{"{t}k"}, []string{"m", "a"}}}},
		{"ARGV[3] through a local tested first", "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nlocal v = ARGV[3]\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nif v then redis.call('SET', KEYS[1], v) end\n",
			"", nil},
		{"ARGV[3] through a local given a default", "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nlocal v = ARGV[3]\nv = v or 'x'\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nredis.call('SET', KEYS[1], v)\n",
			"", nil},
		{"ARGV[3] through a local given a default if not given", "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nlocal v = ARGV[3]\nif not v then v = 'x' end\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nredis.call('SET', KEYS[1], v)\n",
			"", nil},
		{"ARGV[3] through a local assigned again", "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nlocal v = ARGV[3]\nv = ARGV[1]\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nredis.call('SET', KEYS[1], v)\n",
			"", nil},
		{"tested first", "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nif ARGV[3] then redis.call('SET', KEYS[1], ARGV[3]) end\n",
			"", nil},
		{"through redis.pcall", "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nredis.pcall('SET', KEYS[1], ARGV[3])\n",
			"", nil},
		{"a fixed argument", "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\nfor i = 2, #ARGV do redis.call('SET', KEYS[1], ARGV[i]) end\n",
			"", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + tc.src
			checkShortListCaller(t, src, tc.check)
			for i, c := range tc.calls {
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(c.keys))).Key(c.keys...).Arg(c.args...).Build()).Error()
				if refused := err != nil && strings.Contains(err.Error(), "must be strings or integers"); refused != (i == 1) {
					t.Errorf("%v %v: the server returned %v", c.keys, c.args, err)
				}
			}
		})
	}
}

// TestVariadicUnpackRangeAgreesWithServer: unpack(ARGV, i, j) as the last
// argument of redis.call gives ARGV[i] to ARGV[j], nil for those past the
// list's end: with j past the fixed arguments, a variadic list too short to
// hold ARGV[j] gives the command nil, and Redis fails the call after the
// script's earlier writes. The generated callers must refuse such a list,
// unless the script reads its length or calls through redis.pcall.
func TestVariadicUnpackRangeAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string     // the generated caller's test, "" for none
		args       [][]string // the first the server takes, the second it refuses
	}{
		{"one value past the fixed", "redis.call('SET', KEYS[1], unpack(ARGV, 3, 3))",
			"if len(rest) < 2 {", [][]string{{"m", "a", "b"}, {"m", "a"}}},
		{"several values past the fixed", "redis.call('RPUSH', KEYS[1] .. ':l', unpack(ARGV, 2, 4))",
			"if len(rest) < 3 {", [][]string{{"m", "a", "b", "c"}, {"m", "a", "b"}}},
		{"the fixed ones alone", "redis.call('SET', KEYS[1], unpack(ARGV, 1, 1))", "", nil},
		{"the script reads the count", "if #ARGV < 3 then return end\nredis.call('SET', KEYS[1], unpack(ARGV, 3, 3))", "", nil},
		{"through redis.pcall", "redis.pcall('SET', KEYS[1], unpack(ARGV, 3, 3))", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			for i, args := range tc.args {
				if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, args, "must be strings or integers"); refused != (i == 1) {
					t.Errorf("%v: the server returned %v", args, err)
				}
			}
		})
	}
}

// TestVariadicElementTypeTestedAgreesWithServer: a condition that tests an
// element's type (if type(ARGV[3]) == 'string' then) tests whether the list
// holds it, as if ARGV[3] then does: the script may leave first, so the
// generated callers must send a short list, which the server runs.
func TestVariadicElementTypeTestedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const (
		args = "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
		keys = "-- @key k\n-- @key more...\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', 'm')\n"
	)
	for _, tc := range []struct{ name, src string }{
		{"an arg written in place", args + "if type(ARGV[3]) == 'string' then redis.call('SET', KEYS[1], ARGV[3]) end"},
		{"an arg unpacked", args + "if type(ARGV[2]) == 'string' then redis.call('RPUSH', KEYS[1] .. ':l', unpack(ARGV, 2)) end"},
		{"a key, not nil", keys + "if 'nil' ~= type(KEYS[2]) then redis.call('DEL', KEYS[2]) end"},
		{"a key, nil", keys + "if type(KEYS[2]) == 'nil' then return end\nredis.call('DEL', KEYS[2])"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + tc.src + "\n"
			checkShortListCaller(t, src, "")
			if err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("m").Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
				t.Errorf("a short list: the server returned %v", err)
			}
		})
	}
}

// TestVariadicIndexLocalOnAPathAgreesWithServer: a local that holds
// ARGV[n] past the fixed arguments on some paths (local v = ARGV[3], given
// another value in an if only, or the other way round) holds nil on those
// paths when the list is short, and Redis fails the call after the
// script's earlier writes: the generated callers must refuse such a list,
// as for a local given ARGV[n] alone. Not when the local is tested first or
// given a default.
func TestVariadicIndexLocalOnAPathAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const (
		head = "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
		c    = "redis.call('EXISTS', KEYS[1]) == 0"
	)
	for _, tc := range []struct {
		name, body string
		check      string     // the generated caller's test, "" for none
		args       [][]string // the first the server takes, the second it refuses
	}{
		{"given another value on a path", "local v = ARGV[3]\nif not (" + c + ") then v = 'x' end\nredis.call('SET', KEYS[1], v)",
			"if len(rest) < 2 {", [][]string{{"m", "a", "b"}, {"m", "a"}}},
		{"given it on a path", "local v = 'x'\nif " + c + " then v = ARGV[3] end\nredis.call('SET', KEYS[1], v)",
			"if len(rest) < 2 {", [][]string{{"m", "a", "b"}, {"m", "a"}}},
		{"given it on a path, tested", "local v = 'x'\nif " + c + " then v = ARGV[3] end\nif v then redis.call('SET', KEYS[1], v) end", "", nil},
		{"given it on a path, then a default", "local v = 'x'\nif " + c + " then v = ARGV[3] end\nv = v or 'y'\nredis.call('SET', KEYS[1], v)", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + head + tc.body + "\nredis.call('DEL', KEYS[1])\n"
			checkShortListCaller(t, src, tc.check)
			for i, args := range tc.args {
				if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, args, "must be strings or integers"); refused != (i == 1) {
					t.Errorf("%v: the server returned %v", args, err)
				}
			}
		})
	}
}

// TestVariadicElementComparedAgreesWithServer: a condition that compares a
// key or argument of a variadic list, or a local given it, with a string
// (if ARGV[3] == 'x' then, if m ~= 'x' then return end) holds only when it
// is there: the generated callers must send a short list, which the server
// runs. A local used where the comparison does not hold may be nil.
func TestVariadicElementComparedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"an arg compared in place", "if ARGV[3] == 'x' then redis.call('SET', KEYS[1], ARGV[3]) end", ""},
		{"a local compared", "local m = ARGV[3]\nif m == 'x' then redis.call('SET', KEYS[1], m) end", ""},
		{"a local compared, then an early return", "local m = ARGV[3]\nif m ~= 'x' then return end\nredis.call('SET', KEYS[1], m)", ""},
		{"a local compared, read where it does not hold", "local m = ARGV[3]\nif m == 'x' then return end\nredis.call('SET', KEYS[1], m)", "if len(rest) < 2 {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "must be strings or integers"); refused != (tc.check != "") {
				t.Errorf("a short list: the server returned %v", err)
			}
		})
	}
}

// TestVariadicIndexTestedCopyAgreesWithServer: a copy of a local given
// ARGV[n] past the fixed arguments, made where the local is tested (if v
// then local w = v ... end), holds a value: the generated callers must send
// a short list, which the server runs. An untested copy may hold nil.
func TestVariadicIndexTestedCopyAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\nlocal v = ARGV[3]\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"a copy in the if", "if v then\n  local w = v\n  redis.call('SET', KEYS[1], w)\nend", ""},
		{"a copy after an early return", "if not v then return end\nlocal w = v\nredis.call('SET', KEYS[1], w)", ""},
		{"a copy assigned after an early return", "local w = 'x'\nif not v then return end\nw = v\nredis.call('SET', KEYS[1], w)", ""},
		{"an untested copy", "local w = v\nredis.call('SET', KEYS[1], w)", "if len(rest) < 2 {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "must be strings or integers"); refused != (tc.check != "") {
				t.Errorf("a short list: the server returned %v", err)
			}
		})
	}
}

// checkShortListCaller generates src as scripts/x.lua and checks that its
// caller refuses a short variadic list with check, or not at all for "".
func checkShortListCaller(t *testing.T, src, check string) {
	t.Helper()
	out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	code := string(out["x.lua.go"])
	if got := strings.Contains(code, "&EmptyError{"); got != (check != "") || check != "" && !strings.Contains(code, check) {
		t.Errorf("the caller refuses a short list: %v, want %q", got, check)
	}
}

// evalRefused runs src on the server with keys and args and reports whether
// the server refused it with an error holding marker (in lower case).
func evalRefused(ctx context.Context, rc rueidis.Client, src string, keys, args []string, marker string) (bool, error) {
	err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()).Error()
	return err != nil && strings.Contains(strings.ToLower(err.Error()), marker), err
}
