package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// docFiles returns README.md and docs/*.md, relative to root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	return files
}

// TestGoToolsInstalled: a page that runs `go tool NAME` (a //go:generate
// line) also shows the `go get -tool .../NAME` that records the tool in
// go.mod; without it `go generate` fails with `no such tool "NAME"`.
func TestGoToolsInstalled(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	run := regexp.MustCompile(`\bgo tool ([a-z][a-z0-9_-]*)`)
	for _, f := range docFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, m := range run.FindAllSubmatch(text, -1) {
			name := string(m[1])
			if seen[name] {
				continue
			}
			seen[name] = true
			get := regexp.MustCompile(`go get -tool \S+/` + regexp.QuoteMeta(name) + `\b`)
			if !get.Match(text) {
				t.Errorf("%s: runs `go tool %s` but never shows `go get -tool .../%s`", f, name, name)
			}
		}
	}
}

// TestCLICommandsInREADME: the README's "Command line" section shows every
// command the scriptlock command lists in its usage.
func TestCLICommandsInREADME(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "cmd", "scriptlock", "run.go"))
	if err != nil {
		t.Fatal(err)
	}
	usage := regexp.MustCompile(`(?s)\nCommands:\n(.*?)\n\n`).FindSubmatch(src)
	if usage == nil {
		t.Fatal("cmd/scriptlock/run.go: no Commands: list in the usage text")
	}
	cmds := regexp.MustCompile(`(?m)^  ([a-z][a-z-]*) `).FindAllSubmatch(usage[1], -1)
	if len(cmds) < 4 {
		t.Fatalf("found %d commands in the usage text; expected at least 4", len(cmds))
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile(`(?s)\n### Command line\n(.*?)\n### `).FindSubmatch(readme)
	if section == nil {
		t.Fatal("README.md: no Command line section")
	}
	for _, c := range cmds {
		if !regexp.MustCompile(`(?m)^scriptlock (--?\S+ \S+ )*` + regexp.QuoteMeta(string(c[1])) + `\b`).Match(section[1]) {
			t.Errorf("README.md, Command line: no example of `scriptlock %s`", c[1])
		}
	}
}
