package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestExpiryBeyondLimitAgreesWithServer: a literal expire time that is an
// integer, but puts the expiry past the largest time Redis keeps (2^63 - 1
// ms after 1970, seconds multiplied by 1000 first, a relative time added
// to now), is refused by Redis whatever the key holds. The checker must
// refuse it and take the values next to the limit that Redis runs.
func TestExpiryBeyondLimitAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const refused = "invalid expire time"
	for _, tc := range []struct {
		call, want, server string // server: part of Redis's error, "" for none
	}{
		{"'PEXPIRE', KEYS[1], '9223372036854775807'",
			`scripts/x.lua:4:32: PEXPIRE reads an expire time there (milliseconds), and 9223372036854775807 puts it at now + 9223372036854775807 ms, past the largest time Redis keeps (2^63 - 1 ms after 1970): Redis refuses the call at run time ("invalid expire time in 'pexpire' command"), after the script's earlier writes`, refused},
		{"'EXPIRE', KEYS[1], '9223372036854775'",
			`scripts/x.lua:4:31: EXPIRE reads an expire time there (seconds), and 9223372036854775 puts it at now + 9223372036854775 s, past the largest time Redis keeps (2^63 - 1 ms after 1970): Redis refuses the call at run time ("invalid expire time in 'expire' command"), after the script's earlier writes`, refused},
		{"'EXPIRE', KEYS[1], 1e16",
			`scripts/x.lua:4:31: EXPIRE reads an expire time there (seconds), and 1e16 puts it at now + 10000000000000000 s, past the largest time Redis keeps (2^63 - 1 ms after 1970): Redis refuses the call at run time ("invalid expire time in 'expire' command"), after the script's earlier writes`, refused},
		{"'EXPIRE', KEYS[1], '-9223372036854776'",
			`scripts/x.lua:4:31: EXPIRE reads an expire time there (seconds), and -9223372036854776 puts it at now - 9223372036854776 s, which is no time in milliseconds Redis can hold: Redis refuses the call at run time ("invalid expire time in 'expire' command"), after the script's earlier writes`, refused},
		{"'EXPIREAT', KEYS[1], '9223372036854776'",
			`scripts/x.lua:4:33: EXPIREAT reads an expire time there (unix-time-seconds), and 9223372036854776 puts it at unix second 9223372036854776, past the largest time Redis keeps (2^63 - 1 ms after 1970): Redis refuses the call at run time ("invalid expire time in 'expireat' command"), after the script's earlier writes`, refused},
		{"'SET', KEYS[1], 'v', 'PX', '9223372036854775807'",
			`scripts/x.lua:4:39: SET PX reads an expire time there (milliseconds), and 9223372036854775807 puts it at now + 9223372036854775807 ms, past the largest time Redis keeps (2^63 - 1 ms after 1970): Redis refuses the call at run time ("invalid expire time in 'set' command"), after the script's earlier writes`, refused},
		{"'SETEX', KEYS[1], '9223372036854775', 'v'",
			`scripts/x.lua:4:30: SETEX reads an expire time there (seconds), and 9223372036854775 puts it at now + 9223372036854775 s, past the largest time Redis keeps (2^63 - 1 ms after 1970): Redis refuses the call at run time ("invalid expire time in 'setex' command"), after the script's earlier writes`, refused},
		{"'GETEX', KEYS[1], 'PX', '9223372036854775000'",
			`scripts/x.lua:4:36: GETEX PX reads an expire time there (milliseconds), and 9223372036854775000 puts it at now + 9223372036854775000 ms, past the largest time Redis keeps (2^63 - 1 ms after 1970): Redis refuses the call at run time ("invalid expire time in 'getex' command"), after the script's earlier writes`, refused},
		// Next to the limit: taken.
		{"'PEXPIRE', KEYS[1], '9223370000000000000'", "", ""},
		{"'PEXPIREAT', KEYS[1], '9223372036854775807'", "", ""},
		{"'EXPIRE', KEYS[1], '9223370000000000'", "", ""},
		{"'EXPIREAT', KEYS[1], '9223372036854775'", "", ""},
		{"'EXPIRE', KEYS[1], '-9223372036854775'", "", ""},
		{"'SET', KEYS[1], 'v', 'PXAT', '9223372036854775807'", "", ""},
	} {
		t.Run(tc.call, func(t *testing.T) {
			src := "-- X expires.\n-- @key k\n-- @return none\nredis.call(" + tc.call + ")\nreturn nil\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			if err := rc.Do(ctx, rc.B().Set().Key("{t}k").Value("v").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).Error()
			if rueidis.IsRedisNil(err) {
				err = nil
			}
			switch {
			case tc.server == "" && err != nil:
				t.Errorf("the server refused it: %v", err)
			case tc.server != "" && (err == nil || !strings.Contains(err.Error(), tc.server)):
				t.Errorf("the server returned %v; want an error with %q", err, tc.server)
			}
		})
	}
}
