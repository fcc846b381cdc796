package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const v4src = `package echolock

// A comment naming echo.Context stays as it is.

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

func h(c echo.Context, f func(echo.Context) error) echo.HandlerFunc {
	_ = middleware.Gzip
	_ = echolock.Lock
	return nil
}
`

func TestRewrite(t *testing.T) {
	got, err := rewrite("x.go", []byte(v4src))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"// A comment naming echo.Context stays as it is.",
		`"github.com/labstack/echo/v5"` + "\n",
		`"github.com/labstack/echo/v5/middleware"`,
		`"github.com/scriptlock/scriptlock/middleware/echolock/v5"`,
		"func h(c *echo.Context, f func(*echo.Context) error) echo.HandlerFunc {",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "echo/v4") {
		t.Errorf("an import left as v4:\n%s", got)
	}
}

// TestCheck: -check finds a changed, a missing and an orphaned generated
// file, and writing leaves nothing for it to find; compat files and files
// marked v4-only are not copied, and a hand-written file is never overwritten.
func TestCheck(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	write := func(dir, name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(in, "a.go", v4src)
	write(in, "compat.go", "package echolock\n")
	write(in, "host_test.go", "package echolock\n\n"+v4OnlyMarker+"\n")
	if err := run(in, out, true); err == nil {
		t.Fatal("check passed with nothing generated")
	}
	if err := run(in, out, false); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, true); err != nil {
		t.Fatalf("check after generating: %v", err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != "a.go" {
		t.Fatalf("generated %v, want a.go alone", entries)
	}
	write(out, "orphan.go", headerPrefix+"../orphan.go. DO NOT EDIT.\n\npackage echolock\n")
	if err := run(in, out, true); err == nil || !strings.Contains(err.Error(), "orphan.go") {
		t.Errorf("check with an orphaned file: %v", err)
	}
	write(out, "a.go", "package echolock\n")
	if err := run(in, out, false); err == nil {
		t.Error("a hand-written file of a source's name was overwritten")
	}
}
