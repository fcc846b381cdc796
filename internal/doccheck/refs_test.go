package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// refPackages are the packages the documentation names in inline code, by
// the name it uses, with their directories relative to the module root.
var refPackages = map[string]string{
	"scriptlock":     ".",
	"echolock":       "middleware/echolock",
	"grpclock":       "middleware/grpclock",
	"idempotency":    "middleware/idempotency",
	"scriptlockotel": "otel",
}

// exported returns the exported top-level names of the package in dir, and
// the exported names of its methods and struct fields (for X.Y references).
func exported(t *testing.T, dir string) (top, members map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no Go files (%v)", dir, err)
	}
	top, members = map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					members[d.Name.Name] = true
				} else {
					top[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						top[s.Name.Name] = true
						ast.Inspect(s.Type, func(n ast.Node) bool {
							if f, ok := n.(*ast.Field); ok {
								for _, name := range f.Names {
									members[name.Name] = true
								}
							}
							return true
						})
					case *ast.ValueSpec:
						for _, name := range s.Names {
							top[name.Name] = true
						}
					}
				}
			}
		}
	}
	return top, members
}

// bareRef is an option or error named without its package (`WithLease`,
// `ErrNotHeld`), which one of refPackages must export.
var bareRef = regexp.MustCompile(`(?:^|[^.\w])((?:With|Err)[A-Z]\w*)`)

// generatedNames are sentinels of the generator's examples, which a user's
// generated package declares.
var generatedNames = map[string]bool{"ErrTTLExpired": true}

// spanNames look like package-qualified names but name trace spans.
var spanNames = map[string]bool{"scriptlock.Lock": true, "scriptlock.Unlock": true}

var inlineRef = regexp.MustCompile(`\b(scriptlock|echolock|grpclock|idempotency|scriptlockotel)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// inlineRefs returns the package-qualified names in the inline code of a
// Markdown file (code blocks are compiled by TestDocsCompile), with their
// lines.
func inlineRefs(text string) (refs [][]string, lines []int) {
	return inlineMatches(text, inlineRef)
}

// inlineMatches returns the matches of re in the inline code of a Markdown
// file, with their lines.
func inlineMatches(text string, re *regexp.Regexp) (refs [][]string, lines []int) {
	inline := regexp.MustCompile("`([^`\n]+)`")
	in := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if in {
			continue
		}
		for _, m := range inline.FindAllStringSubmatch(l, -1) {
			for _, r := range re.FindAllStringSubmatch(m[1], -1) {
				refs = append(refs, r)
				lines = append(lines, i+1)
			}
		}
	}
	return refs, lines
}

// TestInlineReferencesExist: every `pkg.Name` (and `pkg.Name.Member`) in the
// inline code of README.md and docs/*.md names something the package
// exports, so a renamed option, error or method cannot linger in the prose.
func TestInlineReferencesExist(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	type names struct{ top, members map[string]bool }
	pkgs := map[string]names{}
	for name, dir := range refPackages {
		top, members := exported(t, filepath.Join(root, dir))
		pkgs[name] = names{top, members}
	}
	checked := 0
	for _, f := range docFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		refs, lines := inlineRefs(string(text))
		for i, r := range refs {
			if spanNames[r[0]] {
				continue
			}
			checked++
			p := pkgs[r[1]]
			switch {
			case !p.top[r[2]]:
				t.Errorf("%s:%d: `%s`: package %s has no exported %s", f, lines[i], r[0], r[1], r[2])
			case r[3] != "" && !p.members[r[3]]:
				t.Errorf("%s:%d: `%s`: package %s has no method or field %s", f, lines[i], r[0], r[1], r[3])
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked %d references; expected the README's and the docs' option, error and middleware names", checked)
	}
	t.Logf("checked %d package-qualified names in inline code", checked)

	bare := 0
	for _, f := range docFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		refs, lines := inlineMatches(string(text), bareRef)
		for i, r := range refs {
			bare++
			found := generatedNames[r[1]]
			for _, p := range pkgs {
				found = found || p.top[r[1]]
			}
			if !found {
				t.Errorf("%s:%d: `%s`: no package of the module exports it", f, lines[i], r[1])
			}
		}
	}
	if bare < 50 {
		t.Errorf("checked %d option and error names; expected the lock options and errors the docs name", bare)
	}
	t.Logf("checked %d option and error names in inline code", bare)
}

// The checker finds a name a package does not export.
func TestInlineReferencesFindsDrift(t *testing.T) {
	if m := bareRef.FindAllStringSubmatch("`WithLease(d)`, `scriptlock.WithFencing()`, `x.ErrNope`, `(ErrClosed)`", -1); len(m) != 2 || m[0][1] != "WithLease" || m[1][1] != "ErrClosed" {
		t.Errorf("bare names %q; want WithLease and ErrClosed", m)
	}
	refs, lines := inlineRefs("Use `scriptlock.WithLease(d)` or `scriptlock.WithLeese(d)`,\n" +
		"```go\nscriptlock.Nope()\n```\nand `echolock.DefaultLockConfig.KeyLookupp`.\n")
	if len(refs) != 3 || lines[2] != 5 {
		t.Fatalf("found %q at lines %v; want three references, the last on line 5", refs, lines)
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	top, _ := exported(t, root)
	if !top["WithLease"] || top["WithLeese"] {
		t.Errorf("exported names: WithLease %v, WithLeese %v; want true, false", top["WithLease"], top["WithLeese"])
	}
	_, members := exported(t, filepath.Join(root, "middleware", "echolock"))
	if !members["KeyLookup"] || members["KeyLookupp"] {
		t.Errorf("echolock members: KeyLookup %v, KeyLookupp %v; want true, false", members["KeyLookup"], members["KeyLookupp"])
	}
}
