package gen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRedisCallAsValue: redis.call reached other than by a direct call
// escapes the command, key and @readonly checks; a @readonly script's
// container command needs a literal subcommand to be checked.
func TestRedisCallAsValue(t *testing.T) {
	const hint = "the checker cannot see what it runs (command, keys, writes); call it directly: redis.call('CMD', ...), or redis.pcall('CMD', ...) for a protected call"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "pcall(redis.call, ...) in a readonly script",
			src:  "-- @readonly\n-- @key k\n-- @return none\npcall(redis.call, 'DEL', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:7: redis.call is used as a value, not called: " + hint},
		},
		{
			name: "redis.call in a local",
			src:  "-- @return none\nlocal call = redis.call\ncall('SET', 'not_a_key', 'x')\n",
			want: []string{"scripts/x.lua:2:14: redis.call is used as a value, not called: " + hint},
		},
		{
			name: "redis.pcall passed on",
			src:  "-- @key k\n-- @return none\nlocal function f(g) return g('DEL', KEYS[1]) end\nf(redis.pcall)\n",
			want: []string{"scripts/x.lua:4:3: redis.pcall is used as a value, not called: " + hint},
		},
		{
			name: "redis in a local",
			src:  "-- @return none\nlocal r = redis\nr.call('SET', 'x', 'y')\n",
			want: []string{"scripts/x.lua:2:11: redis is used as a value, not called: " + hint},
		},
		{
			name: "computed function name",
			src:  "-- @key k\n-- @arg f string\n-- @return none\nredis[ARGV[1]]('DEL', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:1: redis[...] is used as a value, not called: " + hint},
		},
		{
			name: "redis.call through _G",
			src:  "-- @readonly\n-- @return none\n_G.redis.call('DEL', 'x')\n",
			want: []string{"scripts/x.lua:3:1: _G reaches redis.call, or runs code, out of the checker's sight (its command, keys and writes go unchecked): call redis.call('CMD', ...) directly"},
		},
		{
			name: "redis.call through getfenv",
			src:  "-- @return none\nlocal r = getfenv(1).redis\nr.call('DEL', 'x')\n",
			want: []string{"scripts/x.lua:2:11: getfenv reaches redis.call, or runs code, out of the checker's sight (its command, keys and writes go unchecked): call redis.call('CMD', ...) directly"},
		},
		{
			name: "code compiled at run time",
			src:  "-- @return none\nloadstring(\"redis.call('DEL', 'x')\")()\n",
			want: []string{"scripts/x.lua:2:1: loadstring reaches redis.call, or runs code, out of the checker's sight (its command, keys and writes go unchecked): call redis.call('CMD', ...) directly"},
		},
		{
			name: "readonly container with a computed subcommand",
			src:  "-- @readonly\n-- @key k\n-- @arg sub string\n-- @return none\nredis.call('XGROUP', ARGV[1], KEYS[1], 'g', '$')\n",
			want: []string{"scripts/x.lua:5:22: @readonly script calls XGROUP with the subcommand ARGV[1], not a literal: the checker cannot tell whether it writes; write the subcommand as a string literal (or remove @readonly)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
	for _, src := range []string{
		"-- @key k\n-- @return none\nlocal ok = pcall(function() return redis.call('GET', KEYS[1]) end)\nredis.log(redis.LOG_WARNING, 'x')\n",
		"-- @readonly\n-- @key k\n-- @return none\nredis.call('XINFO', 'STREAM', KEYS[1])\n",
	} {
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); got != nil {
			t.Errorf("rejected %q:\n%v", src, got)
		}
	}
}

// TestLibraryFields: a field Lua 5.1's libraries (or Redis's) do not have
// is refused with what to use instead, and so is an assignment to a field
// of the read-only redis table or a library.
func TestLibraryFields(t *testing.T) {
	const nilCall = "it is nil, and calling it fails at run time"
	const readOnly = "Redis 7 makes the redis table and the libraries read-only, so it fails at run time (\"Attempt to modify a readonly table\"); keep the value in a local"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "later Lua's functions",
			src: "-- @key k\n-- @arg v string\n-- @return int64\nredis.call('DEL', table.unpack({KEYS[1]}))\nlocal n = math.tointeger(ARGV[1])\n" +
				"local b = string.pack('>I4', 1)\nreturn n\n",
			want: []string{
				"scripts/x.lua:4:25: table.unpack is not a field of Lua 5.1's table library, which Redis runs: " + nilCall + ` ("attempt to call field 'unpack' (a nil value)"); unpack is a global in Lua 5.1: use unpack(t)`,
				"scripts/x.lua:5:16: math.tointeger is not a field of Lua 5.1's math library, which Redis runs: " + nilCall + ` ("attempt to call field 'tointeger' (a nil value)"); Lua 5.1 numbers are doubles: round with math.floor`,
				"scripts/x.lua:6:18: string.pack is not a field of Lua 5.1's string library, which Redis runs: " + nilCall + ` ("attempt to call field 'pack' (a nil value)"); use struct.pack`,
			},
		},
		{
			name: "misspelt functions",
			src:  "-- @arg v string\n-- @return string\nlocal t = cjson.decod(ARGV[1])\nreturn string.formatt('%s', t.x)\n",
			want: []string{
				"scripts/x.lua:3:17: cjson.decod is not a field of the cjson library of Redis's scripts: " + nilCall + ` ("attempt to call field 'decod' (a nil value)"); did you mean cjson.decode?`,
				"scripts/x.lua:4:15: string.formatt is not a field of Lua 5.1's string library, which Redis runs: " + nilCall + ` ("attempt to call field 'formatt' (a nil value)"); did you mean string.format?`,
			},
		},
		{
			name: "arguments Lua 5.1 ignores",
			src: "-- @key k\n-- @arg n int64\n-- @return string\nlocal bits = math.log(tonumber(ARGV[1]), 2) + math.atan(1, 2) + math.log(8)\n" +
				"return string.rep('a', 3, ',') .. string.rep(redis.call('GET', KEYS[1]), 2) .. bits\n",
			want: []string{
				"scripts/x.lua:4:19: math.log takes one argument in Lua 5.1, which Redis runs, and gives the natural logarithm: it ignores the base, so math.log(8, 2) is 2.08, not 3; divide instead: math.log(x) / math.log(base)",
				"scripts/x.lua:4:52: math.atan takes one argument in Lua 5.1, which Redis runs: it ignores the second, so math.atan(y, x) is the arc tangent of y alone; use math.atan2(y, x)",
				`scripts/x.lua:5:15: string.rep takes two arguments in Lua 5.1, which Redis runs: it ignores the separator, so string.rep('a', 3, ',') is "aaa"; join the copies with table.concat instead`,
			},
		},
		{
			name: "assignments to read-only tables",
			src:  "-- @arg name string\n-- @return none\nstring.trim = function(s) return s end\nredis.foo = 1\nredis[ARGV[1]] = 2\n",
			want: []string{
				"scripts/x.lua:3:1: assignment to string.trim: " + readOnly,
				"scripts/x.lua:4:1: assignment to redis.foo: " + readOnly,
				"scripts/x.lua:5:1: assignment to redis[...]: " + readOnly,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
	for _, src := range []string{
		"-- @key k\n-- @return int64\nredis.call('DEL', unpack({KEYS[1]}))\nlocal s = string\nlocal n = s and 1 or math.floor(1.5)\nlocal t = {}\nt[1] = 'x'\nreturn n + bit.band(1, 3) + struct.size('>I4') + #cjson.encode({})\n",
	} {
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); got != nil {
			t.Errorf("rejected %q:\n%v", src, got)
		}
	}
}

// TestRedisLibCalls: calls of the redis table's functions that Redis fails
// every time are refused with its error.
func TestRedisLibCalls(t *testing.T) {
	src := "-- @return int64\nredis.log(redis.LOG_NOTICE)\nredis.log('x', 'y')\nredis.log(-1, 'y')\nredis.setresp(4)\n" +
		"local h = redis.sha1hex()\nredis.log(redis.LOG_WARNING, unpack({'a', 'b'}))\nredis.log(redis.LOG_DEBUG, 'ok')\nreturn redis.error_reply(42)\n"
	want := []string{
		`scripts/x.lua:2:1: redis.log takes 2 or more arguments, and the call gives 1: Redis fails the script at run time ("redis.log() requires two arguments or more.")`,
		`scripts/x.lua:3:1: the log level of redis.log is "x", a string: Redis fails the script at run time ("First argument must be a number (log level)"); use redis.LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE or LOG_WARNING`,
		`scripts/x.lua:4:1: the log level of redis.log is -1: Redis fails the script at run time ("Invalid debug level."); use redis.LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE or LOG_WARNING`,
		`scripts/x.lua:5:1: redis.setresp(4): Redis fails the script at run time ("RESP version must be 2 or 3.")`,
		`scripts/x.lua:6:11: redis.sha1hex takes 1 argument, and the call gives 0: Redis fails the script at run time ("wrong number of arguments")`,
		`scripts/x.lua:9:8: redis.error_reply takes one string, and the call gives the number 42: it makes the error reply "wrong number or type of arguments" instead; give it one string`,
	}
	got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checker output (-want +got):\n%s", diff)
	}
}
