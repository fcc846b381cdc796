package scriptlock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// TestScriptsPassNoNumberLiterals keeps the scripts' constant arguments
// strings ('1', not 1): Redis formats a Lua number into a string on every
// call, which cost Mutex's acquisition a tenth of its server time.
func TestScriptsPassNoNumberLiterals(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("scripts/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, errs := parse.Parse(name, src)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs[0])
		}
		for _, c := range f.Calls {
			for _, a := range c.Args {
				if a.Number {
					t.Errorf("%s:%d: %s %s passes the number %s; write it as the string '%s'",
						name, a.Pos.Line, c.Func, c.Command, *a.Literal, *a.Literal)
				}
			}
		}
	}
}
