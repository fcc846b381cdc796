package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardedDivisionAgreesWithServer: a division n / d where a condition
// around shows n % d == 0 (if n % d ~= 0 then return end) comes out even,
// and Redis takes it where it reads an integer: the checker must not warn.
// A guard by another divisor, or one the dividend or divisor is assigned
// after, shows nothing: still warned of, and the server refuses the call
// when the division has a fraction.
func TestGuardedDivisionAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const (
		head    = "-- @key k\n-- @arg ms duration\n-- @return int64\nlocal n = tonumber(ARGV[1])\n"
		refused = "value is not an integer or out of range"
	)
	for _, tc := range []struct {
		name, body, ms string
		warned         bool
		fails          string // part of Redis's error, "" for none
	}{
		{"after an early return", "if n % 1000 ~= 0 then return 0 end\nreturn redis.call('EXPIRE', KEYS[1], n / 1000)", "2000", false, ""},
		{"after an early return, not even", "if n % 1000 ~= 0 then return 0 end\nreturn redis.call('EXPIRE', KEYS[1], n / 1000)", "1500", false, ""},
		{"in the if", "if n % 1000 == 0 then\n  return redis.call('EXPIRE', KEYS[1], n / 1000)\nend\nreturn 0", "2000", false, ""},
		{"in the if, written the other way", "if 0 == n % 1000 and n > 0 then\n  return redis.call('EXPIRE', KEYS[1], n / 1000)\nend\nreturn 0", "2000", false, ""},
		{"by a local divisor", "local d = 1000\nif n % d ~= 0 then return 0 end\nreturn redis.call('EXPIRE', KEYS[1], n / d)", "2000", false, ""},
		{"through a local", "if n % 1000 ~= 0 then return 0 end\nlocal s = n / 1000\nreturn redis.call('EXPIRE', KEYS[1], s)", "2000", false, ""},
		{"by another divisor", "if n % 500 ~= 0 then return 0 end\nreturn redis.call('EXPIRE', KEYS[1], n / 1000)", "1500", true, refused},
		{"the dividend assigned after", "if n % 1000 ~= 0 then return 0 end\nn = n + 500\nreturn redis.call('EXPIRE', KEYS[1], n / 1000)", "1000", true, refused},
		{"the divisor assigned after", "local d = 1000\nif n % d ~= 0 then return 0 end\nd = 3000\nreturn redis.call('EXPIRE', KEYS[1], n / d)", "2000", true, refused},
		{"the divisor assigned by a function", "local d = 1000\nlocal function f() d = 3000 end\nif n % d ~= 0 then return 0 end\nf()\nreturn redis.call('EXPIRE', KEYS[1], n / d)", "2000", true, refused},
		{"the divisor shadowed by a for counter", "local d = 1000\nif n % d ~= 0 then return 0 end\nfor d = 3000, 3000 do\n  return redis.call('EXPIRE', KEYS[1], n / d)\nend\nreturn 0", "2000", true, refused},
		{"the divisor shadowed by a parameter", "local d = 1000\nif n % d ~= 0 then return 0 end\nlocal function f(d)\n  redis.call('EXPIRE', KEYS[1], n / d)\nend\nf(3000)\nreturn 0", "2000", true, refused},
		{"the dividend assigned after a function reading it", "if n % 1000 ~= 0 then return 0 end\nlocal function f()\n  redis.call('EXPIRE', KEYS[1], n / 1000)\nend\nn = n + 500\nf()\nreturn 0", "1000", true, refused},
		{"by a fraction", "if n % 0.7 ~= 0 then return 0 end\nreturn redis.call('EXPIRE', KEYS[1], n / 0.7)", "21", true, refused},
		{"by a local fraction", "local d = 0.7\nif n % d ~= 0 then return 0 end\nreturn redis.call('EXPIRE', KEYS[1], n / d)", "21", true, refused},
		{"in the else", "if n % 1000 == 0 then\n  return 0\nelse\n  return redis.call('EXPIRE', KEYS[1], n / 1000)\nend", "1500", true, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			var warned bool
			_, warnings, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range warnings {
				warned = warned || strings.Contains(w.Error(), "which has a fraction unless it comes out even")
			}
			if warned != tc.warned {
				t.Errorf("warned %v, want %v (%v)", warned, tc.warned, warnings)
			}
			if err := rc.Do(ctx, rc.B().Set().Key("{f}k").Value("v").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			err = rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{f}k").Arg(tc.ms).Build()).Error()
			switch {
			case tc.fails == "" && err != nil:
				t.Errorf("with %s: %v; want it to run", tc.ms, err)
			case tc.fails != "" && (err == nil || !strings.Contains(err.Error(), tc.fails)):
				t.Errorf("with %s: %v; want %q", tc.ms, err, tc.fails)
			}
		})
	}
}
