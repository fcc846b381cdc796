package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicLongSureAgainstBranch: a command made on every run that
// gets a variadic list whole and takes fewer values of it than one made
// only on some paths needs (GET of unpack(KEYS), and RENAME of it, or
// KEYS[2], in a branch) makes that path fail whatever the count. The
// callers must take the counts the script handles, where the branch is
// not taken (one key), and refuse those it never does (a *LongError past
// the most): the generator warns of the branch.
func TestVariadicLongSureAgainstBranch(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, src string
		warn      string
	}{
		{"RENAME in a branch", "-- @key ks...\n-- @arg mode string\n-- @return none\nredis.call('GET', unpack(KEYS))\nif ARGV[1] == 'r' then redis.call('RENAME', unpack(KEYS)) end\n",
			"RENAME (line 6) needs 2 values of ks at least, but GET (line 5), which every run makes, takes 1 at most"},
		{"KEYS[2] in a branch", "-- @key ks...\n-- @arg mode string\n-- @return none\nif ARGV[1] == 'r' then redis.call('SET', KEYS[2], 'x') end\nredis.call('GET', unpack(KEYS))\n",
			"KEYS[2] in SET (line 5) needs 2 values of ks at least, but GET (line 6), which every run makes, takes 1 at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n" + tc.src
			// One key where the branch is not taken: the server runs it.
			if err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}a").Arg("g").Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
				t.Fatalf("one key: the server returned %v", err)
			}
			out, warns, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(warns.Error(), tc.warn) {
				t.Errorf("the warnings are %q, want one holding %q", warns.Error(), tc.warn)
			}
			code := string(out["x.lua.go"])
			if !strings.Contains(code, "if len(ks) > 1 {") || strings.Contains(code, "if len(ks) < 2 {") {
				t.Errorf("the callers must take one key and refuse two:\n%s", code)
			}
		})
	}
}
