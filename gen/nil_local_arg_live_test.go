package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilLocalArgAgreesWithServer: a local that holds nil or false (local
// v, local v = nil, local v = false), passed to redis.call, is refused by
// Redis ("Lua redis lib command arguments must be strings or integers"), as
// nil written in place is: the checker must refuse it, and warn of one
// given a value on some paths only, not of one tested (if v then, while v
// and ... do) or given one on every path.
func TestNilLocalArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		c       = "redis.call('EXISTS', KEYS[1]) == 1"
		refused = "Lua redis lib command arguments must be strings or integers"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"declared without a value", "local v\nredis.call('SET', KEYS[1], v)",
			"scripts/x.lua:4:28: argument 2 of redis.call is v, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"declared past the values given", "local u, v = 'x'\nredis.call('SET', KEYS[1], v)",
			"scripts/x.lua:4:28: argument 2 of redis.call is v, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"false", "local v = false\nredis.call('SET', KEYS[1], v)",
			"scripts/x.lua:4:28: argument 2 of redis.call is v, which holds false there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"given a value on one path", "local v\nif " + c + " then v = 'x' end\nredis.call('SET', KEYS[1], v)",
			`scripts/x.lua:5:28: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`, refused},
		{"given a value the checker does not follow on one path", "local v\nif " + c + " then v = cjson.decode('{\"a\":\"x\"}').a end\nredis.call('SET', KEYS[1], v)",
			`scripts/x.lua:5:28: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`, refused},
		{"given one of many values on some paths", "local v\n" + func() string {
			var b strings.Builder
			for i := range 17 {
				fmt.Fprintf(&b, "if redis.call('EXISTS', KEYS[1]) == %d then v = '%d' end\n", i+1, i)
			}
			return b.String()
		}() + "redis.call('SET', KEYS[1], v)",
			`scripts/x.lua:21:28: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`, refused},
		{"tested", "local v\nif " + c + " then v = 'x' end\nif v then redis.call('SET', KEYS[1], v) end", "", ""},
		{"tested by a while", "local v = false\nif redis.call('EXISTS', KEYS[1]) == 0 then v = 'x' end\nwhile v do\n  redis.call('SET', KEYS[1], v)\n  v = false\nend", "", ""},
		{"tested by assert", "local v\nif redis.call('EXISTS', KEYS[1]) == 2 then v = 'x' end\nassert(v, 'no value')\nredis.call('SET', KEYS[1], v)", "", "no value"},
		{"tested by assert with and", "local v = false\nif redis.call('EXISTS', KEYS[1]) == 2 then v = 'x' end\nassert(v and #v > 0, 'no value')\nredis.call('SET', KEYS[1], v)", "", "no value"},
		{"given a value until a while ends", "local v = false\nlocal i = 0\nwhile not v do\n  i = i + 1\n  if i == 2 then v = 'x' end\nend\nredis.call('SET', KEYS[1], v)", "", ""},
		{"given a value until a repeat ends", "local v\nlocal i = 0\nrepeat\n  i = i + 1\n  if i == 2 then v = 'x' end\nuntil v\nredis.call('SET', KEYS[1], v)", "", ""},
		{"given a value not followed until a while ends", "local v = false\nwhile not v do v = cjson.decode('{\"a\":\"x\"}').a end\nredis.call('SET', KEYS[1], v)", "", ""},
		{"given a value not followed until a repeat ends", "local v\nrepeat v = cjson.decode('{\"a\":\"x\"}').a until v\nredis.call('SET', KEYS[1], v)", "", ""},
		{"a while left by break", "local v = false\nwhile not v do\n  if redis.call('EXISTS', KEYS[1]) == 2 then v = 'x' end\n  break\nend\nredis.call('SET', KEYS[1], v)",
			`scripts/x.lua:8:28: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`, refused},
		{"given a value by a function called first", "local v\nlocal function give() v = 'x' end\ngive()\nredis.call('SET', KEYS[1], v)", "", ""},
		{"given a value on every path", "local v\nif " + c + " then v = 'x' else v = 'y' end\nredis.call('SET', KEYS[1], v)", "", ""},
		{"given a value on every path, one with a default", "local v\nif " + c + " then v = 'x' else v = redis.call('GET', KEYS[1]) or 'a' end\nredis.call('SET', KEYS[1], v)\nredis.call('DEL', KEYS[1])", "", ""},
		{"given a value on every path, one negated", "local v\nif " + c + " then v = 'x' else v = -redis.call('EXISTS', KEYS[1]) end\nredis.call('SET', KEYS[1], v)\nredis.call('DEL', KEYS[1])", "", ""},
		{"given a default on some paths only", "local v\nif " + c + " then v = redis.call('GET', KEYS[1]) or 'a' end\nredis.call('SET', KEYS[1], v)",
			`scripts/x.lua:5:28: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`, refused},
		{"given a value before a while true's break", "local v\nwhile true do\n  v = redis.call('GET', KEYS[1]) or 'x'\n  break\nend\nredis.call('SET', KEYS[1], v)\nredis.call('DEL', KEYS[1])", "", ""},
		{"given a value until a while true's break", "local v\nlocal i = 0\nwhile true do\n  i = i + 1\n  if i == 2 then v = cjson.decode('{\"a\":\"x\"}').a end\n  if v then break end\nend\nredis.call('SET', KEYS[1], v)\nredis.call('DEL', KEYS[1])", "", ""},
		{"a while true left by a break before a value", "local v\nwhile true do\n  if redis.call('EXISTS', KEYS[1]) == 0 then break end\n  v = 'x'\n  break\nend\nredis.call('SET', KEYS[1], v)",
			`scripts/x.lua:9:28: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`, refused},
		{"tested, then copied", "local v\nif " + c + " then v = 'x' end\nif not v then return nil end\nlocal w = v\nredis.call('SET', KEYS[1], w)", "", ""},
		{"tested, then copied, a value not followed", "local v\nif " + c + " then v = cjson.decode('{\"a\":\"x\"}').a end\nif not v then return nil end\nlocal w = v\nredis.call('SET', KEYS[1], w)", "", ""},
		{"copied untested", "local v\nif " + c + " then v = cjson.decode('{\"a\":\"x\"}').a end\nlocal w = v\nredis.call('SET', KEYS[1], w)",
			`scripts/x.lua:6:28: warning: argument 2 of redis.call is w, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if w then ... end)`, refused},
		{"declared past the values given, to a call's", "local u, v = string.match('a:b', '(%a):(%a)')\nredis.call('SET', KEYS[1], v)", "", ""},
		{"a call of a local function that returns nil", "local function f() return nil end\nredis.call('SET', KEYS[1], f(), 'EX', 10)",
			"scripts/x.lua:4:28: argument 2 of redis.call is f(), a call of a local function that returns nil or false alone: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"a call of a local function that returns false or nothing", "local function f()\n  if redis.call('EXISTS', KEYS[1]) == 1 then return false end\nend\nredis.call('SET', KEYS[1], (f()))",
			"scripts/x.lua:6:28: argument 2 of redis.call is (f()), a call of a local function that returns nil or false alone: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"a call of a local function that returns nothing, last", "redis.call('DEL', KEYS[1])\nlocal function f() end\nredis.call('SADD', KEYS[1], 'a', f())\nredis.call('DEL', KEYS[1])", "", ""},
		{"a call of a local function that returns nothing, last in a key position", "local function f() end\nredis.call('DEL', KEYS[1], f())", "", ""},
		{"a call of a local function that returns nothing, last in key positions", "local function f()\n  redis.call('DEL', KEYS[1])\nend\nredis.call('MGET', KEYS[1], f())\nredis.call('EXISTS', KEYS[1], f())", "", ""},
		{"a call of a local function that returns nothing, alone", "local function f() end\nredis.call('SET', KEYS[1], 'x')\nredis.call('DEL', f())",
			"scripts/x.lua:5:12: wrong number of arguments for DEL: it takes at least 1 argument, the call passes 0", "Wrong number of args"},
		{"a call of a local function that returns nil, last", "redis.call('DEL', KEYS[1])\nlocal function f() return nil end\nredis.call('SADD', KEYS[1], 'a', f())",
			"scripts/x.lua:5:34: argument 3 of redis.call is f(), a call of a local function that returns nil or false alone: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"a local given a call of a local function that returns nil", "local function f(k)\n  if redis.call('EXISTS', k) == 1 then return nil end\nend\nlocal v = f(KEYS[1])\nredis.call('SET', KEYS[1], v)",
			"scripts/x.lua:7:28: argument 2 of redis.call is v, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"a local given a call of a local function that returns false", "local function f() return false end\nlocal v = f()\nredis.call('SET', KEYS[1], v)",
			"scripts/x.lua:5:28: argument 2 of redis.call is v, which holds false there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"a local given a call of a local function that returns nil or a value", "redis.call('DEL', KEYS[1])\nlocal function f()\n  if redis.call('EXISTS', KEYS[1]) == 1 then return nil end\n  return 'x'\nend\nlocal v = f()\nredis.call('SET', KEYS[1], v)\nredis.call('DEL', KEYS[1])", "", ""},
		{"a call of a local function that returns a value on some paths", "redis.call('DEL', KEYS[1])\nlocal function f()\n  if redis.call('EXISTS', KEYS[1]) == 0 then return 'x' end\n  return nil\nend\nredis.call('SET', KEYS[1], f())\nredis.call('DEL', KEYS[1])", "", ""},
		{"a call of a local function assigned another", "local function f() return nil end\nf = function() return 'x' end\nredis.call('SET', KEYS[1], f())\nredis.call('DEL', KEYS[1])", "", ""},
		{"declared past the value of a call in parentheses", "local u, v = (string.match('a:b', '(%a):(%a)'))\nredis.call('SET', KEYS[1], v)",
			"scripts/x.lua:4:28: argument 2 of redis.call is v, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"declared past the values of ... in parentheses", "local function f(...)\n  local u, v = (...)\n  redis.call('SET', KEYS[1], v)\nend\nf('a', 'b')",
			"scripts/x.lua:5:30: argument 2 of redis.call is v, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing"})
		})
	}
}
