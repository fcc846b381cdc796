package gen

import (
	"fmt"
	"strings"
	"testing"
)

// TestKeywordArgRefused: a string @arg where a command looks for the keyword
// after which it reads keys may be that keyword: SORT k ARGV[1] ARGV[2],
// called with STORE and a name, wrote a key nobody declared, and the key
// checks, which could not read the word, let it through. A word the search
// skips (BY's pattern), a command without such a keyword (SORT_RO), a
// number @arg and an @cluster-unsafe script are fine.
func TestKeywordArgRefused(t *testing.T) {
	const head = "-- X reads.\n-- @key k\n-- @key s\n-- @arg opt string\n-- @arg dst string\n-- @arg n int64\n-- @return none\n"
	const tail = "redis.call('SET', KEYS[2], ARGV[1] .. ARGV[2] .. ARGV[3])\nreturn nil\n"
	const why = "stands where %s looks for %s, after which it reads a key: the callers may pass that keyword, and then a key they did not declare, which the key checks cannot see and Redis Cluster cannot route; write the options as literals (if ARGV[1] == 'DESC' then ... else ... end), declare a count or other number int64, which is no keyword, or mark the script @cluster-unsafe"
	for _, c := range []struct{ call, at, cmd, kw string }{
		{"redis.call('SORT', KEYS[1], ARGV[1], ARGV[2])", "8:29", "SORT", "STORE"},
		{"redis.call('SORT', KEYS[1], 'LIMIT', 0, 1, ARGV[1])", "8:44", "SORT", "STORE"},
		{"redis.call('GEORADIUS', KEYS[1], 0, 0, 10, 'km', ARGV[1], ARGV[2])", "8:50", "GEORADIUS", "STORE or STOREDIST"},
		{"redis.call('XREAD', ARGV[1], ARGV[3], 'STREAMS', KEYS[1], '0')", "8:21", "XREAD", "STREAMS"},
	} {
		got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(head + c.call + "\n" + tail)})
		want := "scripts/x.lua:" + c.at + ": ARGV[1] (@arg opt string) " + fmt.Sprintf(why, c.cmd, c.kw)
		if strings.Join(got, "\n") != want {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", c.call, strings.Join(got, "\n"), want)
		}
		unsafe := strings.Replace(head, "-- @return none\n", "-- @cluster-unsafe\n-- @return none\n", 1)
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(unsafe + c.call + "\n" + tail)}); len(got) != 0 {
			t.Errorf("%s, @cluster-unsafe: checker refused: %v", c.call, got)
		}
	}
	for _, call := range []string{
		"redis.call('SORT', KEYS[1], 'BY', ARGV[1] .. '_*', 'STORE', KEYS[2])",
		"redis.call('SORT_RO', KEYS[1], ARGV[1])",
		"redis.call('SORT', KEYS[1], 'LIMIT', ARGV[3], 10)",
		"redis.call('XREAD', 'COUNT', ARGV[3], 'STREAMS', KEYS[1], '0')",
	} {
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(head + call + "\n" + tail)}); len(got) != 0 {
			t.Errorf("%s: checker refused: %v", call, got)
		}
	}
}
