package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestErrorCodesAgreeWithServer returns error replies whose code Redis does
// not give as written: a code a value is concatenated to (Redis takes the
// word before the first space as the code), {err = ...} with a leading '-'
// (which Redis keeps). The checker must refuse (or, for a value it
// cannot read, warn of) each, and the server must reply the code its
// message says; the forms it accepts must reply NOT_HELD, which the callers
// match to ErrNotHeld.
func TestErrorCodesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, reply  string
		err, warning string // the checker's, "" for none
		code         string // the code the caller gets
	}{
		{"a number joined to the code", "redis.error_reply('NOT_HELD' .. 5 .. ' x')",
			`scripts/x.lua:6:8: the code NOT_HELD of redis.error_reply("NOT_HELD" .. ...) runs into the value concatenated after it: Redis takes the word before the first space as the code, so the caller gets another code, which matches no sentinel; end the code with a space ('NOT_HELD ' .. ...)`, "", "NOT_HELD5"},
		{"a reply joined to the code", "redis.error_reply('NOT_HELD' .. redis.call('TYPE', KEYS[1]).ok)", "",
			`scripts/x.lua:6:8: warning: the code NOT_HELD of redis.error_reply("NOT_HELD" .. ...) runs into the value concatenated after it unless that starts with a space: Redis takes the word before the first space as the code, so the caller gets another code, which matches no sentinel; end the code with a space ('NOT_HELD ' .. ...)`, "NOT_HELDnone"},
		{"an error table with a dash", "{err = '-NOT_HELD not held'}",
			`scripts/x.lua:6:9: {err = "-NOT_HELD not held"} keeps its '-' (only redis.error_reply drops it): the caller gets the code -NOT_HELD, which matches no sentinel; write {err = "NOT_HELD not held"}`, "", "-NOT_HELD"},
		{"error_reply with a message", "redis.error_reply('NOT_HELD ' .. KEYS[1])", "", "", "NOT_HELD"},
		{"error_reply with a dash and a message", "redis.error_reply('-NOT_HELD x')", "", "", "NOT_HELD"},
		{"a space joined after the code", "redis.error_reply('NOT_HELD' .. ' ' .. KEYS[1])", "", "", "NOT_HELD"},
		{"an error table of the code alone", "{err = 'NOT_HELD'}", "", "", "NOT_HELD"},
		// Redis replies "ERR NOT_HELD", from which rueidis drops "ERR ".
		{"error_reply of the code alone", "redis.error_reply('NOT_HELD')", "", "", "NOT_HELD"},
		{"error_reply of the code alone with a dash", "redis.error_reply('-NOT_HELD')", "", "", "NOT_HELD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X fails.\n-- @key k\n-- @error NOT_HELD not held\n-- @return none\nredis.call('GET', KEYS[1])\nreturn " + tc.reply + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.err {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.err)
			}
			if tc.err == "" {
				if got := checkWarningsOf(t, src); got != tc.warning {
					t.Errorf("warnings:\n%s\nwant:\n%s", got, tc.warning)
				}
			}
			err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).Error()
			re, ok := rueidis.IsRedisErr(err)
			if !ok {
				t.Fatalf("the server replied %v, not an error", err)
			}
			if code, _, _ := strings.Cut(re.Error(), " "); code != tc.code {
				t.Errorf("the server replied %q: code %q, want %q", re.Error(), code, tc.code)
			}
		})
	}
}
