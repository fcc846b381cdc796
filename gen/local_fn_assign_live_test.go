package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestLocalAssignedByFunctionAgreesWithServer: a local function that
// assigns a local of the script may run after a later assignment in the
// block that declares the local (local n; local function conv() n =
// tonumber(n) end; n = ARGV[1]; conv()), so the value it assigns stays
// possible there. The checker must pass the script, returned as the value
// or in a table, as the server gives an integer.
func TestLocalAssignedByFunctionAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, ret, body string }{
		{"returned", "int64", "local n\nlocal function conv() n = tonumber(n) end\nn = ARGV[1]\nconv()\nreturn n"},
		{"in a table", "{n int64}", "local n\nlocal function conv() n = tonumber(n) end\nn = ARGV[1]\nconv()\nreturn {n}"},
		{"a reply in a list", "[]int64", "local n\nlocal function incr() n = redis.call('INCR', KEYS[1]) end\nn = 'none'\nincr()\nreturn {n}"},
		{"a boolean in a list", "[]int64", "local ok\nlocal function conv() ok = ok and 1 or 0 end\nok = ARGV[1] == '7'\nconv()\nreturn {ok}"},
		{"a boolean returned", "int64", "local ok\nlocal function conv() ok = ok and 1 or 0 end\nok = ARGV[1] == '8'\nconv()\nreturn ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns.\n-- @key k\n-- @arg n string\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			if !strings.Contains(tc.body, "KEYS[1]") {
				src = strings.Replace(src, "-- @key k\n", "", 1)
			}
			if !strings.Contains(tc.body, "ARGV[1]") {
				src = strings.Replace(src, "-- @arg n string\n", "", 1)
			}
			if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); len(got) != 0 {
				t.Errorf("checker refused:\n%s", strings.Join(got, "\n"))
			}
			keys := []string{}
			if strings.Contains(tc.body, "KEYS[1]") {
				keys = []string{"{t}n"}
			}
			msg, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Arg("7").Build()).ToMessage()
			if err != nil {
				t.Fatalf("the server replied %v", err)
			}
			if vals, err := msg.ToArray(); err == nil {
				msg = vals[0]
			}
			if !msg.IsInt64() {
				t.Errorf("the server replied %s; want an integer", msg.String())
			}
		})
	}
}
