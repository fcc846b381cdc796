package gen

import (
	"strings"
	"testing"
)

// TestErrorCodeFromFormat: an error reply made with string.format (or a
// literal's :format) from a literal format starts with the format's text, so
// its code is read as a literal's: one not declared with @error is refused,
// a declared one counts as returned. Before, such a site passed unread, and
// also kept the "declared but never returned" warning from any code.
func TestErrorCodeFromFormat(t *testing.T) {
	src := "-- X fails.\n-- @key k\n-- @return int64\n-- @error NOT_HELD  not held\n" +
		"if redis.call('INCR', KEYS[1]) > 5 then return redis.error_reply(string.format('BAD_THING %d', 5)) end\n" +
		"if redis.call('INCR', KEYS[1]) > 6 then return redis.error_reply(('OTHER_ONE %s'):format('x')) end\n" +
		"if redis.call('INCR', KEYS[1]) > 7 then return redis.error_reply(string.format('NOT_HELD %d%%', 5)) end\n" +
		"return 1\n"
	want := []string{
		"scripts/x.lua:5:48: error code BAD_THING is not declared with @error (-- @error BAD_THING <message>; callers get ErrBadThing)",
		"scripts/x.lua:6:48: error code OTHER_ONE is not declared with @error (-- @error OTHER_ONE <message>; callers get ErrOtherOne)",
	}
	if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("checker:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A format that starts with a directive names no code: as before.
	src = "-- X fails.\n-- @key k\n-- @arg code string\n-- @return int64\nif redis.call('INCR', KEYS[1]) > 5 then return redis.error_reply(string.format('%s failed', ARGV[1])) end\nreturn 1\n"
	if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); len(got) != 0 {
		t.Errorf("a format starting with a directive: checker refused: %v", got)
	}
}
