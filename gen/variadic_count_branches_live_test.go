package gen

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicCountBranchesAgreeWithServer: two paths the checker cannot
// decide between, each giving a variadic list whole to a command that
// takes a fixed number of its values (RENAME of unpack(KEYS), two; GET of
// it, one), need counts no one count meets. The callers cannot tell which
// path runs: they must take every count some path runs (one key and two),
// and refuse those no path runs (none, three).
func TestVariadicCountBranchesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key ks...\n-- @arg mode string\n-- @return none\n"
	for _, tc := range []struct {
		name, body string
		want       []string // the generated caller's tests
		runs       map[string][]string
	}{
		{"RENAME then GET", "if ARGV[1] == 'r' then redis.call('RENAME', unpack(KEYS)) else redis.call('GET', unpack(KEYS)) end",
			[]string{"if len(ks) == 0 {", "if len(ks) > 2 {"}, map[string][]string{"r": {"{t}a", "{t}b"}, "g": {"{t}a"}}},
		{"GET then RENAME", "if ARGV[1] == 'g' then redis.call('GET', unpack(KEYS)) else redis.call('RENAME', unpack(KEYS)) end",
			[]string{"if len(ks) == 0 {", "if len(ks) > 2 {"}, map[string][]string{"r": {"{t}a", "{t}b"}, "g": {"{t}a"}}},
		{"GET then KEYS[3]", "if ARGV[1] == 'g' then redis.call('GET', unpack(KEYS)) else redis.call('SET', KEYS[3], 'x') end",
			[]string{"if len(ks) == 0 {"}, map[string][]string{"r": {"{t}a", "{t}b", "{t}c"}, "g": {"{t}a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if err != nil {
				t.Fatal(err)
			}
			code := string(out["x.lua.go"])
			got := countChecks(code, "ks")
			if !slices.Equal(got, tc.want) {
				t.Errorf("the caller checks %q, want %q", got, tc.want)
			}
			for mode, keys := range tc.runs {
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Arg(mode).Build()).Error()
				if err != nil && !rueidis.IsRedisNil(err) && !strings.Contains(err.Error(), "no such key") {
					t.Errorf("%s with %d keys: the server returned %v", mode, len(keys), err)
				}
			}
		})
	}
}

// countChecks is the tests of the length of list that code makes, each
// once, in order.
func countChecks(code, list string) []string {
	var got []string
	for _, c := range regexp.MustCompile(`if len\(`+list+`\) [=<>]+ [0-9]+ \{`).FindAllString(code, -1) {
		if !slices.Contains(got, c) {
			got = append(got, c)
		}
	}
	return got
}

// TestVariadicCountFunctionEveryRun: a call in a local function that the
// script calls on every run is made on every run. GET of unpack(KEYS) and
// RENAME of it, one of them in such a function, fail whatever the count
// (one key fails RENAME, two GET): the script must be refused, as when
// both are written at the top. The generator warned of the function's
// call as a path that may never run, and the callers took one key.
func TestVariadicCountFunctionEveryRun(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key ks...\n-- @return none\n"
	for _, tc := range []struct {
		name, body string
		err        string // what the generator's error holds, "" for none
		want       []string
	}{
		{"RENAME in the function", "local function f() redis.call('RENAME', unpack(KEYS)) end\nredis.call('GET', unpack(KEYS))\nf()",
			"RENAME (line 4) needs 2 values of ks at least, and GET (line 5) takes 1 at most", nil},
		{"GET in the function", "local function f() return redis.call('GET', unpack(KEYS)) end\nf()\nredis.call('RENAME', unpack(KEYS))",
			"RENAME (line 6) needs 2 values of ks at least, and GET (line 4) takes 1 at most", nil},
		{"GET in a function a function calls", "local g = function() redis.call('GET', unpack(KEYS)) end\nlocal function f() g() end\nf()\nredis.call('RENAME', unpack(KEYS))",
			"RENAME (line 7) needs 2 values of ks at least, and GET (line 4) takes 1 at most", nil},
		// Called in a branch only: the checker cannot tell whether it runs.
		{"the function called in a branch", "local function f() redis.call('RENAME', unpack(KEYS)) end\nif redis.call('DBSIZE') > 5 then f() else redis.call('GET', unpack(KEYS)) end",
			"", []string{"if len(ks) == 0 {", "if len(ks) > 2 {"}},
		// Another function given the name: not the one written.
		{"the name given another function", "local function f() redis.call('RENAME', unpack(KEYS)) end\nif redis.call('DBSIZE') > 5 then f = function() end end\nf()\nredis.call('GET', unpack(KEYS))",
			"", []string{"if len(ks) == 0 {", "if len(ks) > 1 {"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			out, warns, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := countChecks(string(out["x.lua.go"]), "ks"); !slices.Equal(got, tc.want) {
					t.Errorf("the caller checks %q, want %q", got, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("the generator returned %v (warnings %v), want an error holding %q", err, warns, tc.err)
			}
			// Whatever the count, the server fails the script.
			for _, keys := range [][]string{{"{t}a"}, {"{t}a", "{t}b"}} {
				if err := rc.Do(ctx, rc.B().Set().Key("{t}a").Value("v").Build()).Error(); err != nil {
					t.Fatal(err)
				}
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Build()).Error()
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), "wrong number of arg") {
					t.Errorf("%d keys: the server returned %v", len(keys), err)
				}
			}
		})
	}
}

// TestVariadicCountElementOnAPathAgreesWithServer: a call made on every
// run that gets ARGV[n] past the most another call on every run takes only
// on some paths (c and 'z' or ARGV[2], a local given it in an if, a
// parameter one call of the function passes it) runs with fewer on the
// other paths: the generator must not refuse the script as failing
// whatever the count, and the callers must take the counts the other
// paths run, which the server runs.
func TestVariadicCountElementOnAPathAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg fs... string\n-- @return none\nredis.call('HGET', KEYS[1], unpack(ARGV))\nlocal c = redis.call('EXISTS', KEYS[1] .. ':s') == 1\n"
	for _, tc := range []struct{ name, body string }{
		{"the right of an or", "redis.call('SET', KEYS[1] .. ':s', c and 'z' or ARGV[2])"},
		{"a local given it in an if", "local v = 'z'\nif not c then v = ARGV[2] end\nredis.call('SET', KEYS[1] .. ':s', v)"},
		{"a parameter", "local function f(v) redis.call('SET', KEYS[1] .. ':s', v) end\nf('z')\nif not c then f(ARGV[2]) end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			out, warns, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
			if err != nil {
				t.Fatalf("the generator returned %v", err)
			}
			if got, want := countChecks(string(out["x.lua.go"]), "fs"), []string{"if len(fs) == 0 {", "if len(fs) > 1 {"}; !slices.Equal(got, want) {
				t.Errorf("the caller checks %q (warnings %v), want %q", got, warns, want)
			}
			if err := rc.Do(ctx, rc.B().Set().Key("{t}k:s").Value("v").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			if err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("f").Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
				t.Errorf("one argument: the server returned %v", err)
			}
		})
	}
}

// TestVariadicCountOperandEveryRunAgreesWithServer: ARGV[n] read as an
// operand of arithmetic or a concatenation, or tested by assert, on every
// run fails every run on a list too short to hold it, whatever the paths
// after: a command that takes fewer on one of those paths (HGET of
// unpack(ARGV), one) cannot lift it. The callers must refuse that count,
// which the server fails, and take more, which the other path runs.
func TestVariadicCountOperandEveryRunAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const (
		head = "-- X does it.\n-- @key k\n-- @arg fs... string\n-- @return none\n"
		tail = "if redis.call('EXISTS', KEYS[1] .. ':h') == 1 then return redis.call('HGET', KEYS[1] .. ':h', unpack(ARGV)) end\nredis.call('SET', KEYS[1], n)\n"
	)
	for _, tc := range []struct{ name, body string }{
		{"a concatenation", "local n = ARGV[2] .. ':x'"},
		{"arithmetic", "local n = ARGV[2] + 1"},
		{"assert", "local n = 'x'\nassert(ARGV[2], 'no value')"},
		{"in a function called on every run", "local function g() return ARGV[2] .. ':x' end\nlocal n = g()"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n" + tail
			out, warns, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
			if err != nil {
				t.Fatalf("the generator returned %v", err)
			}
			if got, want := countChecks(string(out["x.lua.go"]), "fs"), []string{"if len(fs) < 2 {"}; !slices.Equal(got, want) {
				t.Errorf("the caller checks %q (warnings %v), want %q", got, warns, want)
			}
			if err := rc.Do(ctx, rc.B().Del().Key("{t}k:h").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"f"}, "script"); !refused {
				t.Errorf("one argument: the server returned %v", err)
			}
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"f", "5"}, "err"); refused {
				t.Errorf("two arguments: the server returned %v", err)
			}
		})
	}
}

// TestVariadicCountCapOnAPathWarned: a command made only on some paths
// that takes fewer of a variadic list than a call made on every run needs
// (GET of unpack(KEYS) in an if, RENAME of it on every run) can never
// succeed: Redis fails one of them whatever the count. The callers check
// the count for the call every run makes, and the generator must warn of
// the other, as it does when the path needs more than every run takes.
func TestVariadicCountCapOnAPathWarned(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	src := "-- X does it.\n-- @key ks...\n-- @return none\nredis.call('RENAME', unpack(KEYS))\nif redis.call('EXISTS', KEYS[2]) == 1 then return redis.call('GET', unpack(KEYS)) end\n"
	out, warns, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := countChecks(string(out["x.lua.go"]), "ks"), []string{"if len(ks) < 2 {", "if len(ks) > 2 {"}; !slices.Equal(got, want) {
		t.Errorf("the caller checks %q, want %q", got, want)
	}
	if !strings.Contains(fmt.Sprint(warns), "GET (line 5) takes 1 values of ks at most, but RENAME (line 4), which every run makes, needs 2 at least") {
		t.Errorf("the generator warned %v, want a warning of GET (line 5)", warns)
	}
	// The path that makes GET fails whatever the count.
	for _, keys := range [][]string{{"{t}a", "{t}b"}} {
		if err := rc.Do(ctx, rc.B().Set().Key("{t}a").Value("v").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if refused, err := evalRefused(ctx, rc, src, keys, nil, "wrong number of arg"); !refused {
			t.Errorf("%d keys: the server returned %v", len(keys), err)
		}
	}
}
