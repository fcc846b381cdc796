package parse

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseComments(t *testing.T) {
	src := "-- Lock takes a lock.\n--\n--   indented doc\n-- @key  lock   the lock\n-- @return {a int64, b string?} trailing\n--[[ long ]]\n-- not doc\nreturn 1\n"
	f, errs := Parse("x.lua", []byte(src))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if diff := cmp.Diff([]string{"Lock takes a lock.", "", "  indented doc"}, f.Doc); diff != "" {
		t.Errorf("doc (-want +got):\n%s", diff)
	}
	want := []Directive{
		{Name: "key", Pos: Pos{4, 4}, Text: "lock   the lock", TextPos: Pos{4, 10}},
		{Name: "return", Pos: Pos{5, 4}, Text: "{a int64, b string?} trailing", TextPos: Pos{5, 12}},
	}
	if diff := cmp.Diff(want, f.Directives); diff != "" {
		t.Errorf("directives (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Word{{"lock", Pos{4, 10}}, {"the", Pos{4, 17}}, {"lock", Pos{4, 21}}}, want[0].Words()); diff != "" {
		t.Errorf("words (-want +got):\n%s", diff)
	}
}

func TestParseFacts(t *testing.T) {
	src := "local x = redis.call('GET', KEYS[1], 'a'..ARGV[1])\n" +
		"redis.call(\"SET\", KEYS[2], ARGV[ #ARGV ])\n" +
		"if x then\n  return (redis.pcall('HGET', 'zz', unpack(KEYS)))\nend\n" +
		"local t = {KEYS = 1}; return t.KEYS, KEYS[0]\n"
	f, errs := Parse("x.lua", []byte(src))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	wantKeys := []Use{
		{Pos: Pos{1, 29}, Index: 1},
		{Pos: Pos{2, 19}, Index: 2},
		{Pos: Pos{4, 44}, Bare: true},
		{Pos: Pos{6, 38}, BadLiteral: "0"},
	}
	if diff := cmp.Diff(wantKeys, f.Keys); diff != "" {
		t.Errorf("KEYS uses (-want +got):\n%s", diff)
	}
	wantArgv := []Use{
		{Pos: Pos{1, 43}, Index: 1},
		{Pos: Pos{2, 28}, Dynamic: true},
		{Pos: Pos{2, 35}, Bare: true},
	}
	if diff := cmp.Diff(wantArgv, f.Argv); diff != "" {
		t.Errorf("ARGV uses (-want +got):\n%s", diff)
	}
	lit := func(s string) *string { return &s }
	wantCalls := []Call{
		{Pos: Pos{1, 11}, Func: "redis.call", Command: "GET", CommandPos: Pos{1, 22}, Args: []Arg{
			{Pos: Pos{1, 29}, Value: Value{Source: SourceKey, Text: "KEYS[1]"}, Indexed: 1},
			{Pos: Pos{1, 38}, Literal: lit("a"), Value: Value{Source: SourceLiteral, Text: `"a"`, Derived: true}},
		}, Sure: true},
		{Pos: Pos{2, 1}, Func: "redis.call", Command: "SET", CommandPos: Pos{2, 12}, Args: []Arg{
			{Pos: Pos{2, 19}, Value: Value{Source: SourceKey, Text: "KEYS[2]"}, Indexed: 2},
			{Pos: Pos{2, 28}, Value: Value{Source: SourceArgv, Text: "ARGV[i]"}},
		}, Sure: true},
		{Pos: Pos{4, 11}, Func: "redis.pcall", Command: "HGET", CommandPos: Pos{4, 23}, Args: []Arg{
			{Pos: Pos{4, 31}, Literal: lit("zz"), Exact: true, Value: Value{Source: SourceLiteral, Text: `"zz"`}},
			{Pos: Pos{4, 37}, Value: Value{Source: SourceKey, Text: "unpack(KEYS)", Derived: true}, Expands: true, Unpacks: "KEYS"},
		}},
	}
	if diff := cmp.Diff(wantCalls, f.Calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestParseBodyFacts(t *testing.T) {
	src := "local a = 1\n" +
		"b = 2\n" +
		"function g() end\n" +
		"local function h(p) p = 1; return p end\n" +
		"for i, k in ipairs(KEYS) do redis.call('DEL', k) end\n" +
		"local v = redis.call('GET', KEYS[1])\n" +
		"redis.call('DEL', v)\n" +
		"if a then return redis.error_reply('NOPE no') end\n" +
		"if v then return {err = 'BAD x'} end\n" +
		"if b then error('OOPS x') end\n" +
		"if a then return 'x' end\n" +
		"return redis.call('INCR', KEYS[1])\n"
	f, errs := Parse("x.lua", []byte(src))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if diff := cmp.Diff([]Global{{Pos{2, 1}, "b", false}, {Pos{3, 10}, "g", true}}, f.Globals); diff != "" {
		t.Errorf("globals (-want +got):\n%s", diff)
	}
	var sources []Value
	for _, c := range f.Calls {
		if len(c.Args) > 0 {
			sources = append(sources, c.Args[0].Value)
		}
	}
	wantSources := []Value{{Source: SourceKey, Text: "KEYS[i]"}, {Source: SourceKey, Text: "KEYS[1]"}, {Source: SourceRedis, Text: "v"}, {Source: SourceKey, Text: "KEYS[1]"}}
	if diff := cmp.Diff(wantSources, sources); diff != "" {
		t.Errorf("first argument sources (-want +got):\n%s", diff)
	}
	wantSites := []ErrorSite{
		{Pos{8, 18}, "NOPE no", "redis.error_reply", "", ""},
		{Pos{9, 19}, "BAD x", "{err = ...}", "", ""},
		{Pos{10, 11}, "OOPS x", "error()", "", ""},
	}
	if diff := cmp.Diff(wantSites, f.ErrorSites); diff != "" {
		t.Errorf("error sites (-want +got):\n%s", diff)
	}
	wantReturns := []Return{
		{Pos: Pos{8, 18}, Kind: ReturnError},
		{Pos: Pos{9, 18}, Kind: ReturnError, Len: -1},
		{Pos: Pos{11, 18}, Kind: ReturnString, Text: `"x"`},
		{Pos: Pos{12, 8}, Kind: ReturnCall, Command: "INCR", CallFunc: "redis.call", Call: 3},
	}
	if diff := cmp.Diff(wantReturns, f.Returns); diff != "" {
		t.Errorf("returns (-want +got):\n%s", diff)
	}
	f, _ = Parse("x.lua", []byte("-- @key k\nlocal = 1\n"))
	if !f.SyntaxError {
		t.Error("SyntaxError not set for a script the Lua parser refuses")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []Error
	}{
		{"local x = = 1\n", []Error{{Pos{1, 11}, `Lua syntax error near "=": syntax error`}}},
		// Redis: user_script:3 ('end' expected near '<eof>'): the line after the last line break.
		{"-- doc\nif x then\n", []Error{{Pos{3, 1}, "Lua syntax error at end of file: syntax error"}}},
		{"return 1\n-- @key k\n", []Error{{Pos{2, 4}, "directive @key must be in the leading comment block"}}},
	} {
		_, errs := Parse("x.lua", []byte(tc.src))
		if diff := cmp.Diff(tc.want, errs); diff != "" {
			t.Errorf("Parse(%q) errors (-want +got):\n%s", tc.src, diff)
		}
	}
}

// FuzzParse checks that no input makes the parser panic and that every
// reported position is inside the file.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/*/scripts/*.lua")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "--", "-- @", "-- @key", "-- @arg a b c d\n-- @return {x int64?}?\n",
		"--[[\n-- @key x\n]]\nreturn KEYS[1]", "return redis.call('GET', 'x' .. 'y' .. KEYS[1])",
		"return redis.call(", "KEYS[#KEYS]", "local KEYS = {}; return KEYS[9]",
		"return redis.call\"GET\"", "\r\n-- @key k\r\nreturn KEYS[1]\r\n", "return \"unterminated",
		"goto x; ::x::", "return function(...) return ... end",
		"#!lua flags=no-writes\n-- @return none\nreturn 1\n", "#!", "#!lua\x00\n", "\ufeff#!lua\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, errs := Parse("fuzz.lua", src)
		if file == nil {
			t.Fatal("nil File")
		}
		lines := 1
		for _, b := range src {
			if b == '\n' || b == '\r' {
				lines++
			}
		}
		for _, e := range errs {
			if e.Pos.Line < 1 || e.Pos.Col < 1 || e.Pos.Line > lines+1 {
				t.Errorf("error %v outside the file (%d lines)", e, lines)
			}
		}
	})
}

func TestLuaIndex(t *testing.T) {
	for _, tc := range []struct {
		lit string
		n   int
		ok  bool
	}{
		{"1", 1, true}, {"0x1", 1, true}, {"0X1f", 31, true}, {"1.0", 1, true}, {"1e0", 1, true},
		{".1e1", 1, true}, {"2E+1", 20, true}, {"0", 0, false}, {"0x0", 0, false}, {"1.5", 0, false},
		{"1e300", 0, false}, {"0xg", 0, false},
	} {
		if n, ok := luaIndex(tc.lit); n != tc.n || ok != tc.ok {
			t.Errorf("luaIndex(%q) = %d, %v; want %d, %v", tc.lit, n, ok, tc.n, tc.ok)
		}
	}
}

// TestParseShebang: a script starting with "#!" has a shebang line (Redis 7
// script flags), which is blanked for the Lua parser so that positions stay
// those of the file; the leading comment block starts after it.
func TestParseShebang(t *testing.T) {
	for _, tc := range []struct {
		name       string
		src        string
		shebang    *Shebang
		doc        []string
		directives []Directive
		errs       []Error
	}{
		{
			name:       "flags, doc and directives",
			src:        "#!lua flags=allow-oom\n-- Count counts.\n-- @return int64\nreturn 1\n",
			shebang:    &Shebang{Text: "#!lua flags=allow-oom", Pos: Pos{1, 1}},
			doc:        []string{"Count counts."},
			directives: []Directive{{Name: "return", Pos: Pos{3, 4}, Text: "int64", TextPos: Pos{3, 12}}},
		},
		{
			name:       "CRLF",
			src:        "#!lua\r\n-- @return none\r\nreturn 1\r\n",
			shebang:    &Shebang{Text: "#!lua", Pos: Pos{1, 1}},
			directives: []Directive{{Name: "return", Pos: Pos{2, 4}, Text: "none", TextPos: Pos{2, 12}}},
		},
		{
			name:    "no newline",
			src:     "#!lua flags=no-writes",
			shebang: &Shebang{Text: "#!lua flags=no-writes", Pos: Pos{1, 1}},
			errs:    []Error{{Pos{1, 1}, `the script starts with "#!" (a Redis 7 shebang line) but has no newline: Redis refuses it ("ERR Invalid script shebang"); end the #! line with a newline, or remove it`}},
		},
		{
			name:    "NUL byte before the newline",
			src:     "#!lua\x00 x\nreturn 1\n",
			shebang: &Shebang{Text: "#!lua\x00 x", Pos: Pos{1, 1}},
			errs:    []Error{{Pos{1, 6}, `the #! line (a Redis 7 shebang line) holds a NUL byte: Redis reads the script up to it and finds no newline, so it refuses the script ("ERR Invalid script shebang"); remove the NUL byte`}},
		},
		{
			name: "later lines keep their numbers",
			src:  "#!lua\n\nreturn x +\n",
			// Redis: user_script:4: unexpected symbol near '<eof>'.
			shebang: &Shebang{Text: "#!lua", Pos: Pos{1, 1}},
			errs:    []Error{{Pos{4, 1}, "Lua syntax error at end of file: syntax error"}},
		},
		{
			name:    "directive after the leading block",
			src:     "#!lua\nreturn 1\n-- @key k\n",
			shebang: &Shebang{Text: "#!lua", Pos: Pos{1, 1}},
			errs:    []Error{{Pos{3, 4}, "directive @key must be in the leading comment block"}},
		},
		{
			name: "a leading space is no shebang",
			src:  " #!lua\nreturn 1\n",
			errs: []Error{{Pos{1, 2}, `Lua syntax error near "#": syntax error`}},
		},
		{
			name:       "only the first line",
			src:        "-- @return none\n#!lua\n",
			directives: []Directive{{Name: "return", Pos: Pos{1, 4}, Text: "none", TextPos: Pos{1, 12}}},
			errs:       []Error{{Pos{2, 1}, `Lua syntax error near "#": syntax error`}},
		},
		{
			name:       "after a byte-order mark",
			src:        "\ufeff#!lua flags=no-writes\n-- @return none\n",
			shebang:    &Shebang{Text: "#!lua flags=no-writes", Pos: Pos{1, 4}},
			directives: []Directive{{Name: "return", Pos: Pos{2, 4}, Text: "none", TextPos: Pos{2, 12}}},
			errs:       []Error{{Pos{1, 1}, `the file starts with a UTF-8 byte-order mark, which Redis refuses to compile ("Error compiling script (new function): user_script:1: unexpected symbol near ..."): save the file without it`}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, errs := Parse("x.lua", []byte(tc.src))
			if diff := cmp.Diff(tc.errs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.shebang, f.Shebang); diff != "" {
				t.Errorf("shebang (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.doc, f.Doc); diff != "" {
				t.Errorf("doc (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.directives, f.Directives); diff != "" {
				t.Errorf("directives (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(tc.src, "\ufeff") && len(f.Source) != len(tc.src) {
				t.Errorf("source is %d bytes, the file %d", len(f.Source), len(tc.src))
			}
			if tc.shebang != nil && bytes.ContainsRune(f.Source[:bytes.IndexByte(append(f.Source, '\n'), '\n')], '#') {
				t.Errorf("shebang line not blanked: %q", f.Source)
			}
		})
	}
}

// TestPeekedPositions: the positions taken without using up an occurrence
// (unpack, an argument Lua 5.1 ignores) leave the next lookup of the same
// name on the line its own occurrence.
func TestPeekedPositions(t *testing.T) {
	src := "local v = redis.call('GET', KEYS[1])\n" +
		"local s = string.rep('a', 3, ',') .. string.rep(v, 2)\n" +
		"local m = redis.call('SMEMBERS', KEYS[1])\n" +
		"return {unpack(m), unpack(redis.call('GET', KEYS[1]))}\n"
	f, errs := Parse("x.lua", []byte(src))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(f.IgnoredArgs) != 1 || f.IgnoredArgs[0].Pos != (Pos{2, 18}) {
		t.Errorf("ignored arguments %+v, want string.rep at 2:18", f.IgnoredArgs)
	}
	var rep []Pos
	for _, o := range f.Operations {
		if o.Op == "string.rep" {
			rep = append(rep, o.Pos)
		}
	}
	if len(rep) != 1 || rep[0] != (Pos{2, 45}) {
		t.Errorf("string.rep of v at %v, want 2:45 (the second rep)", rep)
	}
	if len(f.Unpacks) != 2 || f.Unpacks[0].Pos != (Pos{4, 9}) || f.Unpacks[1].Pos != (Pos{4, 20}) {
		t.Errorf("unpacks %+v, want them at 4:9 and 4:20", f.Unpacks)
	}
}
