package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCallWithoutArgumentsAgreesWithServer: redis.call() names no command,
// and Redis fails the script with "Please specify at least one argument for
// this redis lib call"; redis.pcall() gives that error as a table instead,
// every time. The checker must refuse both.
func TestCallWithoutArgumentsAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const fails = "Please specify at least one argument for this redis lib call"
	for _, tc := range []struct {
		name, body, want string
		failed           bool // whether the server fails the script
	}{
		{"redis.call", "redis.call('GET', KEYS[1])\nreturn redis.call()",
			`scripts/x.lua:5:8: redis.call takes 1 or more arguments, and the call gives 0: Redis fails the script at run time ("` + fails + `")`, true},
		{"redis.pcall", "redis.call('GET', KEYS[1])\nlocal r = redis.pcall()\nreturn r.err",
			`scripts/x.lua:5:11: redis.pcall takes 1 or more arguments, the command first, and the call gives 0: it gives the error reply "` + fails + `" every time, running nothing; name the command`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X calls.\n-- @key k\n-- @return string?\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			s, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToString()
			if tc.failed && (err == nil || !strings.Contains(err.Error(), fails)) {
				t.Errorf("the server replied %q, %v; want an error with %q", s, err, fails)
			}
			if !tc.failed && (err != nil || !strings.Contains(s, fails)) {
				t.Errorf("the server replied %q, %v; want the error's text", s, err)
			}
		})
	}
}

// TestCallWithoutCommandNameAgreesWithServer: redis.call with an empty
// string or a number for the command names no command, and Redis fails the
// script ("Unknown Redis command called from script"): the checker must say
// so, not that the name is no literal (which asks for @commands, which
// cannot help).
func TestCallWithoutCommandNameAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const fails = "Unknown Redis command called from script"
	for _, tc := range []struct{ name, want string }{
		{"''", `scripts/x.lua:4:19: unknown Redis command "": Redis fails the script at run time ("` + fails + `"); name the command as a string`},
		{"1", `scripts/x.lua:4:19: unknown Redis command 1: Redis fails the script at run time ("` + fails + `"); name the command as a string`},
	} {
		src := "-- X calls.\n-- @key k\n-- @return string?\nreturn redis.call(" + tc.name + ", KEYS[1])\n"
		if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
		err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).Error()
		if err == nil || !strings.Contains(err.Error(), fails) {
			t.Errorf("%s: the server replied %v; want an error with %q", tc.name, err, fails)
		}
	}
}

// TestCallCommandNameNotStringAgreesWithServer: redis.call with nil, a
// boolean or a table for the command fails the script ("Lua redis lib
// command arguments must be strings or integers"), and with a negative
// number names no command: the checker must say so, as it does of such an
// argument, not that the name is no literal (asking for @commands, which
// cannot help: with @commands it said the name is no @arg).
func TestCallCommandNameNotStringAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const notString = "Lua redis lib command arguments must be strings or integers"
	for _, tc := range []struct{ name, want, fails string }{
		{"nil", `scripts/x.lua:5:19: the command name of redis.call is nil: Redis refuses it at run time ("` + notString + `"); name the command as a string`, notString},
		{"true", `scripts/x.lua:5:19: the command name of redis.call is true: Redis refuses it at run time ("` + notString + `"); name the command as a string`, notString},
		{"KEYS[1] == 'x'", `scripts/x.lua:5:19: the command name of redis.call is a comparison, true or false: Redis refuses it at run time ("` + notString + `"); name the command as a string`, notString},
		{"{}", `scripts/x.lua:5:19: the command name of redis.call is a table: Redis refuses it at run time ("` + notString + `"); name the command as a string`, notString},
		{"-1", `scripts/x.lua:5:19: unknown Redis command -1: Redis fails the script at run time ("Unknown Redis command called from script"); name the command as a string`, "Unknown Redis command called from script"},
	} {
		for _, commands := range []string{"", "-- @commands get\n"} {
			src := "-- X calls.\n-- @key k\n" + commands + "-- @return string?\nreturn redis.call(" + tc.name + ", KEYS[1])\n"
			want := tc.want
			if commands == "" {
				want = strings.Replace(want, "x.lua:5:", "x.lua:4:", 1)
			}
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != want {
				t.Errorf("%s %q: checker:\n%s\nwant:\n%s", tc.name, commands, got, want)
			}
			err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).Error()
			if err == nil || !strings.Contains(err.Error(), tc.fails) {
				t.Errorf("%s: the server replied %v; want an error with %q", tc.name, err, tc.fails)
			}
		}
	}
}
