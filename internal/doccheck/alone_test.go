package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// processWide reports the first call in body that looks at every goroutine
// or allocation in the process, which other tests running beside it would
// disturb, or "".
func processWide(body *ast.BlockStmt) string {
	found := ""
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found != "" {
			return found == ""
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		switch pkg.Name + "." + sel.Sel.Name {
		case "runtime.NumGoroutine", "runtime.ReadMemStats", "testing.AllocsPerRun", "goleak.VerifyNone":
			found = pkg.Name + "." + sel.Sel.Name
		case "runtime.Stack":
			// runtime.Stack(buf, true): every goroutine's stack.
			if len(call.Args) == 2 {
				if id, ok := call.Args[1].(*ast.Ident); !ok || id.Name != "false" {
					found = "runtime.Stack(..., true)"
				}
			}
		}
		return found == ""
	})
	return found
}

// callsParallel reports whether body itself (not a subtest's function)
// calls t.Parallel.
func callsParallel(body *ast.BlockStmt) bool {
	for _, st := range body.List {
		es, ok := st.(*ast.ExprStmt)
		if !ok {
			continue
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok {
			continue
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Parallel" && len(call.Args) == 0 {
			return true
		}
	}
	return false
}

// TestProcessWideChecksRunAlone: docs/testing.md promises that the tests
// that check for leaked goroutines or count allocations run alone. A top-level
// test that counts the process's goroutines, reads every goroutine's stack or
// counts allocations is not marked parallel: beside parallel tests it would
// see their goroutines and allocations as its own.
func TestProcessWideChecksRunAlone(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			what := processWide(fn.Body)
			if what == "" {
				continue
			}
			checked++
			if callsParallel(fn.Body) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: %s calls %s but is marked parallel: other tests' goroutines and allocations would count as its own", rel, fn.Name.Name, what)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no test found that counts goroutines or allocations: the scan finds nothing")
	}
}
