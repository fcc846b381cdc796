package gen

import (
	"slices"
	"testing"
)

// A key the script extends under a dynamic index (ipairs(KEYS), KEYS[i])
// may be any key, fixed ones too: every key is marked Tagged, so the
// callers refuse one without a hash tag on a Cluster.
func TestTaggedDynamicKeys(t *testing.T) {
	for _, tc := range []struct {
		head, body string
		want       []string
	}{
		{"-- @key a\n-- @key b\n", "for _, k in ipairs(KEYS) do redis.call('DEL', k .. ':x') end", []string{"a", "b"}},
		{"-- @key a\n-- @key rest...\n", "for i = 1, #KEYS do redis.call('DEL', KEYS[i] .. ':x') end", []string{"a", "rest"}},
		{"-- @key a\n-- @key rest...\n", "for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end", nil},
	} {
		src := tc.head + "-- @return none\n" + tc.body + "\nreturn redis.status_reply('OK')\n"
		info, errs := buildScript(File{Path: "scripts/x.lua", Source: []byte(src)})
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
