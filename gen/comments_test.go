package gen

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCommentsStayComments: doc lines and @key/@arg descriptions are text,
// whatever they start with; none can end the comment and add code.
func TestCommentsStayComments(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"doc opens a block comment", "-- /* legacy note\n-- @return none\nreturn 'OK'\n", "// /* legacy note"},
		{"doc injects code", "-- /* x */ func init() { panic(\"injected\") }\n-- @return none\nreturn 'OK'\n", `// /* x * / func init() { panic("injected") }`},
		{"doc is a line comment", "-- // func init() {}\n-- @return none\nreturn 'OK'\n", "// // func init() {}"},
		{"key description", "-- @key k /* x */ func init() { panic(\"injected\") }\n-- @return none\nreturn redis.call('GET', KEYS[1])\n", `// /* x * / func init() { panic("injected") }`},
		{"arg description", "-- @arg n int64 // z\n-- @return none\nreturn ARGV[1]\n", "// // z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(tc.src)}})
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			b := out["x.lua.go"]
			f, err := parser.ParseFile(token.NewFileSet(), "x.lua.go", b, parser.ParseComments)
			if err != nil {
				t.Fatalf("does not parse: %v\n%s", err, b)
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "init" {
					t.Fatalf("the generated file declares func init:\n%s", b)
				}
			}
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("no comment %q in:\n%s", tc.want, b)
			}
		})
	}
}

// TestNamesWithoutGoIdentifier: a name that maps to no Go identifier is a
// checker error, not Go that fails to format.
func TestNamesWithoutGoIdentifier(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"key _", "-- @key _\n-- @return none\nreturn redis.call('GET', KEYS[1])\n",
			[]string{`scripts/x.lua:1:9: invalid key name "_": it gives no Go identifier; start it with a letter`}},
		{"arg _1", "-- @arg _1 string\n-- @return none\nreturn ARGV[1]\n",
			[]string{`scripts/x.lua:1:9: invalid arg name "_1": it gives no Go identifier; start it with a letter`}},
		{"record field __", "-- @return {__ string}\nreturn {'a'}\n",
			[]string{`scripts/x.lua:1:12: invalid record field name "__": it gives no Go identifier; start it with a letter`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(tc.src)}})
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Generate: %v (want checker errors)", err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}
