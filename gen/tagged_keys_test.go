package gen

import (
	"slices"
	"testing"
)

// The keys a script extends on the right are marked Tagged (their callers
// refuse one without a hash tag on a Cluster), through locals, tables and
// local functions; keys used as they are, or only on a single call, are not.
func TestTaggedKeys(t *testing.T) {
	const head = "-- @key a\n-- @key b\n-- @return none\n"
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"redis.call('SET', KEYS[1], 'x') redis.call('SET', KEYS[2], 'x')", nil},
		{"redis.call('SET', KEYS[1] .. ':x', 'x') redis.call('SET', KEYS[2], 'x')", []string{"a"}},
		{"local k = KEYS[2] .. ':x' redis.call('DEL', KEYS[1], k)", []string{"b"}},
		{"local keys = {KEYS[1], KEYS[2]} redis.call('DEL', keys[1], keys[2] .. ':x')", []string{"b"}},
		{"local function key(s) return KEYS[2] .. s end redis.call('DEL', KEYS[1], key(':x'))", []string{"b"}},
		{"local function del(k) redis.call('DEL', k .. ':x') end del(KEYS[1]) redis.call('DEL', KEYS[2])", []string{"a"}},
	} {
		info, errs := buildScript(File{Path: "scripts/x.lua", Source: []byte(head + tc.body + "\nreturn redis.status_reply('OK')\n")})
		for _, e := range errs {
			if !e.Warning {
				t.Fatalf("%s: %v", tc.body, e)
			}
		}
		var got []string
		for _, k := range info.s.Keys {
			if k.Tagged {
				got = append(got, k.Name)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Tagged %v, want %v", tc.body, got, tc.want)
		}
	}
}
