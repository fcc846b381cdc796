package gen

import (
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScriptFileNames: a script whose generated file Go would skip, or build
// on one platform only, is refused; the shared file would otherwise refer to
// constants that do not exist.
func TestScriptFileNames(t *testing.T) {
	const src = "-- @name RateLimit\n-- @return none\nreturn 'OK'\n"
	for _, tc := range []struct{ file, want string }{
		{"scripts/rate_limit_windows.lua", `scripts/rate_limit_windows.lua:1:1: script file name "rate_limit_windows.lua" ends in _windows: Go would build the generated file rate_limit_windows.lua.go only for GOOS=windows; rename the script (@name sets the Go name apart from the file name)`},
		{"scripts/rate_limit_arm64.lua", `scripts/rate_limit_arm64.lua:1:1: script file name "rate_limit_arm64.lua" ends in _arm64: Go would build the generated file rate_limit_arm64.lua.go only for GOARCH=arm64; rename the script (@name sets the Go name apart from the file name)`},
		{"scripts/rate_linux_amd64.lua", `scripts/rate_linux_amd64.lua:1:1: script file name "rate_linux_amd64.lua" ends in _linux_amd64: Go would build the generated file rate_linux_amd64.lua.go only for GOOS=linux GOARCH=amd64; rename the script (@name sets the Go name apart from the file name)`},
		{"scripts/rate_js_test.lua", `scripts/rate_js_test.lua:1:1: script file name "rate_js_test.lua" ends in _js_test: Go would build the generated file rate_js_test.lua.go only for GOOS=js (a final _test does not hide the platform); rename the script (@name sets the Go name apart from the file name)`},
		{"scripts/rate_linux_amd64_test.lua", `scripts/rate_linux_amd64_test.lua:1:1: script file name "rate_linux_amd64_test.lua" ends in _linux_amd64_test: Go would build the generated file rate_linux_amd64_test.lua.go only for GOOS=linux GOARCH=amd64 (a final _test does not hide the platform); rename the script (@name sets the Go name apart from the file name)`},
		{"scripts/_helper.lua", `scripts/_helper.lua:1:1: script file name "_helper.lua" starts with "_": Go ignores the generated file _helper.lua.go; rename the script`},
		{"scripts/.x.lua", `scripts/.x.lua:1:1: script file name ".x.lua" starts with ".": Go ignores the generated file .x.lua.go; rename the script`},
		{"scripts/a b.lua", `scripts/a b.lua:1:1: script file name "a b.lua" has the character ' ': use only letters, digits, _, - and . in script file names`},
		// accepted: no underscore before the suffix, or the suffix is not last
		{"scripts/windows.lua", ""},
		{"scripts/windows_lock.lua", ""},
		{"scripts/rate-limit.lua", ""},
		{"scripts/x.windows.lua", ""},
		// rate_test.lua.go is no test file: Go's test files end in _test.go
		{"scripts/rate_test.lua", ""},
	} {
		got := checkFiles(t, File{Path: tc.file, Source: []byte(src)})
		var want []string
		if tc.want != "" {
			want = []string{tc.want}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.file, diff)
		}
	}
}

// TestKnownPlatforms keeps knownOS and knownArch in step with the toolchain:
// every platform of `go tool dist list` is known, and go/build skips a file
// with each known suffix on another platform.
func TestKnownPlatforms(t *testing.T) {
	if out, err := exec.Command("go", "tool", "dist", "list").Output(); err != nil {
		t.Logf("go tool dist list: %v (not compared)", err)
	} else {
		for _, l := range strings.Fields(string(out)) {
			goos, goarch, _ := strings.Cut(l, "/")
			if !knownOS[goos] || !knownArch[goarch] {
				t.Errorf("go tool dist list has %s, missing from knownOS/knownArch", l)
			}
		}
	}
	dir := t.TempDir()
	ctxt := build.Default
	ctxt.GOOS, ctxt.GOARCH = "plan9", "386"
	other := build.Default
	other.GOOS, other.GOARCH = "linux", "amd64"
	for _, suffixes := range []map[string]bool{knownOS, knownArch} {
		for s := range suffixes {
			for _, name := range []string{"x_" + s + ".lua", "x_" + s + "_test.lua"} {
				if checkFileName(name) == "" {
					t.Errorf("%s accepted", name)
				}
				p := filepath.Join(dir, outputName(name))
				if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				c := ctxt
				if s == "plan9" || s == "386" {
					c = other
				}
				if ok, err := c.MatchFile(dir, filepath.Base(p)); err != nil || ok {
					t.Errorf("go/build builds %s on %s/%s (err %v): not a platform suffix", filepath.Base(p), c.GOOS, c.GOARCH, err)
				}
			}
		}
	}
	// A script ending in _test is accepted: its generated file is built as
	// any other (go/build's test files end in _test.go).
	name := "rate_test.lua"
	if msg := checkFileName(name); msg != "" {
		t.Errorf("%s refused: %s", name, msg)
	}
	p := filepath.Join(dir, outputName(name))
	if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg, err := ctxt.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("go/build: %v", err)
	}
	found := false
	for _, f := range pkg.GoFiles {
		found = found || f == filepath.Base(p)
	}
	if !found {
		t.Errorf("go/build does not build %s as a package file: GoFiles %v, TestGoFiles %v", filepath.Base(p), pkg.GoFiles, pkg.TestGoFiles)
	}
}
