package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilLocalGivenOnEveryPathAgreesWithServer: a local declared without a
// value and given one on every path of an if (its else too, an elseif
// chain, a nested if, or a branch that leaves the script) holds a value
// after it, and a returned table of it reaches the caller whole: the
// checker takes it without a warning.
func TestNilLocalGivenOnEveryPathAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const c = "redis.call('EXISTS', KEYS[1]) == 1"
	for _, body := range []string{
		"local v\nif " + c + " then v = 'x' else v = 'y' end\nreturn {v, 5}",
		"local v\nif " + c + " then v = 'x' elseif " + c + " then v = 'y' else v = 'z' end\nreturn {v, 5}",
		"local v\nif " + c + " then\n  v = 'x'\nelse\n  return {'n', 5}\nend\nreturn {v, 5}",
		"local v\nif " + c + " then\n  if " + c + " then v = 'x' else v = 'y' end\nelse\n  v = 'z'\nend\nreturn {v, 5}",
		"local a, v\nif " + c + " then a = 'x'; v = 'x' else a = 'y'; v = 'y' end\nreturn {v, 5}",
	} {
		src := "-- @key k\n-- @return {a string?, b int64}\n" + body + "\n"
		_, warnings, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
		if err != nil {
			t.Fatal(err)
		}
		if warnings != nil {
			t.Errorf("%s: checker:\n%s\nwant no warning", body, warnings.Error())
		}
		vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}missing").Build()).ToArray()
		if err != nil {
			t.Fatal(err)
		}
		if len(vals) != 2 {
			t.Errorf("%s: the server replied %d values, want 2", body, len(vals))
		}
	}
}
