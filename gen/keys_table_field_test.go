package gen

import (
	"strings"
	"testing"
)

// A table local that lists a key beside other values (local t = {KEYS[1],
// 'x'}, {lock = KEYS[1], name = 'x'}) gives the key itself at the index or
// field that holds it: a key position given t[1] or t.lock is taken, and one
// given the other value is still refused, as that value written in place.
func TestKeysTableFieldTraced(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"index", "local t = {KEYS[1], 'x'}\nredis.call('SET', t[1], t[2])\nreturn redis.call('GET', t[1])", ""},
		{"field", "local t = {lock = KEYS[1], name = 'x'}\nredis.call('SET', t.lock, t.name)\nreturn redis.call('GET', t['lock'])", ""},
		{"the other index", "local t = {KEYS[1], 'x'}\nreturn redis.call('GET', t[2])",
			`scripts/x.lua:5:26: key position of GET holds the literal "x": pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		{"an index past the list", "local t = {KEYS[1], 'x'}\nreturn redis.call('GET', t[3])",
			"scripts/x.lua:5:26: argument 1 of redis.call is nil (t[3]: local t lists no such field): Redis refuses it at run time (command arguments must be strings or numbers)\n" +
				`scripts/x.lua:5:26: key position of GET holds nil: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X reads.\n-- @key k\n-- @return string?\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
