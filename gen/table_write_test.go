package gen

import (
	"slices"
	"strings"
	"testing"
)

// TestKeysArgvChangesRefused: a script that changes KEYS or ARGV passed the
// key checks on what it no longer holds: KEYS[1] = ARGV[1] then SET KEYS[1]
// wrote a key nobody declared, and ARGV[1] = 'DEL' ran a write the callers'
// @commands check had let through as GET. Each change is refused where it is
// made; reading them (ipairs, unpack, #, table.concat) is not, nor taking
// the last element off (table.remove(ARGV)).
func TestKeysArgvChangesRefused(t *testing.T) {
	const head = "-- X changes.\n-- @key k\n-- @key j\n-- @arg a string\n-- @arg b string\n-- @return none\n"
	const tail = "redis.call('SET', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[2], ARGV[2])\nreturn nil\n"
	const why = ": the checks of keys, arguments and commands, and Redis Cluster's routing, take %s[n] for what the callers pass, which a script that changed it no longer holds; copy the value to a local and change that"
	for _, c := range []struct{ line, want, table string }{
		{"KEYS[1] = ARGV[1]\n", "scripts/x.lua:7:1: KEYS[...] = changes KEYS", "KEYS"},
		{"ARGV[2] = 'DEL'\n", "scripts/x.lua:7:1: ARGV[...] = changes ARGV", "ARGV"},
		{"table.insert(KEYS, 1, ARGV[1])\n", "scripts/x.lua:7:14: table.insert(KEYS, ...) changes KEYS", "KEYS"},
		{"table.remove(ARGV, 1)\n", "scripts/x.lua:7:14: table.remove(ARGV, ...) changes ARGV", "ARGV"},
		{"table.sort(KEYS)\n", "scripts/x.lua:7:12: table.sort(KEYS, ...) changes KEYS", "KEYS"},
		{"rawset(KEYS, 1, ARGV[1])\n", "scripts/x.lua:7:8: rawset(KEYS, ...) changes KEYS", "KEYS"},
	} {
		got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(head + c.line + tail)})
		want := c.want + strings.ReplaceAll(why, "%s", c.table)
		if !slices.Contains(got, want) {
			t.Errorf("%q: checker:\n%s\nwant among them:\n%s", c.line, strings.Join(got, "\n"), want)
		}
	}
	// Reads leave both as the callers passed them.
	for _, line := range []string{
		"for _, k in ipairs(KEYS) do redis.call('EXISTS', k) end\n",
		"local n = #ARGV\n",
		"redis.call('SET', KEYS[2], table.concat(ARGV, ','))\n",
		"local x, y = unpack(ARGV)\nredis.call('SET', KEYS[2], x .. y)\n",
		"redis.call('SET', KEYS[1], table.concat(KEYS, ','))\n",
		// The last one taken off: the others stay where they were.
		"local last = table.remove(ARGV)\n",
	} {
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(head + line + tail)}); len(got) != 0 {
			t.Errorf("%q: checker refused: %v", line, got)
		}
	}
}
