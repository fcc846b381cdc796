package gen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestParamTestElsewhereAgreesWithServer: a test of a parameter shows it
// to hold a value only where the test holds (the body of if v, the rest
// of the block after if not v then return end). A local given the
// parameter elsewhere (after a test that lets nil through, if v == nil
// then ... end; after one in another branch; given it on some paths after
// a test of its truth), or the parameter passed on to another function
// there, holds what a call passes it: nil or a reply that may be false is
// warned of, and the server refuses the call or fails the script. Given
// the parameter where a test shows it holds a value, it is taken, and the
// server runs the script.
func TestParamTestElsewhereAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		head    = "-- @key k\n-- @arg a string\n-- @return none\n"
		refused = "Lua redis lib command arguments must be strings or integers"
		tail    = "  redis.call('SET', KEYS[1], y)\nend\nf(nil)\n"
	)
	// warn is the warning of y, given the parameter v (via: by y = v on
	// some paths), passed to the SET of src.
	warn := func(src string, via bool) string {
		line := 1 + strings.Count(src[:strings.Index(src, "redis.call('SET'")], "\n")
		what := "a parameter that"
		if via {
			what = "a local given the parameter v, which"
		}
		return "scripts/x.lua:" + strconv.Itoa(line) + ":30: warning: argument 2 of redis.call is y, " + what + ` a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if y then ... end)`
	}
	for _, tc := range []struct {
		name, body string
		faulty     bool // warned of, and refused
		via        bool
	}{
		{"a copy after a test that lets nil through", "  if v == nil then redis.call('ECHO', ARGV[1]) end\n  local y = v\n", true, false},
		{"a copy after an exit in another branch", "  if ARGV[1] == 'x' then\n    if not v then return end\n  end\n  local y = v\n", true, false},
		{"given on some paths after a test elsewhere", "  local y = 'a'\n  if v then redis.call('ECHO', v) end\n  if ARGV[1] == 'a' then y = v end\n", true, true},
		{"a copy after an exit on it", "  if not v then return end\n  redis.call('ECHO', ARGV[1])\n  local y = v\n", false, false},
		{"given where a test holds", "  local y = 'a'\n  if v and ARGV[1] == 'a' then y = v end\n", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + "local function f(v)\n" + tc.body + tail
			want, server := "", ""
			if tc.faulty {
				want, server = warn(src, tc.via), refused
			}
			checkAndRun(t, rc, src, want, server, []string{"{t}k"}, "a")
		})
	}
	// A reply passed on to another function: false there where GET
	// replies nil, as where it is passed in.
	const (
		fwdHead = "local function g(w) return w .. 'x' end\nlocal function f(v)\n"
		fwdTail = "end\nredis.call('SET', KEYS[1], f(redis.call('GET', KEYS[1])))\n"
		fwdWarn = `scripts/x.lua:4:30: warning: concatenation (..) of w (the reply of GET a call passes it), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'w' (a boolean value)"); test w first (if not w then ... end), or give it a default where it is assigned (redis.call(...) or '')`
		fwdFail = "attempt to concatenate local 'w' (a boolean value)"
	)
	for _, tc := range []struct{ name, body, want, server string }{
		{"passed on after a test in another branch", "  if ARGV[1] == 'q' then\n    if v then redis.call('ECHO', v) end\n  end\n  return g(v)\n", fwdWarn, fwdFail},
		{"passed on where a test holds", "  if not v then return ARGV[1] end\n  return g(v)\n", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAndRun(t, rc, head+fwdHead+tc.body+fwdTail, tc.want, tc.server, []string{"{t}missing"}, "a")
		})
	}
}
