package gen

import (
	"fmt"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReplyTestScopeAgreesWithServer: a test of a local holding a reply
// that may be nil (if v then, v == false, type(v) == 'string') shows it
// holds a value only where the test holds: past an if that neither leaves
// nor gives it a value where it is false, it is false still when the
// command replied nil, and Lua fails the script on it as an operand. The
// checker must warn of such an operand, and of none where a branch left
// or gave it a value (an early return, a default, an else that returns,
// a nested if whose branches all return), nor of a value made of it there
// (tonumber of it, a call passing it), nor past an if whose condition
// passes it to a function, which may test it (if not ok(v) then return
// end). Each runs on the server with the
// key missing.
func TestReplyTestScopeAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const head = "-- X does it.\n-- @key a\n-- @key b\n-- @arg mode string\n-- @return string\nlocal v = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[2], ARGV[1])\n"
	warn := func(line int) string {
		return fmt.Sprintf("scripts/x.lua:%d:12: warning: concatenation (..) of v (the reply of GET), which is false when GET replies nil: Lua fails the script at run time (\"attempt to concatenate local 'v' (a boolean value)\"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')", line)
	}
	const refused = "attempt to concatenate"
	for _, tc := range []struct {
		name, body, want, server string
	}{
		{"past an if testing its truth", "if v then redis.call('SET', KEYS[2], v) end\nreturn 'p' .. v", warn(9), refused},
		{"past an if comparing it with false", "if v == false then redis.call('SET', KEYS[2], 'none') end\nreturn 'p' .. v", warn(9), refused},
		{"past an if testing its type", "if type(v) == 'string' then redis.call('SET', KEYS[2], v) end\nreturn 'p' .. v", warn(9), refused},
		{"past an if whose nested if leaves", "if ARGV[1] == 'a' then\n  if not v then return '' end\nend\nreturn 'p' .. v", warn(11), refused},
		{"in the else of an if testing its truth", "if v then return 'p' .. v else redis.call('SET', KEYS[2], 'none') end\nreturn 'q' .. v", warn(9), refused},
		{"tonumber of it past an if testing it in an and", "if v and v >= ARGV[1] then return '1' end\nif tonumber(v) > 5 then return '2' end\nreturn '3'",
			`scripts/x.lua:9:16: warning: > compares tonumber(v (the reply of GET)), which is nil when GET replies nil: Lua fails the script at run time on nil ("attempt to compare ..."); hold it in a local and test that first (if not v then ... end), or give a default (tonumber(redis.call(...) or '0'))`,
			"attempt to compare number with nil"},
		// A branch leaves, or gives it a value: none warned of.
		{"after an early return", "if not v then return '' end\nreturn 'p' .. v", "", ""},
		{"after a default given in the if", "if not v then v = 'd' end\nreturn 'p' .. v", "", ""},
		{"after an if whose else returns", "if v then redis.call('SET', KEYS[2], v) else return '' end\nreturn 'p' .. v", "", ""},
		{"after a nested if whose branches all return", "if not v then\n  if ARGV[1] == 'a' then return '' else return 'z' end\nend\nreturn 'p' .. v", "", ""},
		{"tonumber of it after an early return", "if v == false then return '' end\nv = tonumber(v)\nreturn tostring(v + 1)", "", ""},
		{"after a function's test of it that returns", "local function ok(s) return s ~= false end\nif not ok(v) then return '' end\nreturn 'p' .. v", "", ""},
		{"passed to a function after an early return", "local function f(x) return 'p' .. x end\nif not v then return '' end\nreturn f(v)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAndRun(t, rc, head+tc.body+"\n", tc.want, tc.server, []string{"{t}a", "{t}b"}, "b")
		})
	}
}
