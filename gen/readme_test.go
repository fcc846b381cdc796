package gen

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestReadmeScripts generates every annotated Lua example of the README:
// the documentation must not show a script the checker refuses or warns
// about.
func TestReadmeScripts(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var files []File
	for i, block := range strings.Split(string(b), "```lua\n")[1:] {
		src, _, ok := strings.Cut(block, "```")
		if !ok {
			t.Fatalf("lua block %d is not closed", i+1)
		}
		if !strings.Contains(src, "-- @return") {
			continue
		}
		files = append(files, File{Path: fmt.Sprintf("README.md/example%d.lua", i+1), Source: []byte(src)})
	}
	if len(files) == 0 {
		t.Fatal("no annotated Lua example in README.md")
	}
	_, warnings, err := GenerateWarnings("examples", files, true)
	if err != nil {
		t.Fatalf("README example refused:\n%v", err)
	}
	if len(warnings) > 0 {
		t.Fatalf("README example warns:\n%v", warnings)
	}
}
