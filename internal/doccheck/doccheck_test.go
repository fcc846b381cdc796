// Package doccheck compiles every Go code block of README.md and docs/*.md
// against the module's current API, so a signature change that leaves the
// documentation behind fails the tests.
package doccheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// block is one ```go block of a Markdown file.
type block struct {
	file string // relative to the module root
	line int    // of the block's first line of code
	code string
}

var fence = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

func readBlocks(t *testing.T, root string) []block {
	t.Helper()
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	var blocks []block
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllSubmatchIndex(text, -1) {
			blocks = append(blocks, block{
				file: f,
				line: bytes.Count(text[:m[2]], []byte("\n")) + 1,
				code: string(text[m[2]:m[3]]),
			})
		}
	}
	return blocks
}

// imports the fragments may use, by the name they use.
var imports = map[string]string{
	"context":        "context",
	"sql":            "database/sql",
	"errors":         "errors",
	"fmt":            "fmt",
	"log":            "log",
	"time":           "time",
	"echo":           "github.com/labstack/echo/v4",
	"rueidis":        "github.com/redis/rueidis",
	"grpc":           "google.golang.org/grpc",
	"scriptlock":     "github.com/scriptlock/scriptlock",
	"pb":             "github.com/scriptlock/scriptlock/examples/recharge/rechargepb",
	"echolock":       "github.com/scriptlock/scriptlock/middleware/echolock",
	"grpclock":       "github.com/scriptlock/scriptlock/middleware/grpclock",
	"idempotency":    "github.com/scriptlock/scriptlock/middleware/idempotency",
	"scriptlockotel": "github.com/scriptlock/scriptlock/otel",
}

// env declares, at package level, the names the fragments assume exist.
var env = []struct{ name, decl string }{
	{"ctx", "ctx = context.Background()"},
	{"rc", "rc rueidis.Client"},
	{"locks", "locks *scriptlock.Client"},
	{"orders", "orders *scriptlock.Client"},
	{"wallets", "wallets *scriptlock.Client"},
	{"clients", "clients []*scriptlock.Client"},
	{"e", "e = echo.New()"},
	{"db", "db *sql.DB"},
	{"id", "id int64"},
	{"recharge", "recharge echo.HandlerFunc"},
	{"pay", "pay echo.HandlerFunc"},
	{"ordersService", "ordersService pb.OrdersServer"},
	{"store", "store *idempotency.Store"},
	{"lctx", "lctx context.Context"},
	{"err", "err error"},
}

// skipped says why a block cannot be compiled here; every other block is.
func skipped(b block) string {
	switch {
	case strings.Contains(b.code, "redisscripts."):
		return "calls a package the reader generates"
	case !regexp.MustCompile(`(?m)^\s*[^/\s]`).MatchString(b.code):
		return "only comments and directives"
	}
	return ""
}

func uses(code, name string) bool {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(code)
}

// fragmentFile wraps fragments in functions, with //line comments so that
// compiler errors name the Markdown file and line.
func fragmentFile(frags []block) string {
	var body strings.Builder
	for i, b := range frags {
		code := b.code
		line := b.line
		if strings.HasPrefix(code, "import (") { // a fragment may show its imports first
			end := strings.Index(code, ")\n") + 2
			line += strings.Count(code[:end], "\n")
			code = code[end:]
		}
		fmt.Fprintf(&body, "\nfunc fragment%d() error {\n//line %s:%d\n%s\n\treturn nil\n}\n", i, b.file, line, code)
	}
	// What the code uses, comments left out: "// gRPC: grpclock.X" must not
	// import grpclock.
	all := regexp.MustCompile(`(?m)//.*$`).ReplaceAllString(body.String(), "")
	var vars []string
	for _, v := range env {
		if uses(all, v.name) {
			vars = append(vars, v.decl)
			all += v.decl // its type's package is used too
		}
	}
	var imps []string
	for name, path := range imports {
		if strings.Contains(all, name+".") {
			imps = append(imps, fmt.Sprintf("%s %q", name, path))
		}
	}
	sort.Strings(imps)
	var f strings.Builder
	f.WriteString("package doccheck\n\nimport (\n")
	for _, i := range imps {
		f.WriteString("\t" + i + "\n")
	}
	f.WriteString(")\n\nvar (\n")
	for _, v := range vars {
		f.WriteString("\t" + v + "\n")
	}
	f.WriteString(")\n")
	f.WriteString(body.String())
	return f.String()
}

// build compiles the packages under dir (inside the module at modDir) and
// returns the compiler's errors, without the ones a fragment cannot avoid:
// a name a fragment declares for the reader's next step is unused here.
func build(t *testing.T, modDir, dir string) []string {
	t.Helper()
	args := []string{"build", "-o", os.DevNull, "-gcflags=-e"}
	if raceEnabled { // share the build cache with the test run
		args = append(args, "-race")
	}
	// Name every package: ./... patterns skip directories starting with ".".
	var pkgs []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, err := filepath.Rel(modDir, filepath.Dir(path))
			if err != nil {
				return err
			}
			pkgs = append(pkgs, "./"+rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		return nil
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = modDir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	var errs []string
	for _, l := range strings.Split(string(out), "\n") {
		// A cold module cache makes go report its downloads, which are no
		// build errors.
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "go: downloading ") ||
			strings.Contains(l, "declared and not used") {
			continue
		}
		errs = append(errs, l)
	}
	if len(errs) == 0 && !strings.Contains(string(out), "declared and not used") {
		errs = append(errs, string(out)) // failed for another reason: show it all
	}
	return errs
}

// TestDocsCompile compiles every Go block of README.md and docs/*.md: a
// complete program as its own main package, a fragment inside a function
// with the names it assumes (locks, ctx, rc, ...) declared around it.
// Fragments that import the otel module compile in that module.
func TestDocsCompile(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is not in PATH: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readBlocks(t, root)
	if len(blocks) < 20 {
		t.Fatalf("found %d Go blocks in README.md and docs/*.md; expected at least 20", len(blocks))
	}

	// Directories starting with "." are left out of ./... patterns, so a
	// concurrent go vet ./... does not see them.
	rootDir, err := os.MkdirTemp(root, ".doccheck-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	otelDir, err := os.MkdirTemp(filepath.Join(root, "otel"), ".doccheck-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(otelDir) })

	var rootFrags, otelFrags []block
	programs, compiled := 0, 0
	for _, b := range blocks {
		if why := skipped(b); why != "" {
			t.Logf("%s:%d not compiled: %s", b.file, b.line, why)
			continue
		}
		compiled++
		switch {
		case strings.HasPrefix(b.code, "package main"):
			programs++
			dir := filepath.Join(rootDir, fmt.Sprintf("program%d", programs))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			src := fmt.Sprintf("//line %s:%d\n%s", b.file, b.line, b.code)
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		case strings.Contains(b.code, "scriptlockotel."):
			otelFrags = append(otelFrags, b)
		default:
			rootFrags = append(rootFrags, b)
		}
	}
	for _, w := range []struct {
		dir   string
		frags []block
	}{{rootDir, rootFrags}, {otelDir, otelFrags}} {
		if len(w.frags) == 0 {
			continue
		}
		if err := os.WriteFile(filepath.Join(w.dir, "fragments.go"), []byte(fragmentFile(w.frags)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range append(build(t, root, rootDir), build(t, filepath.Join(root, "otel"), otelDir)...) {
		t.Error(e)
	}
	t.Logf("compiled %d of %d Go blocks (%d programs)", compiled, len(blocks), programs)
}
