package gen

import (
	"strings"
	"testing"
)

// TestFormattedKeyTagged: string.format('%s:x', KEYS[1]) extends the key on
// the right, as KEYS[1] .. ':x' does, so the callers must refuse a key
// without a hash tag on a cluster client (the extended key hashes to
// another slot); '%s' alone is the key itself.
func TestFormattedKeyTagged(t *testing.T) {
	for _, tc := range []struct {
		name, call string
		tagged     bool
	}{
		{"formatted with a suffix", "string.format('%s:x', KEYS[1])", true},
		{"concatenated", "KEYS[1] .. ':x'", true},
		{"formatted alone", "string.format('%s', KEYS[1])", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- Get reads a value.\n-- @key k\n-- @return string?\nreturn redis.call('GET', " + tc.call + ")\n"
			out, err := Generate("generated", []File{{Path: "scripts/get.lua", Source: []byte(src)}})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(out["get.lua.go"]), `checkHashTags("Get", "k", k)`); got != tc.tagged {
				t.Errorf("Get checks the hash tag of k: %v, want %v", got, tc.tagged)
			}
		})
	}
}
