package gen

import (
	"strings"
	"testing"
)

// TestArgsBufParamRenamed: a caller with a variadic @arg declares a local
// argsBuf beside its parameters; a key or argument named args_buf (Go
// parameter argsBuf) was accepted and the generated package did not compile
// ("argsBuf redeclared in this block"). The parameter is renamed argsBuf_,
// as the other reserved names are.
func TestArgsBufParamRenamed(t *testing.T) {
	for _, decl := range []string{"-- @key args_buf\n-- @arg pad string", "-- @key k\n-- @arg args_buf string"} {
		src := "-- Echo returns its first key and arguments.\n" + decl + "\n-- @arg rest... string\n-- @return []string\n" +
			"local out = {KEYS[1]}\nfor i = 1, #ARGV do out[#out + 1] = ARGV[i] end\nreturn out\n"
		out, err := Generate("generated", []File{{Path: "scripts/echo.lua", Source: []byte(src)}})
		if err != nil {
			t.Fatal(err)
		}
		code := string(out["echo.lua.go"])
		if !strings.Contains(code, "argsBuf_ string") || strings.Contains(code, "argsBuf string") {
			t.Errorf("%s: the parameter is not renamed beside the local argsBuf:\n%s", decl, code)
		}
	}
}
