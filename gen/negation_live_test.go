package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNegationArgAgreesWithServer: a negation of a value the checker cannot
// read (-n, n * -1), directly or through a local, where Redis reads an
// integer, is warned of: a Lua number is a double, so when the value is 0
// Redis gets "-0" and refuses the call, after the script's earlier writes;
// with any other value it runs. 0 - n, which the warning suggests, runs
// with 0 too, and so does -n where Redis reads a number or a value.
func TestNegationArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X changes.\n-- @key k\n-- @arg n string\n-- @return none\nlocal z = tonumber(ARGV[1])\nredis.call('SET', KEYS[1] .. ':w', 1)\n"
	for _, tc := range []struct {
		name, body, warning string
	}{
		{"a local negated", "redis.call('HINCRBY', KEYS[1], 'f', -z)",
			`scripts/x.lua:7:37: warning: HINCRBY reads an integer there (increment), and the argument is -z, which is -0 when z is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - z, which gives 0`},
		{"tonumber negated", "redis.call('INCRBY', KEYS[1], -tonumber(ARGV[1]))",
			`scripts/x.lua:7:31: warning: INCRBY reads an integer there (increment), and the argument is -tonumber(ARGV[1]), which is -0 when tonumber(ARGV[1]) is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - tonumber(ARGV[1]), which gives 0`},
		{"a sum negated through a local", "local d = -(z * 2)\nredis.call('DECRBY', KEYS[1], d)",
			`scripts/x.lua:8:31: warning: DECRBY reads an integer there (decrement), and the argument is d (-(z * 2), assigned at line 7), which is -0 when z * 2 is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - z * 2 at line 7, which gives 0`},
		{"a local negated on some paths", "local d = 1\nif redis.call('EXISTS', KEYS[1]) == 0 then d = -z end\nredis.call('INCRBY', KEYS[1], d)",
			`scripts/x.lua:9:31: warning: INCRBY reads an integer there (increment), and the argument is d (-z, assigned at line 8), which is -0 when z is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - z at line 8, which gives 0`},
		{"a product with -1", "redis.call('LRANGE', KEYS[1], 0, z * -1)",
			`scripts/x.lua:7:34: warning: LRANGE reads an integer there (stop), and the argument is z * -1, which is -0 when z is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - z, which gives 0`},
		{"subtracted from 0", "redis.call('HINCRBY', KEYS[1], 'f', 0 - z)", ""},
		{"a local subtracted from 0", "local d = 0 - z\nredis.call('INCRBY', KEYS[1], d)", ""},
		{"where Redis reads a number", "redis.call('ZINCRBY', KEYS[1] .. ':z', -z, 'm')\nredis.call('ZADD', KEYS[1] .. ':z', -z, 'n')\nredis.call('INCRBYFLOAT', KEYS[1] .. ':f', -z)", ""},
		{"where Redis reads a value", "redis.call('SET', KEYS[1] .. ':v', -z)", ""},
		{"a SCAN cursor", "redis.call('SCAN', -z)", ""},
		{"a loop's counter from 1", "for i = 1, 2 do redis.call('LINDEX', KEYS[1], -i) end", ""},
		{"a loop's counter down to 1", "for i = z + 2, 1, -1 do redis.call('LINDEX', KEYS[1], -i) end", ""},
		{"a local made its absolute value", "local d = z\nif d < 0 then d = -d end\nredis.call('INCRBY', KEYS[1], d)", ""},
		{"a local tested nonzero", "local d = -z\nif d ~= 0 then redis.call('INCRBY', KEYS[1], d) end", ""},
		{"a local negated past a test of 0", "if z == 0 then return nil end\nredis.call('INCRBY', KEYS[1], -z)", ""},
		{"a local tested not below 0", "if z >= 0 then redis.call('INCRBY', KEYS[1], -z) end",
			`scripts/x.lua:7:46: warning: INCRBY reads an integer there (increment), and the argument is -z, which is -0 when z is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - z, which gives 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\nreturn nil\n"
			var want []string
			if tc.warning != "" {
				want = []string{tc.warning}
			}
			checkWarnings(t, src, want)
			for _, n := range []string{"0", "3"} {
				if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
					t.Fatal(err)
				}
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{g}k").Arg(n).Build()).Error()
				if rueidis.IsRedisNil(err) {
					err = nil
				}
				switch refused := tc.warning != "" && n == "0"; {
				case !refused && err != nil:
					t.Errorf("with %s the server refused it: %v", n, err)
				case refused && (err == nil || !strings.Contains(err.Error(), "not an integer")):
					t.Errorf("with %s the server returned %v; want an error with %q", n, err, "not an integer")
				}
				// The write before the call stays: the script is no transaction.
				if w, err := rc.Do(ctx, rc.B().Get().Key("{g}k:w").Build()).ToString(); err != nil || w != "1" {
					t.Errorf("with %s the earlier write holds %q, %v; want \"1\"", n, w, err)
				}
			}
		})
	}
}
