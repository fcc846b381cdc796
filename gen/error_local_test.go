package gen

import (
	"strings"
	"testing"
)

// TestErrorCodeFromLocal: an error reply whose message is a local holding one
// string literal wherever the script assigns it (a constant declared at the
// top) is read as that literal written in place: its code is checked against
// @error, and counts as returned. Before, such a site was taken for a message
// the checker cannot read: an undeclared code passed, and no declared code
// was reported as never returned.
func TestErrorCodeFromLocal(t *testing.T) {
	head := "-- X fails.\n-- @key k\n-- @return int64\n"
	for _, tc := range []struct {
		name, decl, body string
		want             []string
	}{
		{"undeclared", "-- @error NOT_HELD not held\n",
			"local BAD = 'BAD_THING it broke'\nif redis.call('INCR', KEYS[1]) > 5 then return redis.error_reply(BAD) end\nreturn redis.error_reply('NOT_HELD x')\n",
			[]string{"scripts/x.lua:6:48: error code BAD_THING is not declared with @error (-- @error BAD_THING <message>; callers get ErrBadThing)"}},
		{"declared, joined", "-- @error NOT_HELD not held\n",
			"local CODE = 'NOT_HELD '\nif redis.call('INCR', KEYS[1]) > 5 then return redis.error_reply(CODE .. ARGV[1]) end\nreturn 1\n", nil},
		{"err table", "-- @error NOT_HELD not held\n",
			"local CODE = 'GONE it is gone'\nif redis.call('INCR', KEYS[1]) > 5 then return {err = CODE} end\nreturn redis.error_reply('NOT_HELD x')\n",
			[]string{"scripts/x.lua:6:49: error code GONE is not declared with @error (-- @error GONE <message>; callers get ErrGone)"}},
		{"format", "-- @error NOT_HELD not held\n",
			"local F = 'BAD_FMT %s'\nif redis.call('INCR', KEYS[1]) > 5 then return redis.error_reply(string.format(F, 'x')) end\nreturn redis.error_reply('NOT_HELD x')\n",
			[]string{"scripts/x.lua:6:48: error code BAD_FMT is not declared with @error (-- @error BAD_FMT <message>; callers get ErrBadFmt)"}},
		{"error()", "-- @error NOT_HELD not held\n",
			"local CODE = 'NOT_HELD x'\nif redis.call('INCR', KEYS[1]) > 5 then error(CODE) end\nreturn redis.error_reply('NOT_HELD y')\n",
			[]string{`scripts/x.lua:6:41: error("NOT_HELD x") reaches the caller as "ERR user_script:...: NOT_HELD x" and matches no sentinel: use return redis.error_reply("NOT_HELD x")`}},
		// A local given another value somewhere is not a constant: its
		// message stays unread, as before.
		{"reassigned", "-- @error NOT_HELD not held\n",
			"local CODE = 'BAD_THING x'\nif redis.call('INCR', KEYS[1]) > 5 then CODE = ARGV[1] end\nreturn redis.error_reply(CODE)\n", nil},
		{"two literals", "-- @error NOT_HELD not held\n",
			"local CODE = 'BAD_THING x'\nif redis.call('INCR', KEYS[1]) > 5 then CODE = 'NOT_HELD y' end\nreturn redis.error_reply(CODE)\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.decl + tc.body
			if strings.Contains(tc.body, "ARGV") {
				src = head + tc.decl + "-- @arg a string\n" + tc.body
			}
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)})
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("checker:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestErrorCodeFromLocalReturned: a declared code returned only through such
// a local counts as returned, and with every message read, a declared code
// never returned is reported (before, the unread message kept the warning
// back for every code).
func TestErrorCodeFromLocalReturned(t *testing.T) {
	src := "-- X fails.\n-- @key k\n-- @return int64\n-- @error NOT_HELD not held\n-- @error GONE gone\n" +
		"local CODE = 'NOT_HELD x'\nif redis.call('INCR', KEYS[1]) > 5 then return redis.error_reply(CODE) end\nreturn 1\n"
	checkWarnings(t, src, []string{"scripts/x.lua:5:11: warning: @error GONE is declared but the script never returns it (return redis.error_reply('GONE ...'))"})
	src = "-- X fails.\n-- @key k\n-- @return int64\n-- @error NOT_HELD not held\n" +
		"local CODE = 'NOT_HELD x'\nif redis.call('INCR', KEYS[1]) > 5 then return redis.error_reply(CODE) end\nreturn 1\n"
	checkWarnings(t, src, nil)
}
