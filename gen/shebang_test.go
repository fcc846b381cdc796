package gen

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shebangLines generates one script and returns every line the checker
// prints, errors and warnings, sorted (nil when it prints none).
func shebangLines(t *testing.T, src string) []string {
	t.Helper()
	_, warnings, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
	var es Errors
	switch {
	case err == nil:
		es = warnings
	case !errors.As(err, &es):
		t.Fatalf("Generate: %v (not checker errors)", err)
	}
	var lines []string
	for _, e := range es {
		lines = append(lines, e.Error())
	}
	return lines
}

// TestCheckShebang: the #!lua line of a Redis 7 script is read as Redis
// 7.0 reads it; what Redis refuses is reported at the word or flag it
// refuses, with Redis's own answer.
func TestCheckShebang(t *testing.T) {
	const body = "-- @return int64\nreturn 1\n"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "wrong engine",
			src:  "#!luajit\n" + body,
			want: []string{`scripts/x.lua:1:1: "#!luajit" is not a script engine Redis runs: Redis refuses the script ("ERR Unexpected engine in script shebang: #!luajit"); start the line with #!lua`},
		},
		{
			name: "interpreter path",
			src:  "#!/usr/bin/env lua\n" + body,
			want: []string{`scripts/x.lua:1:1: "#!/usr/bin/env" is not a script engine Redis runs: Redis refuses the script ("ERR Unexpected engine in script shebang: #!/usr/bin/env"); start the line with #!lua`},
		},
		{
			name: "space after #!",
			src:  "#! lua flags=no-writes\n" + body,
			want: []string{`scripts/x.lua:1:1: "#!" is not a script engine Redis runs: Redis refuses the script ("ERR Unexpected engine in script shebang: #!"); write #!lua, without a space`},
		},
		{
			name: "no newline",
			src:  "#!lua",
			want: []string{
				`scripts/x.lua:1:1: missing @return (use "@return none" for a script without a reply)`,
				`scripts/x.lua:1:1: the script starts with "#!" (a Redis 7 shebang line) but has no newline: Redis refuses it ("ERR Invalid script shebang"); end the #! line with a newline, or remove it`,
			},
		},
		{
			name: "misspelt flags=",
			src:  "#!lua flag=no-writes\n" + body,
			want: []string{`scripts/x.lua:1:7: unknown option "flag=no-writes" on the #!lua line: Redis refuses the script ("ERR Unknown lua shebang option: flag=no-writes"); did you mean flags=no-writes?`},
		},
		{
			name: "flags without =",
			src:  "#!lua flags\n" + body,
			want: []string{`scripts/x.lua:1:7: unknown option "flags" on the #!lua line: Redis refuses the script ("ERR Unknown lua shebang option: flags"); write flags= and the flags as one word: flags=name,name`},
		},
		{
			name: "flag without flags=",
			src:  "#!lua no-writes\n" + body,
			want: []string{`scripts/x.lua:1:7: unknown option "no-writes" on the #!lua line: Redis refuses the script ("ERR Unknown lua shebang option: no-writes"); did you mean flags=no-writes? (flags are written in one flags= word, separated by commas without spaces)`},
		},
		{
			name: "unknown option",
			src:  "#!lua flags=allow-oom strict\n" + body,
			want: []string{`scripts/x.lua:1:23: unknown option "strict" on the #!lua line: Redis refuses the script ("ERR Unknown lua shebang option: strict"); the only option is flags=name,name (e.g. #!lua flags=no-writes,allow-oom)`},
		},
		{
			name: "space after a comma",
			src:  "#!lua flags=allow-oom, no-writes\n" + body,
			want: []string{
				`scripts/x.lua:1:23: empty script flag in "flags=allow-oom,": Redis refuses the script ("ERR Unexpected flag in script shebang: "); separate flags with one comma and no spaces (flags=allow-oom,no-writes)`,
				`scripts/x.lua:1:24: unknown option "no-writes" on the #!lua line: Redis refuses the script ("ERR Unknown lua shebang option: no-writes"); did you mean flags=no-writes? (flags are written in one flags= word, separated by commas without spaces)`,
			},
		},
		{
			name: "leading comma",
			src:  "#!lua flags=,allow-oom\n" + body,
			want: []string{`scripts/x.lua:1:13: empty script flag in "flags=,allow-oom": Redis refuses the script ("ERR Unexpected flag in script shebang: "); separate flags with one comma and no spaces (flags=allow-oom,no-writes)`},
		},
		{
			name: "unknown flags",
			src:  "#!lua flags=no-write,allow_oom,NO-CLUSTER,oom\n" + body,
			want: []string{
				`scripts/x.lua:1:13: unknown script flag "no-write": Redis refuses the script ("ERR Unexpected flag in script shebang: no-write"); did you mean no-writes?`,
				`scripts/x.lua:1:22: unknown script flag "allow_oom": Redis refuses the script ("ERR Unexpected flag in script shebang: allow_oom"); did you mean allow-oom?`,
				`scripts/x.lua:1:32: unknown script flag "NO-CLUSTER": Redis refuses the script ("ERR Unexpected flag in script shebang: NO-CLUSTER"); did you mean no-cluster?`,
				`scripts/x.lua:1:43: unknown script flag "oom": Redis refuses the script ("ERR Unexpected flag in script shebang: oom"); the flags are no-writes, allow-oom, allow-stale, no-cluster and allow-cross-slot-keys`,
			},
		},
		{
			name: "vertical tab is part of a word",
			src:  "#!lua flags=no-writes\v\n" + body,
			want: []string{`scripts/x.lua:1:13: unknown script flag "no-writes\v": Redis refuses the script ("ERR Unexpected flag in script shebang: no-writes\v"); did you mean no-writes?`},
		},
		{
			name: "quoted word, flag at the word",
			src:  "#!lua 'flags=bogus'\n" + body,
			want: []string{`scripts/x.lua:1:7: unknown script flag "bogus": Redis refuses the script ("ERR Unexpected flag in script shebang: bogus"); the flags are no-writes, allow-oom, allow-stale, no-cluster and allow-cross-slot-keys`},
		},
		{
			name: "unclosed quote",
			src:  "#!lua \"flags=no-writes\n" + body,
			want: []string{`scripts/x.lua:1:7: the #! line cannot be split into words (a quote is not closed): Redis refuses the script ("ERR Invalid engine in script shebang"); write the line as #!lua flags=name,name (no quotes)`},
		},
		{
			name: "text after a closing quote",
			src:  "#!lua \"flags=no-writes\"x\n" + body,
			want: []string{`scripts/x.lua:1:24: the #! line cannot be split into words (a closing quote is followed by more text): Redis refuses the script ("ERR Invalid engine in script shebang"); write the line as #!lua flags=name,name (no quotes)`},
		},
		{
			name: "duplicate flag",
			src:  "#!lua flags=no-writes flags=allow-oom,no-writes\n" + body,
			want: []string{`scripts/x.lua:1:39: warning: script flag no-writes is given twice (first at column 13): Redis accepts it, but the second has no effect; remove it`},
		},
		{
			name: "readonly without no-writes",
			src:  "#!lua flags=allow-oom\n-- @readonly\n" + body,
			want: []string{`scripts/x.lua:1:1: the #!lua line has no flag no-writes, but @readonly (line 2) makes the callers use EVALSHA_RO, which Redis refuses for such a script ("ERR Can not execute a script with write flag using *_ro command."): add flags=no-writes to the #!lua line, or drop the line`},
		},
		{
			name: "readonly with a bare #!lua",
			src:  "#!lua\n-- Doc.\n-- @readonly\n" + body,
			want: []string{`scripts/x.lua:1:1: the #!lua line has no flag no-writes, but @readonly (line 3) makes the callers use EVALSHA_RO, which Redis refuses for such a script ("ERR Can not execute a script with write flag using *_ro command."): add flags=no-writes to the #!lua line, or drop the line`},
		},
		{
			name: "no-writes and a write",
			src:  "#!lua flags=no-writes\n-- @key k\n-- @return int64\nreturn redis.call('DEL', KEYS[1])\n",
			want: []string{`scripts/x.lua:4:19: the script flag no-writes forbids DEL, a write command: Redis refuses it at run time ("ERR Write commands are not allowed from read-only scripts."); remove the call or the flag`},
		},
		{
			name: "no-writes and a protected write",
			src:  "#!lua flags=allow-oom,no-writes\n-- @key k\n-- @return none\nredis.pcall('SET', KEYS[1], 'v')\n",
			want: []string{`scripts/x.lua:4:13: the script flag no-writes forbids SET, a write command: Redis refuses it at run time ("ERR Write commands are not allowed from read-only scripts."); remove the call or the flag`},
		},
		{
			name: "no-writes, @readonly and a replicated command",
			src:  "#!lua flags=no-writes\n-- @key k\n-- @readonly\n-- @return int64\nreturn redis.call('PUBLISH', KEYS[1], 'x')\n",
			want: []string{`scripts/x.lua:5:19: the script flag no-writes forbids PUBLISH, a command Redis replicates: Redis refuses it at run time ("ERR Write commands are not allowed from read-only scripts."); remove the call, or the flag and @readonly`},
		},
		{
			name: "no-writes and a computed subcommand",
			src:  "#!lua flags=no-writes\n-- @key k\n-- @arg sub string\n-- @return string?\nreturn redis.call('OBJECT', ARGV[1], KEYS[1])\n",
			want: []string{`scripts/x.lua:5:29: the script flag no-writes forbids writes, and the script calls OBJECT with the subcommand ARGV[1], not a literal: the checker cannot tell whether it writes; write the subcommand as a string literal`},
		},
		{
			name: "later positions are the file's",
			src:  "#!lua flags=allow-oom\n-- @key k\n-- @return int64\nreturn redis.call('GET', KEYS[1])\n",
			want: []string{`scripts/x.lua:4:8: GET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "syntax error line after the shebang",
			src:  "#!lua\n-- @return int64\n\nreturn x +\n",
			// Redis: user_script:5, the line after the last line break.
			want: []string{`scripts/x.lua:5:1: Lua syntax error at end of file: syntax error`},
		},
		{
			name: "a leading space is no shebang",
			src:  " #!lua\n" + body,
			want: []string{
				`scripts/x.lua:1:1: missing @return (use "@return none" for a script without a reply)`,
				`scripts/x.lua:1:2: Lua syntax error near "#": syntax error`,
				"scripts/x.lua:2:4: directive @return must be in the leading comment block",
			},
		},
		{
			name: "byte-order mark before the shebang",
			src:  "\ufeff#!lua flags=no-writes\n" + body,
			want: []string{`scripts/x.lua:1:1: the file starts with a UTF-8 byte-order mark, which Redis refuses to compile ("Error compiling script (new function): user_script:1: unexpected symbol near ..."): save the file without it`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, shebangLines(t, tc.src)); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckShebangAccepts: the forms Redis 7.0 accepts, and the flags the
// model gets from them.
func TestCheckShebangAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		flags     []string
	}{
		{"bare", "#!lua\n-- @return int64\nreturn 1\n", nil},
		{"empty flags=", "#!lua flags=\n-- @return int64\nreturn 1\n", nil},
		{"one flag", "#!lua flags=allow-oom\n-- @key k\n-- @return int64\nreturn redis.call('INCRBY', KEYS[1], 1)\n", []string{"allow-oom"}},
		{"CRLF", "#!lua\r\n-- @return int64\r\nreturn 1\r\n", nil},
		{"tab and trailing spaces", "#!lua\tflags=allow-stale  \n-- @return int64\nreturn 1\n", []string{"allow-stale"}},
		{"two flags= words", "#!lua flags=allow-oom flags=no-writes\n-- @return int64\nreturn 1\n", []string{"allow-oom", "no-writes"}},
		{"every flag", "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\n-- @return int64\nreturn 1\n",
			[]string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}},
		{"quoted as Redis splits it", "#!lua \"flags=no-\\x77rites\" flags='allow-oom'\n-- @return int64\nreturn 1\n", []string{"no-writes", "allow-oom"}},
		{"no-writes and @readonly reading", "#!lua flags=no-writes\n-- Get reads.\n-- @key k\n-- @readonly\n-- @return string?\nreturn redis.call('GET', KEYS[1])\n", []string{"no-writes"}},
		{"no-writes without @readonly", "#!lua flags=no-writes\n-- @key k\n-- @return int64\nreturn redis.call('EXISTS', KEYS[1])\n", []string{"no-writes"}},
		{"@readonly without a shebang", "-- @key k\n-- @readonly\n-- @return int64\nreturn redis.call('EXISTS', KEYS[1])\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shebangLines(t, tc.src); got != nil {
				t.Fatalf("rejected:\n%s", strings.Join(got, "\n"))
			}
			info, errs := buildScript(File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if len(errs) > 0 {
				t.Fatalf("buildScript: %v", errs)
			}
			s := info.s
			if want := strings.HasPrefix(tc.src, "#!"); s.Flagged != want {
				t.Errorf("Flagged = %v, want %v", s.Flagged, want)
			}
			if diff := cmp.Diff(tc.flags, s.Flags); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
			if s.Source != tc.src {
				t.Errorf("Source = %q, want the file verbatim", s.Source)
			}
		})
	}
}

// TestSplitShebang compares the word splitting with Redis's (sdssplitargs).
func TestSplitShebang(t *testing.T) {
	for _, tc := range []struct {
		line  string
		words []shebangWord
		bad   *shebangSplitError
	}{
		{"#!lua", []shebangWord{{"#!lua", 0, false}}, nil},
		{"#!lua  flags=a\tb\r", []shebangWord{{"#!lua", 0, false}, {"flags=a", 7, false}, {"b", 15, false}}, nil},
		{"#!lua \v\fx\vy", []shebangWord{{"#!lua", 0, false}, {"x\vy", 8, false}}, nil},
		{`#!lua "a\x41\n\"b" 'c\'d' e"f g"`, []shebangWord{{"#!lua", 0, false}, {"aA\n\"b", 6, true}, {"c'd", 19, true}, {"ef g", 26, true}}, nil},
		{"#!lua x\x00 y", []shebangWord{{"#!lua", 0, false}, {"x", 6, false}}, nil},
		{`#!lua "ab`, nil, &shebangSplitError{off: 6, unclosed: true}},
		{`#!lua x'ab`, nil, &shebangSplitError{off: 7, unclosed: true}},
		{`#!lua "ab"c`, nil, &shebangSplitError{off: 10}},
	} {
		words, bad := splitShebang(tc.line)
		if bad != nil {
			words = nil
		}
		if diff := cmp.Diff(tc.words, words, cmp.AllowUnexported(shebangWord{})); diff != "" {
			t.Errorf("splitShebang(%q) words (-want +got):\n%s", tc.line, diff)
		}
		if diff := cmp.Diff(tc.bad, bad, cmp.AllowUnexported(shebangSplitError{})); diff != "" {
			t.Errorf("splitShebang(%q) error (-want +got):\n%s", tc.line, diff)
		}
	}
}
