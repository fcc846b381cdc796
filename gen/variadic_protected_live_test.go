package gen

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicCountProtectedAgreesWithServer: a call of redis.call in a
// function written as an argument of pcall or xpcall (pcall(function()
// ... end)) hands its error to the script, which goes on, as a call of
// redis.pcall does: the generated callers must send the counts it fails
// on (too short to hold ARGV[3], a GET of no key or of two, an odd HSET),
// which the server runs.
func TestVariadicCountProtectedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const (
		args = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
		keys = "-- X does it.\n-- @key ks...\n-- @return none\n"
	)
	type call struct{ keys, args []string }
	for _, tc := range []struct {
		name, src string
		list      string
		want      []string // the generated caller's tests of list
		calls     []call   // what the server must run
	}{
		{"ARGV[3] in pcall", args + "pcall(function() redis.call('SET', KEYS[1], ARGV[3]) end)", "rest",
			nil, []call{{[]string{"{t}k"}, []string{"m", "a"}}}},
		{"ARGV[3] in xpcall", args + "xpcall(function() redis.call('SET', KEYS[1], ARGV[3]) end, function(e) return e end)", "rest",
			nil, []call{{[]string{"{t}k"}, []string{"m"}}}},
		{"HSET of the rest in pcall", args + "local ok = pcall(function() return redis.call('HSET', KEYS[1], unpack(ARGV, 2)) end)\nif not ok then redis.call('DEL', KEYS[1]) end", "rest",
			nil, []call{{[]string{"{t}k"}, []string{"m", "f"}}, {[]string{"{t}k"}, []string{"m"}}}},
		{"GET of the keys in pcall", keys + "pcall(function() redis.call('GET', unpack(KEYS)) end)", "ks",
			nil, []call{{nil, nil}, {[]string{"{t}a", "{t}b"}, nil}}},
		// Called by the script itself: its errors end the script.
		{"ARGV[3] in a local function", args + "local function f() redis.call('SET', KEYS[1], ARGV[3]) end\nf()", "rest",
			[]string{"if len(rest) < 2 {"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src + "\n"
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if err != nil {
				t.Fatal(err)
			}
			code := string(out["x.lua.go"])
			if got := countChecks(code, tc.list); !slices.Equal(got, tc.want) || tc.want == nil && strings.Contains(code, "&GroupError{") {
				t.Errorf("the caller checks %q (a group: %v), want %q", got, strings.Contains(code, "&GroupError{"), tc.want)
			}
			for _, c := range tc.calls {
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(c.keys))).Key(c.keys...).Arg(c.args...).Build()).Error()
				if err != nil && !rueidis.IsRedisNil(err) {
					t.Errorf("%v %v: the server returned %v", c.keys, c.args, err)
				}
			}
		})
	}
}

// TestVariadicCountProtectedByNameAgreesWithServer: a local function that
// the script only ever passes to pcall (local function f() ... end;
// pcall(f)), or only calls in a function passed to pcall (pcall(function()
// f() end)), runs protected too: its errors are handed to the script, and
// the generated callers must send the counts its calls fail on. Not when
// the script also calls it directly.
func TestVariadicCountProtectedByNameAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		want       []string // the generated caller's tests of rest
	}{
		{"passed to pcall", "local function f() redis.call('SET', KEYS[1], ARGV[3]) end\npcall(f)", nil},
		{"passed to pcall, with arithmetic", "local function f() return ARGV[3] + 1 end\nlocal ok, n = pcall(f)\nredis.call('SET', KEYS[1], ok and n or 0)", nil},
		{"also called directly", "local function f() redis.call('SET', KEYS[1], ARGV[3]) end\npcall(f)\nf()", []string{"if len(rest) < 2 {"}},
		{"called in a function passed to pcall", "local function f() redis.call('SET', KEYS[1], ARGV[3]) end\npcall(function() f() end)", nil},
		{"called so, with arithmetic", "local function f() return ARGV[3] + 1 end\nlocal ok, n = pcall(function() return f() end)\nredis.call('SET', KEYS[1], ok and n or 0)", nil},
		{"called so through another", "local function g() redis.call('SET', KEYS[1], ARGV[3]) end\nlocal function f() g() end\npcall(function() f() end)", nil},
		{"called so and directly", "local function f() redis.call('SET', KEYS[1], ARGV[3]) end\npcall(function() f() end)\nf()", []string{"if len(rest) < 2 {"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if err != nil {
				t.Fatal(err)
			}
			if got := countChecks(string(out["x.lua.go"]), "rest"); !slices.Equal(got, tc.want) {
				t.Errorf("the caller checks %q, want %q", got, tc.want)
			}
			err = rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("m", "a").Build()).Error()
			if failed := err != nil && !rueidis.IsRedisNil(err); failed != (tc.want != nil) {
				t.Errorf("a list of one: the server returned %v", err)
			}
		})
	}
}

// TestVariadicCountShadowedPcallAgreesWithServer: a local named pcall or
// xpcall is the script's own function, which may call what it is given
// unprotected: a redis.call or arithmetic in a function passed to it fails
// the script on a list too short for ARGV[3], and the generated callers
// must refuse such a list, as for a call made directly.
func TestVariadicCountShadowedPcallAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct{ name, body string }{
		{"a local pcall", "local pcall = function(f) return f() end\npcall(function() redis.call('SET', KEYS[1], ARGV[3]) end)"},
		{"a local function pcall", "local function pcall(f) return f() end\npcall(function() redis.call('SET', KEYS[1], ARGV[3]) end)"},
		{"a local xpcall", "local function xpcall(f, h) return f() end\nxpcall(function() redis.call('SET', KEYS[1], ARGV[3]) end, function(e) return e end)"},
		{"a local pcall, with arithmetic", "local pcall = function(f) return f() end\nlocal n = pcall(function() return ARGV[3] + 1 end)\nredis.call('SET', KEYS[1], n)"},
		{"a parameter named pcall", "local function run(pcall) return pcall(function() redis.call('SET', KEYS[1], ARGV[3]) end) end\nrun(function(f) return f() end)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, "if len(rest) < 2 {")
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "script"); !refused {
				t.Errorf("a list of one: the server returned %v", err)
			}
			if err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("m", "a", "5").Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
				t.Errorf("a list of two: the server returned %v", err)
			}
		})
	}
}

// TestVariadicCountEscapedFromPcallAgreesWithServer: a function written
// in a function passed to pcall and returned from it (pcall(function()
// return function() ... end end)) runs where the script calls it, outside
// pcall: its redis.call or arithmetic fails the script on a list too short
// for ARGV[3], and the generated callers must refuse such a list. A local
// function the protected one only calls runs protected, as before.
func TestVariadicCountEscapedFromPcallAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		want       []string // the generated caller's tests of rest
	}{
		{"a call returned", "local ok, g = pcall(function() return function() redis.call('SET', KEYS[1], ARGV[3]) end end)\ng()", []string{"if len(rest) < 2 {"}},
		{"arithmetic returned", "local ok, g = pcall(function() return function() return ARGV[3] + 1 end end)\nredis.call('SET', KEYS[1], g())", []string{"if len(rest) < 2 {"}},
		{"a local function called there", "pcall(function() local function g() redis.call('SET', KEYS[1], ARGV[3]) end\ng() end)", nil},
		{"arithmetic in a local function called there", "local ok, n = pcall(function() local function g() return ARGV[3] + 1 end\nreturn g() end)\nredis.call('SET', KEYS[1], ok and n or 0)", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if err != nil {
				t.Fatal(err)
			}
			if got := countChecks(string(out["x.lua.go"]), "rest"); !slices.Equal(got, tc.want) {
				t.Errorf("the caller checks %q, want %q", got, tc.want)
			}
			err = rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("m", "a").Build()).Error()
			if failed := err != nil && !rueidis.IsRedisNil(err); failed != (tc.want != nil) {
				t.Errorf("a list of one: the server returned %v", err)
			}
			err = rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("m", "a", "5").Build()).Error()
			if err != nil && !rueidis.IsRedisNil(err) {
				t.Errorf("a list of two: the server returned %v", err)
			}
		})
	}
}
