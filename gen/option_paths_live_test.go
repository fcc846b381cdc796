package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestOptionPathsAgreeWithServer: a call of a local function last among a
// command's arguments gives it the values of the return its run takes:
// the options are checked with each, as written in place. Refused where
// every return gives an option Redis refuses, warned of where some do
// (the run here takes such a path, and the server refuses the call), and
// taken where none does.
func TestOptionPathsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		syntax   = "syntax error"
		both     = `SET takes one of EX, EXAT, KEEPTTL, PX or PXAT, and the call gives EX and PX: Redis refuses the call`
		every    = "scripts/x.lua:6:45: " + both + " (the last argument is a call of a local function: on every path)"
		some     = "scripts/x.lua:6:45: warning: " + both + ", on the paths where the last argument, a call of a local function, gives those values"
		novalue  = `scripts/x.lua:6:33: warning: SET's option PX takes a value after it, and the call gives 0: Redis refuses the call ("ERR syntax error"), on the paths where the last argument, a call of a local function, gives those values`
		pxOrNX   = "if ARGV[1] == '1' then return 'PX', '100' end return 'NX'"
		pxOrNone = "if ARGV[1] == '1' then return 'PX', '100' end"
	)
	for _, tc := range []struct {
		name, fn, call, want, server string // server: part of Redis's error, "" for none
	}{
		{"one path", "return 'PX', ARGV[1]", "'EX', '10', f()", every, syntax},
		{"every path", "if ARGV[1] == '1' then return 'PX', '100' end return 'PXAT', '100'", "'EX', '10', f()", every + "\n" + strings.Replace(every, "EX and PX", "EX and PXAT", 1), syntax},
		{"some paths, their values counted apart", pxOrNX, "'EX', '10', f()", some, syntax},
		{"some paths, one returning nothing", pxOrNone, "'EX', '10', f()", some, syntax},
		{"a value missing on some paths", "if ARGV[1] == '1' then return 'PX' end return 'PX', '100'", "f()", novalue, syntax},
		{"none", pxOrNX, "f()", "", ""},
		{"none, one returning nothing", pxOrNone, "f()", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal function f() " + tc.fn + " end\n\nredis.call('SET', KEYS[1], 'v', " + tc.call + ")\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "1")
		})
	}
}
