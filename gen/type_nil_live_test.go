package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTypeNilTestAgreesWithServer: type(v) == 'nil' is a nil test as v ==
// nil is, and type(v) == 'string' shows v holds a string. A local given an
// element past the fixed args, tested so before redis.call gets it, holds
// one there: the generated callers must send a list too short to hold it,
// which the server runs. A reply is never nil (false for a nil reply), so
// type(r) == 'nil' is always false, as r == nil is: refused, and the server
// refuses the redis.call that gets the false it lets through.
func TestTypeNilTestAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg a string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\nlocal v = ARGV[2]\n"
	for _, tc := range []struct{ name, body string }{
		{"an early return on type(v) == 'nil'", "if type(v) == 'nil' then return end\nredis.call('SET', KEYS[1], v)\n"},
		{"type(v) ~= 'nil'", "if type(v) ~= 'nil' then redis.call('SET', KEYS[1], v) end\n"},
		{"'nil' ~= type(v)", "if 'nil' ~= type(v) then redis.call('SET', KEYS[1], v) end\n"},
		{"the else of type(v) == 'nil'", "if type(v) == 'nil' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], v) end\n"},
		{"type(v) == 'string'", "if type(v) == 'string' then redis.call('SET', KEYS[1], v) end\n"},
		{"assert(type(v) ~= 'nil')", "if redis.call('EXISTS', KEYS[1]) == 0 then\n  assert(type(v) ~= 'nil')\n  redis.call('SET', KEYS[1], v)\nend\n"},
		{"while type(v) ~= 'nil'", "while type(v) ~= 'nil' do redis.call('SET', KEYS[1], v); v = nil end\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body
			checkAndRun(t, rc, src, "", "", []string{"{t}k"}, "a")
			checkShortListCaller(t, src, "")
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"a", "b"}, "err"); refused {
				t.Errorf("the server returned %v", err)
			}
		})
	}
	t.Run("a reply", func(t *testing.T) {
		src := "-- @key k\n-- @return none\nlocal r = redis.call('GET', KEYS[1])\nif type(r) == 'nil' then return end\nredis.call('SET', KEYS[1], r)\n"
		const want = "scripts/x.lua:4:12: == compares r (the reply of GET) with nil, but a reply is never nil (Redis turns a nil reply into false): it is always false; test it with not, or compare with false"
		checkAndRun(t, rc, src, want, "Lua redis lib command arguments must be strings or integers", []string{"{t}missing"})
	})
}
