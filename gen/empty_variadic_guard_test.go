package gen

import (
	"strings"
	"testing"
)

// A script that measures a variadic list before a command gets it alone
// (if #KEYS == 0 then return 0 end) takes an empty one, and so does one
// that calls the command with redis.pcall, which hands the script Redis's
// error as a value: the generated callers send it.
func TestEmptyVariadicGuardedSent(t *testing.T) {
	for _, tc := range []struct {
		name, src string
	}{
		{"an early return on #KEYS", "-- @key k...\n-- @return int64\nif #KEYS == 0 then return 0 end\nreturn redis.call('DEL', unpack(KEYS))\n"},
		{"an if on #KEYS", "-- @key k...\n-- @return int64\nif #KEYS > 0 then\n  return redis.call('DEL', unpack(KEYS))\nend\nreturn 0\n"},
		{"an if on #ARGV", "-- @key s\n-- @arg m... string\n-- @return int64\nif #ARGV == 0 then return 0 end\nreturn redis.call('SADD', KEYS[1], unpack(ARGV))\n"},
		{"an early return on not KEYS[1]", "-- @key k...\n-- @return int64\nif not KEYS[1] then return 0 end\nreturn redis.call('DEL', unpack(KEYS))\n"},
		{"an if on ARGV[1] ~= nil", "-- @key s\n-- @arg m... string\n-- @return int64\nif ARGV[1] ~= nil then\n  return redis.call('SADD', KEYS[1], unpack(ARGV))\nend\nreturn 0\n"},
		{"an if on next", "-- @key k...\n-- @return int64\nif next(KEYS) == nil then return 0 end\nreturn redis.call('DEL', unpack(KEYS))\n"},
		{"redis.pcall", "-- @key k...\n-- @return int64\nlocal n = redis.pcall('DEL', unpack(KEYS))\nif type(n) == 'table' then return 0 end\nreturn n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte("-- X does it.\n" + tc.src)}})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out["x.lua.go"]), "&EmptyError{") {
				t.Errorf("the caller refuses an empty list, which the script takes")
			}
		})
	}
}
