package gen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A value that is not a key, reached through a table local whose
// constructor lists several (local t = {'a', 'b'}), is named by what the
// script writes (t[1], unpack(t)) in the message that refuses it: the
// message said "holds the literal :", naming nothing.
func TestKeyThroughTableNamed(t *testing.T) {
	const head = "-- @key k\n-- @return none\n"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "index of literals",
			src:  head + "local t = {'a', 'b'}\nredis.call('DEL', t[1])\nredis.call('DEL', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:19: key position of DEL holds the literal t[1]" + keysOrUnsafe},
		},
		{
			name: "field of literals",
			src:  head + "local t = {lock = 'a', 'b'}\nredis.call('DEL', t.lock)\nredis.call('DEL', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:19: key position of DEL holds the literal t.lock" + keysOrUnsafe},
		},
		{
			name: "literal beside a key",
			src:  head + "local t = {KEYS[1], 'b', 'c'}\nredis.call('DEL', t[2])\n",
			want: []string{"scripts/x.lua:4:19: key position of DEL holds the literal t[2]" + keysOrUnsafe},
		},
		{
			name: "unpack of literals",
			src:  head + "local t = {'a', 'b'}\nredis.call('DEL', unpack(t))\nredis.call('DEL', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:19: key position of DEL holds the literal unpack(t)" + keysOrUnsafe},
		},
		{
			name: "unpack of a constructor",
			src:  head + "redis.call('DEL', unpack({'a', 'b'}))\nredis.call('DEL', KEYS[1])\n",
			// Each value it lists, as if written in place.
			want: []string{"scripts/x.lua:3:19: key position of DEL holds the literal \"a\"" + keysOrUnsafe, "scripts/x.lua:3:19: key position of DEL holds the literal \"b\"" + keysOrUnsafe},
		},
		{
			// (MSET k v k v: its third word is a key.)
			name: "an argument listed at a key position",
			src:  head + "redis.call('MSET', KEYS[1], unpack({'v', ARGV[1], 'w'}))\n",
			want: []string{"scripts/x.lua:3:29: key position of MSET holds ARGV[1], an argument" + keysOrUnsafe, "scripts/x.lua:3:42: ARGV[1] is used but no args are declared"},
		},
		{
			name: "index of arguments",
			src:  "-- @key k\n-- @arg a string\n-- @arg b string\n-- @return none\nlocal t = {ARGV[1], ARGV[2]}\nredis.call('DEL', t[1])\nredis.call('DEL', KEYS[1])\n",
			want: []string{"scripts/x.lua:6:19: key position of DEL holds t[1], an argument" + keysOrUnsafe},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker (-want +got):\n%s", diff)
			}
		})
	}
}
