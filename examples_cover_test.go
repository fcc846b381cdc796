package scriptlock_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock"
)

// TestEveryKindHasExample: each kind of handle a Client makes has a runnable
// example in the package documentation, as README.md and docs/locks.md say:
// ExampleClient_<Kind>, Example<Kind> or Example<Kind>_<Method>.
func TestEveryKindHasExample(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if af.Name.Name != "scriptlock_test" {
			continue
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Example") {
				examples[fd.Name.Name] = true
			}
		}
	}
	errType := reflect.TypeOf((*error)(nil)).Elem()
	ct := reflect.TypeOf((*scriptlock.Client)(nil))
	kinds := 0
	for i := range ct.NumMethod() {
		m := ct.Method(i)
		ft := m.Type
		// A handle constructor: (name string, opts ...LockOption) (*Kind, error).
		if ft.NumIn() != 3 || ft.In(1).Kind() != reflect.String || !ft.IsVariadic() ||
			ft.NumOut() != 2 || ft.Out(0).Kind() != reflect.Pointer || ft.Out(1) != errType {
			continue
		}
		kinds++
		kind := ft.Out(0).Elem().Name()
		found := examples["ExampleClient_"+m.Name] || examples["Example"+kind]
		for e := range examples {
			found = found || strings.HasPrefix(e, "Example"+kind+"_")
		}
		if !found {
			t.Errorf("Client.%s: no runnable example (ExampleClient_%s)", m.Name, m.Name)
		}
	}
	if kinds < 7 {
		t.Errorf("found %d handle constructors on *Client; expected at least 7", kinds)
	}
}
