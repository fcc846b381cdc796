package core

import "testing"

func TestFieldsPartDistinct(t *testing.T) {
	t.Parallel()
	enc := func(m map[string][]string, names ...string) string {
		return string(FieldsPart("h", names, func(n string) []string { return m[n] }))
	}
	seen := map[string]string{}
	for name, s := range map[string]string{
		"absent":     enc(nil, "a"),
		"empty":      enc(map[string][]string{"a": {""}}, "a"),
		"one":        enc(map[string][]string{"a": {"xy"}}, "a"),
		"split":      enc(map[string][]string{"a": {"x", "y"}}, "a"),
		"other name": enc(map[string][]string{"b": {"xy"}}, "b"),
		"two names":  enc(map[string][]string{"a": {"x"}, "b": {"y"}}, "a", "b"),
		"moved":      enc(map[string][]string{"a": {"x", "y"}}, "a", "b"),
	} {
		if other, ok := seen[s]; ok {
			t.Errorf("%s encodes as %s", name, other)
		}
		seen[s] = name
	}
}
