package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeScripts generates every annotated Lua example of the README and
// of docs/*.md: the documentation must not show a script the checker refuses
// or warns about.
func TestReadmeScripts(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var files []File
	for _, path := range append([]string{"../README.md"}, docs...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(path, "../")
		for i, block := range strings.Split(string(b), "```lua\n")[1:] {
			src, _, ok := strings.Cut(block, "```")
			if !ok {
				t.Fatalf("%s: lua block %d is not closed", name, i+1)
			}
			if !strings.Contains(src, "-- @return") {
				continue
			}
			files = append(files, File{Path: fmt.Sprintf("%s/example%d.lua", name, i+1), Source: []byte(src)})
		}
	}
	if len(files) == 0 {
		t.Fatal("no annotated Lua example in README.md or docs/*.md")
	}
	_, warnings, err := GenerateWarnings("examples", files, true)
	if err != nil {
		t.Fatalf("documentation example refused:\n%v", err)
	}
	if len(warnings) > 0 {
		t.Fatalf("documentation example warns:\n%v", warnings)
	}
}
