package scriptlock

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The package documentation's list of errors names every exported error of
// the package, so that a caller reading it learns each one it may get.
func TestPackageDocListsEveryError(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range pkgs["scriptlock"].Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, name := range s.(*ast.ValueSpec).Names {
					if !name.IsExported() || !strings.HasPrefix(name.Name, "Err") {
						continue
					}
					n++
					if !strings.Contains(string(doc), "["+name.Name+"]") {
						t.Errorf("doc.go's list of errors does not name %s", name.Name)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no exported errors found")
	}
}
