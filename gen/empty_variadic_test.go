package gen

import (
	"strings"
	"testing"
)

// A variadic key or argument list is refused empty by the generated callers
// only where a command gets it alone and then takes too few arguments.
func TestEmptyVariadicRefusedWhereNeeded(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		refused   bool
	}{
		{"DEL of the keys alone", "-- @key k...\n-- @return int64\nreturn redis.call('DEL', unpack(KEYS))\n", true},
		{"DEL of the keys after the first", "-- @key log\n-- @key k...\n-- @return int64\nredis.call('INCR', KEYS[1])\nreturn redis.call('DEL', unpack(KEYS, 2))\n", true},
		{"SADD of the members alone", "-- @key s\n-- @arg m... string\n-- @return int64\nreturn redis.call('SADD', KEYS[1], unpack(ARGV))\n", true},
		{"DEL with a fixed key beside", "-- @key log\n-- @key k...\n-- @return int64\nreturn redis.call('DEL', KEYS[1], unpack(KEYS, 2))\n", false},
		{"DEL of every key", "-- @key log\n-- @key k...\n-- @return int64\nreturn redis.call('DEL', unpack(KEYS))\n", false},
		{"a loop over the keys", "-- @key k...\n-- @return int64\nfor i = 1, #KEYS do redis.call('DEL', KEYS[i]) end\nreturn 0\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte("-- X does it.\n" + tc.src)}})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(out["x.lua.go"]), "&EmptyError{"); got != tc.refused {
				t.Errorf("the caller refuses an empty list: %v, want %v", got, tc.refused)
			}
		})
	}
}
