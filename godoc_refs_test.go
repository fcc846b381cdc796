package scriptlock

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExportedDocsSendToNoUnexported: a doc comment that go doc shows (of an
// exported identifier, or the package's) does not send its reader to an
// unexported one ("see change"), which go doc and pkg.go.dev do not show.
func TestExportedDocsSendToNoUnexported(t *testing.T) {
	t.Parallel()
	fset, files := parsePackage(t)
	unexported := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					unexported[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							unexported[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if !n.IsExported() {
								unexported[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	see := regexp.MustCompile(`\b[Ss]ee ([a-z][A-Za-z0-9_]*)\b`)
	check := func(pos token.Pos, what string, doc *ast.CommentGroup) {
		if doc == nil {
			return
		}
		for _, m := range see.FindAllStringSubmatch(doc.Text(), -1) {
			if unexported[m[1]] {
				t.Errorf("%s: the doc of %s says %q: %s is unexported, so go doc's reader cannot see it", fset.Position(pos), what, m[0], m[1])
			}
		}
	}
	for _, f := range files {
		check(f.Package, "the package", f.Doc)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && exportedRecv(d) {
					check(d.Pos(), d.Name.Name, d.Doc)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							check(s.Pos(), s.Name.Name, d.Doc)
							check(s.Pos(), s.Name.Name, s.Doc)
						}
					case *ast.ValueSpec:
						if s.Names[0].IsExported() {
							check(s.Pos(), s.Names[0].Name, d.Doc)
							check(s.Pos(), s.Names[0].Name, s.Doc)
						}
					}
				}
			}
		}
	}
}

// parsePackage parses the package's own files (not its tests), with their
// comments.
func parsePackage(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("no Go files of the package found")
	}
	return fset, files
}

// exportedRecv reports whether d is a function or a method of an exported
// type, whose doc go doc shows.
func exportedRecv(d *ast.FuncDecl) bool {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return true
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// TestExportedNamesDocumented: every exported constant, variable and
// interface method of the package has a doc comment go doc shows: its own, a
// line comment, its group's, or (an interface method) the one before it
// naming it ("ReleaseStart and ReleaseEnd bracket ...").
func TestExportedNamesDocumented(t *testing.T) {
	t.Parallel()
	fset, files := parsePackage(t)
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && g.Doc == nil && s.Doc == nil && s.Comment == nil {
							t.Errorf("%s: %s has no doc comment", fset.Position(n.Pos()), n.Name)
						}
					}
				case *ast.TypeSpec:
					it, ok := s.Type.(*ast.InterfaceType)
					if !ok || !s.Name.IsExported() {
						continue
					}
					var prev string
					for _, m := range it.Methods.List {
						if len(m.Names) == 0 {
							continue
						}
						name := m.Names[0].Name
						if m.Doc != nil {
							prev = m.Doc.Text()
						} else if m.Comment == nil && ast.IsExported(name) && !strings.Contains(prev, name) {
							t.Errorf("%s: %s.%s has no doc comment", fset.Position(m.Pos()), s.Name.Name, name)
						}
					}
				}
			}
		}
	}
}

// TestLockerDocsNameImplementations: the docs of Locker and Extender name
// every handle type the package asserts satisfies them (var _ Locker =
// (*LeanMutex)(nil)), so a reader of go doc learns what the middleware and
// MultiLock accept.
func TestLockerDocsNameImplementations(t *testing.T) {
	t.Parallel()
	_, files := parsePackage(t)
	docs := map[string]string{}
	impls := map[string][]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == "Locker" || s.Name.Name == "Extender" {
						docs[s.Name.Name] = g.Doc.Text()
					}
				case *ast.ValueSpec:
					iface, ok := s.Type.(*ast.Ident)
					if !ok || len(s.Values) != 1 || s.Names[0].Name != "_" {
						continue
					}
					// (*T)(nil)
					call, ok := s.Values[0].(*ast.CallExpr)
					if !ok {
						continue
					}
					paren, ok := call.Fun.(*ast.ParenExpr)
					if !ok {
						continue
					}
					star, ok := paren.X.(*ast.StarExpr)
					if !ok {
						continue
					}
					if id, ok := star.X.(*ast.Ident); ok && id.IsExported() {
						impls[iface.Name] = append(impls[iface.Name], id.Name)
					}
				}
			}
		}
	}
	for _, iface := range []string{"Locker", "Extender"} {
		if len(impls[iface]) == 0 {
			t.Fatalf("no var _ %s = (*T)(nil) assertions found", iface)
		}
		for _, typ := range impls[iface] {
			if !regexp.MustCompile(`\b` + typ + `\b`).MatchString(docs[iface]) {
				t.Errorf("%s's doc does not name %s, which satisfies it:\n%s", iface, typ, docs[iface])
			}
		}
	}
}
