package gen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestDeadBranchBreakAgreesWithServer: a break in a branch no run takes
// (if false then break end, if nil, the else of if true, elseif false,
// nested in a live if or a do block) leaves no loop: a local given a value
// at each break that runs holds it after the loop, a loop whose only break
// is dead never ends, and a numeric for, a repeat or a while with such a
// break runs its body as if it had none; nor is the missing else of if
// true a path past the if. Such correct scripts are taken,
// and the server runs them. A live break beside a dead one, or the live
// branch of an if whose other is dead, is still read: a local nil there
// is warned of, and the server refuses the call.
func TestDeadBranchBreakAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		head    = "-- @key k\n-- @arg a string\n-- @return none\n"
		use     = "redis.call('SET', KEYS[1], x)\n"
		refused = "Lua redis lib command arguments must be strings or integers"
	)
	// warn is the warning of x passed to redis.call on the last line of src.
	warn := func(src string) string {
		line := strings.Count(src, "\n")
		return "scripts/x.lua:" + strconv.Itoa(line) + `:28: warning: argument 2 of redis.call is x, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if x then ... end)`
	}
	for _, loop := range []struct{ open, close string }{{"while true do", "end"}, {"repeat", "until nil"}} {
		for _, tc := range []struct {
			name, body string
			faulty     bool // x is nil at a break that runs: warned of, and refused
		}{
			{"if false then break end", "if false then break end\nx = ARGV[1]\nbreak", false},
			{"if nil then break end", "if nil then break end\nx = ARGV[1]\nbreak", false},
			{"the else of if true", "if true then else break end\nx = ARGV[1]\nbreak", false},
			{"nested in a live if", "if ARGV[1] == 'a' then if false then break end end\nx = ARGV[1]\nbreak", false},
			{"in a do block", "do if false then break end end\nx = ARGV[1]\nbreak", false},
			{"an elseif false", "if ARGV[1] == 'q' then x = 'q' elseif false then break else x = ARGV[1] end\nbreak", false},
			{"the else of if false, given before it", "if false then break else x = ARGV[1] break end", false},
			// The live branch of such an if still breaks.
			{"the else of if false, before the value", "if false then x = 'a' else break end\nx = ARGV[1]\nbreak", true},
			{"the body of if true, before the value", "if true then break else x = 'a' end\nx = ARGV[1]\nbreak", true},
			{"a live break beside a dead one", "if false then x = 'a' break end\nif ARGV[1] == 'a' then break end\nx = ARGV[1]\nbreak", true},
		} {
			t.Run(loop.open+", "+tc.name, func(t *testing.T) {
				src := head + "local x\n" + loop.open + "\n" + tc.body + "\n" + loop.close + "\n" + use
				want, server := "", ""
				if tc.faulty {
					want, server = warn(src), refused
				}
				checkAndRun(t, rc, src, want, server, []string{"{t}k"}, "a")
			})
		}
	}
	for _, tc := range []struct{ name, body string }{
		// Nor is the missing else of if true, or the body of if false, a
		// path past the if.
		{"if true without an else", "local x\nif true then x = ARGV[1] end\n" + use},
		{"the else of if false", "local x\nif false then else x = ARGV[1] end\n" + use},
		// A numeric for that runs its body, with no break, gives x the
		// value it gives on every path of it.
		{"a numeric for", "local x\nfor i = 1, 2 do\n  if false then break end\n  x = ARGV[1]\nend\n" + use},
		// repeat ... until true runs its body once, with no break.
		{"repeat until true", "local x\nrepeat\n  if false then break end\n  x = ARGV[1]\nuntil true\n" + use},
		// while not x, with no break, is left where x holds a value.
		{"while not x", "local x\nwhile not x do\n  if false then break end\n  x = ARGV[1]\nend\n" + use},
		// A reply replaced at each break that runs is no longer the reply.
		{"a reply replaced", "local x = redis.call('GET', KEYS[1])\nwhile true do\n  if false then break end\n  x = ARGV[1]\n  break\nend\nredis.call('SET', KEYS[1], x .. 'z')\n"},
		// A function ending in a loop no live break leaves never reaches
		// its end, where it would return nothing.
		{"a function ending in the loop", "local function f()\n  while true do\n    if false then break end\n    if ARGV[1] == 'a' then return 'a' end\n  end\nend\nredis.call('SET', KEYS[1], f())\n"},
		{"a function ending in repeat until nil", "local function f()\n  repeat\n    if false then break end\n    if ARGV[1] == 'a' then return 'a' end\n  until nil\nend\nredis.call('SET', KEYS[1], f())\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAndRun(t, rc, head+tc.body, "", "", []string{"{t}missing"}, "a")
		})
	}
}
