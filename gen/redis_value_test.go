package gen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRedisCallAsValue: redis.call reached other than by a direct call
// escapes the command, key and @readonly checks; a @readonly script's
// container command needs a literal subcommand to be checked.
func TestRedisCallAsValue(t *testing.T) {
	const hint = "the checker cannot see what it runs (command, keys, writes); call it directly: redis.call('CMD', ...), or redis.pcall('CMD', ...) for a protected call"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "pcall(redis.call, ...) in a readonly script",
			src:  "-- @readonly\n-- @key k\n-- @return none\npcall(redis.call, 'DEL', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:7: redis.call is used as a value, not called: " + hint},
		},
		{
			name: "redis.call in a local",
			src:  "-- @return none\nlocal call = redis.call\ncall('SET', 'not_a_key', 'x')\n",
			want: []string{"scripts/x.lua:2:14: redis.call is used as a value, not called: " + hint},
		},
		{
			name: "redis.pcall passed on",
			src:  "-- @key k\n-- @return none\nlocal function f(g) return g('DEL', KEYS[1]) end\nf(redis.pcall)\n",
			want: []string{"scripts/x.lua:4:3: redis.pcall is used as a value, not called: " + hint},
		},
		{
			name: "redis in a local",
			src:  "-- @return none\nlocal r = redis\nr.call('SET', 'x', 'y')\n",
			want: []string{"scripts/x.lua:2:11: redis is used as a value, not called: " + hint},
		},
		{
			name: "computed function name",
			src:  "-- @key k\n-- @arg f string\n-- @return none\nredis[ARGV[1]]('DEL', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:1: redis[...] is used as a value, not called: " + hint},
		},
		{
			name: "redis.call through _G",
			src:  "-- @readonly\n-- @return none\n_G.redis.call('DEL', 'x')\n",
			want: []string{"scripts/x.lua:3:1: _G reaches redis.call, or runs code, out of the checker's sight (its command, keys and writes go unchecked): call redis.call('CMD', ...) directly"},
		},
		{
			name: "redis.call through getfenv",
			src:  "-- @return none\nlocal r = getfenv(1).redis\nr.call('DEL', 'x')\n",
			want: []string{"scripts/x.lua:2:11: getfenv reaches redis.call, or runs code, out of the checker's sight (its command, keys and writes go unchecked): call redis.call('CMD', ...) directly"},
		},
		{
			name: "code compiled at run time",
			src:  "-- @return none\nloadstring(\"redis.call('DEL', 'x')\")()\n",
			want: []string{"scripts/x.lua:2:1: loadstring reaches redis.call, or runs code, out of the checker's sight (its command, keys and writes go unchecked): call redis.call('CMD', ...) directly"},
		},
		{
			name: "readonly container with a computed subcommand",
			src:  "-- @readonly\n-- @key k\n-- @arg sub string\n-- @return none\nredis.call('XGROUP', ARGV[1], KEYS[1], 'g', '$')\n",
			want: []string{"scripts/x.lua:5:22: @readonly script calls XGROUP with the subcommand ARGV[1], not a literal: the checker cannot tell whether it writes; write the subcommand as a string literal (or remove @readonly)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
	for _, src := range []string{
		"-- @key k\n-- @return none\nlocal ok = pcall(function() return redis.call('GET', KEYS[1]) end)\nredis.log(redis.LOG_WARNING, 'x')\n",
		"-- @readonly\n-- @key k\n-- @return none\nreturn redis.call('XINFO', 'STREAM', KEYS[1])\n",
	} {
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); got != nil {
			t.Errorf("rejected %q:\n%v", src, got)
		}
	}
}
