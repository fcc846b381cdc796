package gen

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkOne generates a package of the given files and returns the checker's
// lines (nil when generation succeeds).
func checkFiles(t *testing.T, files ...File) []string {
	t.Helper()
	_, err := Generate("generated", files)
	if err == nil {
		return nil
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Generate: %v (not checker errors)", err)
	}
	// Warnings have their own golden cases; these tests look at errors.
	var lines []string
	for _, e := range errs {
		if !e.Warning {
			lines = append(lines, e.Error())
		}
	}
	return lines
}

func TestCheckRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		src  string
		want []string
	}{
		{
			name: "unknown directive",
			src:  "-- @key k\n-- @foo bar\n-- @return none\nreturn redis.call('GET', KEYS[1])\n",
			want: []string{"scripts/x.lua:2:4: unknown directive @foo"},
		},
		{
			name: "unknown arg type",
			src:  "-- @arg n int32\n-- @return none\nreturn ARGV[1]\n",
			want: []string{`scripts/x.lua:1:11: unknown type "int32": argument types are string, bytes, int64, float64, bool, duration (sent as milliseconds), time (sent as unix milliseconds)`},
		},
		{
			name: "nullable arg type",
			src:  "-- @arg n int64?\n-- @return none\nreturn ARGV[1]\n",
			want: []string{`scripts/x.lua:1:11: argument types cannot be nullable: "int64?"`},
		},
		{
			name: "unknown return type",
			src:  "-- @return list\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:12: unknown type "list": reply types are none, string, bytes, int64, float64, bool, []string, []int64, map[string]string, a record {name type, ...} of string, bytes, int64, float64 or bool fields; add ? for a nullable reply`},
		},
		{
			name: "none nullable",
			src:  "-- @return none?\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:12: type none cannot be nullable`},
		},
		{
			name: "record field type",
			src:  "-- @return {a int64, b []string}\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:12: record field b: type "[]string" is not allowed in a record (want string, bytes, int64, float64 or bool)`},
		},
		{
			name: "record syntax",
			src:  "-- @return {a int64 b}\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:12: malformed record field "a int64 b": want name type`},
		},
		{
			name: "record unterminated",
			src:  "-- @return {a int64\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:12: record type "{a int64" has no closing }`},
		},
		{
			name: "missing return",
			src:  "-- @key k\nreturn redis.call('GET', KEYS[1])\n",
			want: []string{`scripts/x.lua:1:1: missing @return (use "@return none" for a script without a reply)`},
		},
		{
			name: "duplicate return",
			src:  "-- @return none\n-- @return int64\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:2:4: duplicate @return (first at line 1)`},
		},
		{
			name: "arg without type",
			src:  "-- @arg n\n-- @return none\nreturn ARGV[1]\n",
			want: []string{`scripts/x.lua:1:4: @arg n needs a type`},
		},
		{
			name: "invalid key name",
			src:  "-- @key lock-name\n-- @return none\nreturn KEYS[1]\n",
			want: []string{`scripts/x.lua:1:9: invalid key name "lock-name"`},
		},
		{
			name: "duplicate parameter",
			src:  "-- @key lock\n-- @arg lock string\n-- @return none\nreturn KEYS[1] .. ARGV[1]\n",
			want: []string{`scripts/x.lua:2:9: duplicate parameter name "lock"`},
		},
		{
			name: "parameters equal in Go",
			src:  "-- @arg lock_id string\n-- @arg lockID string\n-- @return none\nreturn ARGV[1] .. ARGV[2]\n",
			want: []string{`scripts/x.lua:2:9: parameter names "lock_id" and "lockID" are the same in Go (LockID)`},
		},
		{
			name: "variadic key not last",
			src:  "-- @key rest...\n-- @key last\n-- @return none\nreturn KEYS[1]\n",
			want: []string{`scripts/x.lua:1:9: variadic key "rest" must be the last key`},
		},
		{
			name: "variadic arg not last",
			src:  "-- @arg rest... string\n-- @arg last string\n-- @return none\nreturn ARGV[1]\n",
			want: []string{`scripts/x.lua:1:9: variadic arg "rest" must be the last arg`},
		},
		{
			name: "invalid name",
			src:  "-- @name lower\n-- @return none\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:10: invalid @name "lower": want an exported Go identifier`},
		},
		{
			name: "bad file name",
			file: "scripts/1st.lua",
			src:  "-- @return none\nreturn 'OK'\n",
			want: []string{`scripts/1st.lua:1:1: file name "1st.lua" gives no valid script name: add @name`},
		},
		{
			name: "reserved name",
			src:  "-- @name Preload\n-- @return none\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:10: script name "Preload" is reserved by the generated package`},
		},
		{
			name: "invalid error code",
			src:  "-- @error over_limit too many\n-- @return none\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:11: invalid error code "over_limit": want UPPER_SNAKE_CASE`},
		},
		{
			name: "error without message",
			src:  "-- @error OVER_LIMIT\n-- @return none\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:4: @error OVER_LIMIT needs a message`},
		},
		{
			name: "reserved error code",
			src:  "-- @error CROSS_SLOT no\n-- @return none\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:11: @error CROSS_SLOT is reserved by the generated package (ErrCrossSlot)`},
		},
		{
			name: "directive after the leading block",
			src:  "-- @return none\nlocal x = 'OK'\n-- @key k\nreturn x\n",
			want: []string{`scripts/x.lua:3:4: directive @key must be in the leading comment block`},
		},
		{
			name: "KEYS beyond declared",
			src:  "-- @key a\n-- @key b\n-- @return none\nredis.call('GET', KEYS[1])\nredis.call('GET', KEYS[2])\nreturn redis.call('GET', KEYS[3])\n",
			want: []string{`scripts/x.lua:6:26: KEYS[3] is used but only 2 keys are declared`},
		},
		{
			name: "ARGV with none declared",
			src:  "-- @return none\nreturn ARGV[1]\n",
			want: []string{`scripts/x.lua:2:8: ARGV[1] is used but no args are declared`},
		},
		{
			name: "key never used",
			src:  "-- @key a\n-- @key x\n-- @return none\nreturn redis.call('GET', KEYS[1])\n",
			want: []string{`scripts/x.lua:2:9: key "x" (KEYS[2]) is declared but never used`},
		},
		{
			name: "variadic arg never used",
			src:  "-- @arg rest... string\n-- @return none\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:1:9: arg "rest" (ARGV[1]...) is declared but never used`},
		},
		{
			name: "dynamic KEYS index",
			src:  "-- @key a\n-- @return none\nfor i = 1, 2 do redis.call('DEL', KEYS[i]) end\n",
			want: []string{`scripts/x.lua:3:35: dynamic KEYS index needs a variadic @key`},
		},
		{
			name: "zero index",
			src:  "-- @key a\n-- @return none\nreturn KEYS[0] .. KEYS[1]\n",
			want: []string{`scripts/x.lua:3:8: KEYS[0] is not a valid index: Lua arrays start at 1`},
		},
		{
			name: "literal key",
			src:  "-- @return none\nreturn redis.call(\"GET\", \"foo\")\n",
			want: []string{`scripts/x.lua:2:26: key position of GET holds the literal "foo": pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "concatenated literal key",
			src:  "-- @arg id string\n-- @return none\nreturn redis.pcall('hget', 'lock:' .. ARGV[1], 'f')\n",
			want: []string{`scripts/x.lua:3:28: key position of HGET holds the literal "lock:": pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "literal keys of a variadic-key command",
			src:  "-- @key a\n-- @return none\nreturn redis.call('MSET', KEYS[1], 'v', 'b', 'v')\n",
			want: []string{`scripts/x.lua:3:41: key position of MSET holds the literal "b": pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "SORT STORE destination from ARGV",
			src:  "-- @key k\n-- @arg dst string\n-- @return int64\nreturn redis.call('SORT', KEYS[1], 'LIMIT', 0, 10, 'STORE', ARGV[1])\n",
			want: []string{`scripts/x.lua:4:61: key position of SORT holds ARGV[1], an argument: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			// "GET" is the destination, not SORT's GET option (which Redis Cluster
			// refuses), and a literal key like any other.
			name: "SORT STORE destination named GET",
			src:  "-- @key k\n-- @return none\nredis.call('SORT', KEYS[1], 'STORE', 'GET')\nreturn nil\n",
			want: []string{`scripts/x.lua:3:38: key position of SORT holds the literal "GET": pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "XREAD stream from ARGV after a number argument",
			src:  "-- @key k\n-- @arg n int64\n-- @arg ms duration\n-- @arg s string\n-- @return none\nredis.call('XREAD', 'COUNT', ARGV[1], 'STREAMS', KEYS[1], ARGV[3], '0', '0')\nredis.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', ARGV[2], 'STREAMS', ARGV[3], '>')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:6:59: key position of XREAD holds ARGV[3], an argument: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`,
				`scripts/x.lua:7:74: key position of XREADGROUP holds ARGV[3], an argument: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`,
			},
		},
		{
			name: "reply shapes an option chooses",
			src: "-- @key k\n-- @key d\n-- @arg pick string\n-- @return int64?\n" +
				"if ARGV[1] == 'a' then return redis.call('ZADD', KEYS[1], 'INCR', 1, 'm') end\n" +
				"if ARGV[1] == 'b' then return redis.call('SORT', KEYS[1]) end\n" +
				"if ARGV[1] == 'c' then return redis.call('LCS', KEYS[1], KEYS[2]) end\n" +
				"return redis.call('LPOS', KEYS[1], 'm', 'COUNT', 2)\n",
			want: []string{
				"scripts/x.lua:5:31: ZADD with INCR replies a string, but @return int64? needs an integer reply",
				"scripts/x.lua:6:31: SORT without STORE replies an array, but @return int64? needs an integer reply",
				"scripts/x.lua:7:31: LCS without IDX or LEN replies a string, but @return int64? needs an integer reply",
				"scripts/x.lua:8:8: LPOS with COUNT replies an array, but @return int64? needs an integer reply",
			},
		},
		{
			name: "list reply of a call that stores",
			src:  "-- @key k\n-- @key d\n-- @return []string?\nif redis.call('EXISTS', KEYS[2]) == 1 then return redis.call('LPOS', KEYS[1], 'm') end\nreturn redis.call('GEORADIUS', KEYS[1], 0, 0, 10, 'km', 'STOREDIST', KEYS[2])\n",
			want: []string{
				"scripts/x.lua:4:51: LPOS without COUNT replies an integer or nil, but @return []string? needs an array reply",
				"scripts/x.lua:5:8: GEORADIUS with STOREDIST replies an integer, but @return []string? needs an array reply",
			},
		},
		{
			name: "list elements of the other kind",
			src: "-- @key k\n-- @arg pick string\n-- @return []int64\nif ARGV[1] == 'a' then return redis.call('SMEMBERS', KEYS[1]) end\n" +
				"local t = redis.call('LRANGE', KEYS[1], 0, 9)\nreturn t\n",
			want: []string{
				"scripts/x.lua:4:31: SMEMBERS replies an array of strings, but @return []int64 reads integers: the callers get a *DecodeError whenever the list holds a value; declare @return []string, or convert the values in the script (tonumber)",
				"scripts/x.lua:6:8: returns t, assigned at line 5: LRANGE replies an array of strings, but @return []int64 reads integers: the callers get a *DecodeError whenever the list holds a value; declare @return []string, or convert the values in the script (tonumber)",
			},
		},
		{
			name: "list elements of the other kind for a record's fields",
			src: "-- @key k\n-- @arg pick string\n-- @return {a int64, b bool?}\nif ARGV[1] == 'a' then return redis.call('LRANGE', KEYS[1], 0, 1) end\n" +
				"return redis.call('SMISMEMBER', KEYS[1], 'x', 'y')\n",
			want: []string{
				"scripts/x.lua:4:31: LRANGE replies an array of strings, but @return {a int64, b bool?} reads field a as an integer: the callers get a *DecodeError whenever the reply holds a value there; declare it string, or convert the values in the script (tonumber)",
			},
		},
		{
			// A bool field reads a missing field's nil, and fails on a value.
			name: "string list elements for a record's bool field",
			src:  "-- @key k\n-- @return {a string?, b bool}\nreturn redis.call('HMGET', KEYS[1], 'a', 'b')\n",
			want: []string{"scripts/x.lua:3:8: HMGET replies an array of strings, but @return {a string?, b bool} reads field b as a bool: the callers get a *DecodeError whenever the reply holds a value there; declare it string, or convert the values in the script (tonumber)"},
		},
		{
			name: "integer list elements for a record's string field",
			src:  "-- @key k\n-- @return {a int64, b string}\nreturn redis.call('SMISMEMBER', KEYS[1], 'a', 'b')\n",
			want: []string{"scripts/x.lua:3:8: SMISMEMBER replies an array of integers, but @return {a int64, b string} reads field b as a string: the callers get a *DecodeError whenever the reply holds a value there; declare it int64, or convert the values in the script (tostring)"},
		},
		{
			name: "integer list elements for strings",
			src:  "-- @key k\n-- @return []string\nreturn redis.call('SMISMEMBER', KEYS[1], 'a', 'b')\n",
			want: []string{"scripts/x.lua:3:8: SMISMEMBER replies an array of integers, but @return []string reads strings: the callers get a *DecodeError whenever the list holds a value; declare @return []int64, or convert the values in the script (tostring)"},
		},
		{
			name: "list holding arrays",
			src: "-- @key k\n-- @arg pick string\n-- @return []string\nif ARGV[1] == 'a' then return redis.call('XRANGE', KEYS[1], '-', '+') end\n" +
				"local r = redis.call('SSCAN', KEYS[1], 0)\nreturn r\n",
			want: []string{
				"scripts/x.lua:4:31: XRANGE replies an array holding arrays (entries: an ID and its fields), but @return []string reads no array in an array: the callers get a *DecodeError whenever it holds one; build the reply in the script from the values it needs",
				"scripts/x.lua:6:8: returns r, assigned at line 5: SSCAN replies an array holding arrays (the cursor, then the members), but @return []string reads no array in an array: the callers get a *DecodeError whenever it holds one; build the reply in the script from the values it needs",
			},
		},
		{
			name: "MIGRATE keys after KEYS from ARGV",
			src:  "-- @key k\n-- @arg d string\n-- @return none\nredis.call('MIGRATE', 'h', 6380, '', 0, 100, 'KEYS', KEYS[1], ARGV[1])\nreturn nil\n",
			want: []string{`scripts/x.lua:4:63: key position of MIGRATE holds ARGV[1], an argument: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "key of a function replaced after the function",
			src:  "-- @key k\n-- @arg a string\n-- @return none\nlocal key = KEYS[1]\nlocal function del() redis.call('DEL', key) end\nkey = ARGV[1]\ndel()\nreturn nil\n",
			want: []string{`scripts/x.lua:5:40: key position of DEL holds key, an argument: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "replies of commands in a returned table",
			src: "-- @key k\n-- @arg pick string\n-- @return {a string, b int64}\nif ARGV[1] == 'a' then return {'a', redis.call('GET', KEYS[1])} end\n" +
				"local all = redis.call('HGETALL', KEYS[1])\nreturn {'a', all}\n",
			want: []string{
				"scripts/x.lua:4:31: returns an array with the reply of GET (a string or nil) at [1], but field b of @return {a string, b int64} needs an integer reply",
				"scripts/x.lua:6:8: returns an array with all, the reply of HGETALL (an array) at [1], but field b of @return {a string, b int64} needs an integer reply",
			},
		},
		{
			name: "reply of a command in a returned table, by its words",
			src:  "-- @key k\n-- @return {a string, n int64?}\nreturn {'a', redis.call('ZADD', KEYS[1], 'INCR', 1, 'm')}\n",
			want: []string{"scripts/x.lua:3:8: returns an array with the reply of ZADD with INCR (a string) at [1], but field n of @return {a string, n int64?} needs an integer reply"},
		},
		{
			name: "reply of a command in a returned list",
			src:  "-- @key k\n-- @return []int64\nreturn {redis.call('TTL', KEYS[1]), redis.call('INCRBYFLOAT', KEYS[1], 1)}\n",
			want: []string{"scripts/x.lua:3:8: returns an array with the reply of INCRBYFLOAT (a string) at [1], but @return []int64 needs an integer reply for each element"},
		},
		{
			name: "key a local function is passed",
			src:  "-- @key k\n-- @arg a string\n-- @return none\nlocal function del(x, v)\n  redis.call('DEL', x)\n  redis.call('SET', KEYS[1], v)\nend\ndel(KEYS[1], 'v')\ndel(ARGV[1], ARGV[1])\nreturn nil\n",
			want: []string{`scripts/x.lua:5:21: key position of DEL holds x, an argument: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "keys unpacked from ARGV",
			src:  "-- @key k\n-- @arg names... string\n-- @return int64\nlocal n = redis.call('EXISTS', KEYS[1])\nreturn n + redis.call('DEL', unpack(ARGV))\n",
			want: []string{`scripts/x.lua:5:30: key position of DEL holds unpack(ARGV), the arguments: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "keys unpacked from ARGV after a key",
			src:  "-- @key k\n-- @arg names... string\n-- @return int64\nreturn redis.call('DEL', KEYS[1], unpack(ARGV, 1))\n",
			want: []string{`scripts/x.lua:4:35: key position of DEL holds unpack(ARGV), the arguments: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "bool from an integer other than 1 and 0",
			src:  "-- @key k\n-- @return bool\nif redis.call('EXISTS', KEYS[1]) == 1 then return 2 end\nreturn 0\n",
			want: []string{`scripts/x.lua:3:51: returns an integer (2), but @return bool reads only 1 (true) and 0 or nil (false)`},
		},
		{
			name: "record missing a field",
			src:  "-- @key k\n-- @return {ttl int64, owner string}\nlocal ttl = redis.call('PTTL', KEYS[1])\nif ttl < 0 then return {ttl} end\nreturn {ttl, redis.call('GET', KEYS[1])}\n",
			want: []string{
				`scripts/x.lua:4:24: returns an array of 1 value, but @return {ttl int64, owner string} needs field owner at [1]: declare it owner string? if it may be missing`,
				// GET replies nil for a missing key.
				`scripts/x.lua:5:8: returns an array with the reply of GET (a string or nil) at [1], which is nil when GET replies nil, but field owner of @return {ttl int64, owner string} reads no nil there: the callers get a *DecodeError then; declare it owner string?`,
			},
		},
		{
			name: "local key replaced by a literal on one path",
			src:  "-- @key k\n-- @arg other string\n-- @return none\nlocal key = KEYS[1]\nif ARGV[1] ~= '' then key = 'fallback' end\nreturn redis.call('GET', key)\n",
			want: []string{`scripts/x.lua:6:26: key position of GET holds the literal "fallback": pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "local key replaced by an argument on one path",
			src:  "-- @key k\n-- @arg other string\n-- @return none\nlocal key = KEYS[1]\nif redis.call('EXISTS', key) == 0 then key = ARGV[1] end\nreturn redis.call('GET', key)\n",
			want: []string{`scripts/x.lua:6:26: key position of GET holds ARGV[1], an argument: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "command newer than Redis 7.0",
			src:  "-- @return []int64\nreturn redis.call('WAITAOF', 1, 0, 0)\n",
			want: []string{`scripts/x.lua:2:19: WAITAOF is not in Redis 7.0 (it is in the specifications since 7.2.0): scripts must run on Redis 7.0`},
		},
		{
			name: "subcommand newer than Redis 7.0",
			src:  "-- @return string\nreturn redis.call('CLUSTER', 'MYSHARDID')\n",
			want: []string{`scripts/x.lua:2:19: CLUSTER MYSHARDID is not in Redis 7.0 (it is in the specifications since 7.2.0): scripts must run on Redis 7.0`},
		},
		{
			name: "arity of Redis 7.0",
			src:  "-- @key k\n-- @arg m string\n-- @return []string?\nreturn redis.call('ZRANK', KEYS[1], ARGV[1], 'WITHSCORE')\n",
			want: []string{`scripts/x.lua:4:19: wrong number of arguments for ZRANK on Redis 7.0: it takes 2 arguments there (later versions take at least 2 arguments), the call passes 3`},
		},
		{
			name: "subcommand written as one command name",
			src:  "-- @key k\n-- @return string?\nreturn redis.call('object|encoding', 'x', KEYS[1])\n",
			want: []string{`scripts/x.lua:3:19: unknown Redis command "object|encoding": write the subcommand as its own argument: redis.call('OBJECT', 'ENCODING', ...)`},
		},
		{
			name: "comparison returned as an integer",
			src:  "-- @key k\n-- @return int64\nreturn redis.call('EXISTS', KEYS[1]) == 1\n",
			want: []string{`scripts/x.lua:3:8: returns a Lua boolean (true arrives as 1, false as nil), but @return int64 is not nullable: declare @return bool, or @return int64?`},
		},
		{
			name: "negation returned as a string",
			src:  "-- @key k\n-- @return string\nreturn not redis.call('GET', KEYS[1])\n",
			want: []string{`scripts/x.lua:3:8: returns a Lua boolean (true arrives as 1, false as nil), but @return string needs a string reply`},
		},
		{
			name: "key formatted from a literal",
			src:  "-- @arg id string\n-- @return string?\nreturn redis.call('GET', string.format('lock:%s', ARGV[1]))\n",
			want: []string{`scripts/x.lua:3:26: key position of GET holds the literal "lock:%s": pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "key from a method of an argument",
			src:  "-- @arg id string\n-- @return string?\nreturn redis.call('GET', ARGV[1]:lower())\n",
			want: []string{`scripts/x.lua:3:26: key position of GET holds ARGV[1], an argument: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "lua syntax",
			src:  "-- @return none\nlocal x = = 1\n",
			want: []string{`scripts/x.lua:2:11: Lua syntax error near "=": syntax error`},
		},
		{
			name: "goto is not Lua 5.1",
			src:  "-- @key k\n-- @return int64\nlocal n = 0\nfor i = 1, 3 do\n  if i == 2 then goto continue end\n  n = n + redis.call('EXISTS', KEYS[1])\n  ::continue::\nend\nreturn n\n",
			want: []string{
				`scripts/x.lua:5:18: Lua syntax error near "goto": Redis runs Lua 5.1, which has no goto (Lua 5.2)`,
				`scripts/x.lua:7:3: Lua syntax error near "::": Redis runs Lua 5.1, which has no labels (Lua 5.2)`,
			},
		},
		{
			name: "arithmetic returned as a float",
			src:  "-- @arg a float64\n-- @return float64\nreturn ARGV[1] * 1.5\n",
			want: []string{`scripts/x.lua:3:8: returns an integer, but @return float64 needs a string reply: Lua numbers reach the caller as integers; return tostring(...)`},
		},
		{
			name: "negative literal returned as a bool",
			src:  "-- @return bool\nreturn -1\n",
			want: []string{`scripts/x.lua:2:8: returns an integer (-1), but @return bool reads only 1 (true) and 0 or nil (false)`},
		},
		{
			name: "concatenation returned as an integer",
			src:  "-- @arg a string\n-- @return int64\nreturn 'n=' .. ARGV[1]\n",
			want: []string{`scripts/x.lua:3:8: returns a string, but @return int64 needs an integer reply`},
		},
		{
			name: "arguments that are not strings or numbers",
			src: "-- @key k\n-- @arg on string\n-- @return none\nredis.call('SET', KEYS[1], true)\nredis.pcall('HSET', KEYS[1], 'f', {})\n" +
				"redis.call('HSET', KEYS[1], 'on', ARGV[1] == '1')\nredis.call('HSET', KEYS[1], 'off', not ARGV[1])\nreturn redis.call('SET', KEYS[1], nil)\n",
			want: []string{
				`scripts/x.lua:4:28: argument 2 of redis.call is true: Redis refuses it at run time (command arguments must be strings or numbers)`,
				`scripts/x.lua:5:35: argument 3 of redis.pcall is a table: Redis refuses it at run time (command arguments must be strings or numbers)`,
				`scripts/x.lua:6:35: argument 3 of redis.call is a comparison, true or false: Redis refuses it at run time (command arguments must be strings or numbers)`,
				`scripts/x.lua:7:36: argument 3 of redis.call is a comparison, true or false: Redis refuses it at run time (command arguments must be strings or numbers)`,
				`scripts/x.lua:8:35: argument 2 of redis.call is nil: Redis refuses it at run time (command arguments must be strings or numbers)`,
			},
		},
		{
			name: "record field of another type",
			src:  "-- @key k\n-- @return {ttl int64, owner string}\nreturn {redis.call('PTTL', KEYS[1]), 0}\n",
			want: []string{`scripts/x.lua:3:8: returns an array with an integer (0) at [1], but field owner of @return {ttl int64, owner string} needs a string reply`},
		},
		{
			name: "record cut short by nil",
			src:  "-- @key k\n-- @return {ttl int64, owner string?, token int64}\nreturn {redis.call('PTTL', KEYS[1]), nil, 5}\n",
			want: []string{`scripts/x.lua:3:8: returns an array of 1 value, but @return {ttl int64, owner string?, token int64} needs field token at [2]: declare it token int64? if it may be missing`},
		},
		{
			name: "list element of another type",
			src:  "-- @key k\n-- @return []string\nreturn {redis.call('GET', KEYS[1]) or '', 1}\n",
			want: []string{`scripts/x.lua:3:8: returns an array with an integer (1) at [1], but @return []string needs a string reply for each element`},
		},
		{
			name: "integer returned through a local",
			src:  "-- @key k\n-- @return string\nlocal v = redis.call('INCR', KEYS[1])\nreturn v\n",
			want: []string{`scripts/x.lua:4:8: returns v, assigned at line 3: INCR replies an integer, but @return string needs a string reply`},
		},
		{
			name: "nil reply returned through a local",
			src:  "-- @key k\n-- @return string\nlocal owner = redis.pcall('GET', KEYS[1])\nreturn owner\n",
			want: []string{`scripts/x.lua:4:8: returns owner, assigned at line 3: GET replies a string or nil, but @return string is not nullable: declare @return string?`},
		},
		{
			name: "local replaced in sequence before it is returned",
			src:  "-- @key k\n-- @return string\nlocal v = 'none'\nv = redis.call('INCR', KEYS[1])\nreturn v\n",
			want: []string{`scripts/x.lua:5:8: returns v, assigned at line 4: INCR replies an integer, but @return string needs a string reply`},
		},
		{
			name: "literal returned through a local",
			src:  "-- @return bool\nlocal n = 2\nreturn n\n",
			want: []string{`scripts/x.lua:3:8: returns n, assigned at line 2: an integer (2), but @return bool reads only 1 (true) and 0 or nil (false)`},
		},
		{
			name: "local copied from a local",
			src:  "-- @key k\n-- @return int64\nlocal v = redis.call('GET', KEYS[1])\nlocal w = v\nreturn w\n",
			want: []string{`scripts/x.lua:5:8: returns w, assigned at line 3: GET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "local returned before it is replaced",
			src:  "-- @key k\n-- @return int64\nlocal v = redis.call('GET', KEYS[1])\nif v then return v end\nv = 1\nreturn v\n",
			want: []string{`scripts/x.lua:4:18: returns v, assigned at line 3: GET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "local declared without a value",
			src:  "-- @return int64\nlocal v\nreturn v\n",
			want: []string{`scripts/x.lua:3:8: returns v, assigned at line 2: nil, but @return int64 needs an integer reply: declare @return int64? for a nullable reply`},
		},
		{
			name: "bool from a command replying any integer",
			src:  "-- @key k\n-- @return bool\nreturn redis.call('TTL', KEYS[1])\n",
			want: []string{`scripts/x.lua:3:8: TTL replies integers other than 0 and 1, but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`},
		},
		{
			name: "bool from a counter through a local",
			src:  "-- @key k\n-- @return bool\nlocal n = redis.call('INCR', KEYS[1])\nreturn n\n",
			want: []string{`scripts/x.lua:4:8: returns n, assigned at line 3: INCR replies integers other than 0 and 1, but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`},
		},
		{
			name: "local assigned on every path, none fitting",
			src: "-- @key k\n-- @return int64\nlocal v\nif redis.call('EXISTS', KEYS[1]) == 1 then\n" +
				"  v = redis.call('GET', KEYS[1])\nelse\n  v = redis.call('HGET', KEYS[1], 'f')\nend\nreturn v\n",
			want: []string{`scripts/x.lua:9:8: v holds the value assigned at line 3, 5 or 7, depending on the path taken, and none fits: ` +
				`returns v, assigned at line 3: nil, but @return int64 needs an integer reply: declare @return int64? for a nullable reply; ` +
				`returns v, assigned at line 5: GET replies a string or nil, but @return int64 needs an integer reply; ` +
				`returns v, assigned at line 7: HGET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "local replaced in a function, neither value fitting",
			src:  "-- @key k\n-- @return int64\nlocal v = 'none'\nlocal function read() v = redis.call('GET', KEYS[1]) end\nread()\nreturn v\n",
			want: []string{`scripts/x.lua:6:8: v holds the value assigned at line 3 or 4, depending on the path taken, and none fits: ` +
				`returns v, assigned at line 3: a string ("none"), but @return int64 needs an integer reply; ` +
				`returns v, assigned at line 4: GET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "local copied from one assigned in nested blocks",
			src: "-- @key k\n-- @return int64\nlocal v = 'a'\nif redis.call('EXISTS', KEYS[1]) == 1 then v = redis.call('GET', KEYS[1]) end\n" +
				"local w = v\nif redis.call('EXISTS', KEYS[1]) == 0 then w = v end\nreturn w\n",
			want: []string{`scripts/x.lua:7:8: w holds the value assigned at line 3 or 4, depending on the path taken, and none fits: ` +
				`returns w, assigned at line 3: a string ("a"), but @return int64 needs an integer reply; ` +
				`returns w, assigned at line 4: GET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "bool from counters on both paths",
			src: "-- @key a\n-- @key b\n-- @return bool\nlocal n = redis.call('INCR', KEYS[1])\n" +
				"if n > 10 then n = redis.call('DECRBY', KEYS[2], 2) end\nreturn n\n",
			want: []string{`scripts/x.lua:6:8: n holds the value assigned at line 4 or 5, depending on the path taken, and none fits: ` +
				`returns n, assigned at line 4: INCR replies integers other than 0 and 1, but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64; ` +
				`returns n, assigned at line 5: DECRBY replies integers other than 0 and 1, but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`},
		},
		{
			name: "local assigned in a loop",
			src:  "-- @key k\n-- @return int64\nlocal v = 'x'\nfor i = 1, 2 do v = redis.call('GET', KEYS[1]) end\nreturn v\n",
			want: []string{`scripts/x.lua:5:8: v holds the value assigned at line 3 or 4, depending on the path taken, and none fits: ` +
				`returns v, assigned at line 3: a string ("x"), but @return int64 needs an integer reply; ` +
				`returns v, assigned at line 4: GET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "return in a loop above the assignment it reads",
			src: "-- @key k\n-- @return int64\nlocal v = 'x'\nrepeat\n  if v ~= 'x' then return v end\n  v = redis.call('GET', KEYS[1])\n" +
				"until false\n",
			want: []string{`scripts/x.lua:5:27: v holds the value assigned at line 3 or 6, depending on the path taken, and none fits: ` +
				`returns v, assigned at line 3: a string ("x"), but @return int64 needs an integer reply; ` +
				`returns v, assigned at line 6: GET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "values passed along a chain in a loop",
			src: "-- @key k\n-- @return int64\nlocal a, b, c = 'x', 'y', 'z'\nwhile true do\n  if c == 'q' then return c end\n  c = b\n  b = a\n" +
				"  a = redis.call('GET', KEYS[1])\nend\n",
			want: []string{`scripts/x.lua:5:27: c holds the value assigned at line 3 or 8, depending on the path taken, and none fits: ` +
				`returns c, assigned at line 3: a string ("z"), but @return int64 needs an integer reply; ` +
				`returns c, assigned at line 3: a string ("y"), but @return int64 needs an integer reply; ` +
				`returns c, assigned at line 3: a string ("x"), but @return int64 needs an integer reply; ` +
				`returns c, assigned at line 8: GET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "key position above an assignment of an argument in a loop",
			src:  "-- @key k\n-- @arg other string\n-- @return none\nlocal key = KEYS[1]\nfor i = 1, 2 do\n  redis.call('GET', key)\n  key = ARGV[1]\nend\nreturn nil\n",
			want: []string{`scripts/x.lua:6:21: key position of GET holds key, an argument: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`},
		},
		{
			name: "argument ordered with a number",
			src:  "-- @key k\n-- @arg limit int64\n-- @return int64\nif ARGV[1] > 0 then return redis.call('INCR', KEYS[1]) end\nreturn 0\n",
			want: []string{`scripts/x.lua:4:12: > compares ARGV[1], a string, with 0, a number, which Lua 5.1 cannot order: Redis fails the script at run time ("attempt to compare ..."); ARGV and KEYS hold strings, whatever the @arg type: compare tonumber(ARGV[1])`},
		},
		{
			name: "reply compared with a string and a number",
			src: "-- @key k\n-- @return int64\nlocal v = redis.call('GET', KEYS[1])\nif v == 0 then return 0 end\n" +
				"if redis.call('EXISTS', KEYS[1]) ~= '1' then return 1 end\nreturn 2\n",
			want: []string{
				`scripts/x.lua:4:6: == compares v (the reply of GET), a string or nil (in Lua a string or a status table, or false for nil), with 0, a number, but Lua never finds a string equal to a number: it is always false; convert the reply with tonumber(...)`,
				`scripts/x.lua:5:34: ~= compares the reply of EXISTS, an integer (in Lua a number), with "1", a string, but Lua never finds a string equal to a number: it is always true; write the number without quotes (1)`,
			},
		},
		{
			name: "typed arguments compared with what their callers never send",
			src: "-- @key k\n-- @arg flag bool\n-- @arg n int64\n-- @return int64\nif ARGV[1] == 'true' then return 1 end\n" +
				"local f = ARGV[1]\nif f ~= true then return 2 end\nif ARGV[2] == '05' or redis.call('EXISTS', KEYS[1]) == false then return 3 end\nreturn 0\n",
			want: []string{
				`scripts/x.lua:5:12: == compares ARGV[1] with "true", but ARGV[1] is @arg flag bool, which the callers send as "1" or "0": it is always false`,
				`scripts/x.lua:7:6: ~= compares f (ARGV[1]), a string, with true, a boolean, but Lua never finds a boolean equal to a string or a number: it is always true; a bool @arg arrives as "1" or "0": compare with '1'`,
				`scripts/x.lua:8:12: == compares ARGV[2] with "05", but ARGV[2] is @arg n int64, which the callers send as an integer in decimal: it is always false`,
				`scripts/x.lua:8:53: == compares the reply of EXISTS, an integer (in Lua a number), with false, a boolean, but Lua never finds a boolean equal to a string or a number: it is always false; compare with a number (1 or 0)`,
			},
		},
		{
			name: "named field of a list reply",
			src: "-- @key k\n-- @return string?\nlocal h = redis.call('HGETALL', KEYS[1])\nif h.owner then return 'held' end\n" +
				"return redis.call('HMGET', KEYS[1], 'a')['a']\n",
			want: []string{
				`scripts/x.lua:4:4: h.owner is always nil: HGETALL replies an array, which reaches Lua as a list indexed 1, 2, ..., with no field "owner"; read the field with HGET, or turn the field-value pairs into a table first`,
				`scripts/x.lua:5:8: redis.call(...).a is always nil: HMGET replies an array, which reaches Lua as a list indexed 1, 2, ..., with no field "a"; the values come in the order of the fields asked for: t[1], t[2], ...`,
			},
		},
		{
			name: "field of a list reply named by a local",
			src:  "-- @key k\n-- @return int64\nlocal f = 'tokens'\nlocal bucket = redis.call('HGETALL', KEYS[1])\nlocal n = bucket[f]\nlocal i = 2\nreturn tonumber(bucket[i]) or 0\n",
			want: []string{`scripts/x.lua:5:11: bucket[f] is always nil: HGETALL replies an array, which reaches Lua as a list indexed 1, 2, ..., with no field "tokens"; read the field with HGET, or turn the field-value pairs into a table first`},
		},
		{
			name: "unknown and newer options",
			src: "-- @key k\n-- @return none\nredis.call('SET', KEYS[1], 'v', 'PX', 100, 'NXX')\n" +
				"redis.call('HSCAN', KEYS[1], 0, 'MATCH', 'a*', 'NOVALUES')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:44: "NXX" is no option of SET, which takes EX, EXAT, GET, KEEPTTL, NX, PX, PXAT or XX there: Redis refuses the call ("ERR syntax error"); did you mean NX?`,
				`scripts/x.lua:4:48: HSCAN's option NOVALUES is not in Redis 7.0 (it is in the specifications since 7.4.0): scripts must run on Redis 7.0`,
			},
		},
		{
			name: "option without its value",
			src: "-- @key k\n-- @return none\nredis.call('SET', KEYS[1], 'v', 'PX')\n" +
				"redis.call('ZRANGE', KEYS[1], 0, 1, 'BYSCORE', 'LIMIT', 0)\nredis.call('SET', KEYS[1], 'v', 'PX', unpack(ARGV))\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:33: SET's option PX takes a value after it, and the call gives 0: Redis refuses the call ("ERR syntax error")`,
				`scripts/x.lua:4:48: ZRANGE's option LIMIT takes 2 values after it, and the call gives 1: Redis refuses the call ("ERR syntax error")`,
			},
		},
		{
			name: "options that exclude each other",
			src:  "-- @key k\n-- @return none\nredis.call('SET', KEYS[1], 'v', 'NX', 'px', 100, 'XX')\nredis.call('PEXPIRE', KEYS[1], 100, 'NX', 'GT')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:50: SET takes one of NX or XX, and the call gives NX and XX: Redis refuses the call`,
				`scripts/x.lua:4:43: PEXPIRE takes one of GT, LT, NX or XX, and the call gives NX and GT: Redis refuses the call`,
			},
		},
		{
			name: "duration where Redis reads seconds",
			src:  "-- @key k\n-- @arg ttl duration\n-- @return int64\nreturn redis.call('EXPIRE', KEYS[1], ARGV[1])\n",
			want: []string{`scripts/x.lua:4:38: EXPIRE reads seconds there, and ARGV[1] is @arg ttl duration, sent as milliseconds: it would be 1000 times too long; use PEXPIRE, or declare it int64 (seconds)`},
		},
		{
			name: "time where SET reads unix seconds, through a local",
			src:  "-- @key k\n-- @arg at time\n-- @return none\nlocal t = ARGV[1]\nredis.call('SET', KEYS[1], 'v', 'exat', t)\nreturn nil\n",
			want: []string{`scripts/x.lua:5:41: SET EXAT reads unix seconds there, and ARGV[1] is @arg at time, sent as unix milliseconds: it would be 1000 times too far; use SET PXAT, or declare it int64 (seconds)`},
		},
		{
			name: "a length of time where Redis reads a unix time, and the other way round",
			src: "-- @key k\n-- @arg ttl duration\n-- @arg until time\n-- @return none\nredis.call('PEXPIREAT', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[1], 'v', 'PX', ARGV[2])\n" +
				"redis.call('PEXPIRE', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[1], 'v', 'PXAT', ARGV[2])\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:34: PEXPIREAT reads a unix time there (unix-time-milliseconds), and ARGV[1] is @arg ttl duration, a length of time: the expiry would fall in January 1970, so Redis deletes the key at once; use PEXPIRE for a length of time, or declare @arg ttl time`,
				`scripts/x.lua:6:39: SET PX reads a length of time there (milliseconds), and ARGV[2] is @arg until time, a unix time: the key would live for decades; use SET PXAT for a unix time, or declare @arg until duration`,
			},
		},
		{
			name: "RESTORE's ttl: a length of time, and a unix time after ABSTTL",
			src: "-- @key k\n-- @arg ttl duration\n-- @arg until time\n-- @arg n int64\n-- @return none\nredis.call('RESTORE', KEYS[1], ARGV[1], 'x', 'ABSTTL')\n" +
				"redis.call('RESTORE', KEYS[1], ARGV[2], 'x', 'IDLETIME', ARGV[3])\nredis.call('RESTORE', KEYS[1], ARGV[2], 'x', ARGV[3])\n" +
				"redis.call('RESTORE', KEYS[1], ARGV[2], 'x', 'abSttl', 'FREQ', ARGV[3])\nredis.call('RESTORE', KEYS[1], ARGV[1], 'x', 'REPLACE')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:6:32: RESTORE reads a unix time there (ttl, after ABSTTL), and ARGV[1] is @arg ttl duration, a length of time: the expiry would fall in January 1970, so Redis restores nothing (and with REPLACE deletes the key); drop ABSTTL for a length of time, or declare @arg ttl time`,
				`scripts/x.lua:7:32: RESTORE reads a length of time there (ttl, milliseconds without ABSTTL), and ARGV[2] is @arg until time, a unix time: the key would live for decades; add ABSTTL for a unix time, or declare @arg until duration`,
			},
		},
		{
			name: "stream idle times are lengths of time, XCLAIM's TIME a unix time",
			src: "-- @key s\n-- @arg ttl duration\n-- @arg until time\n-- @return none\nredis.call('XCLAIM', KEYS[1], 'g', 'c', ARGV[2], '0-1', 'IDLE', ARGV[2], 'TIME', ARGV[1])\n" +
				"redis.call('XAUTOCLAIM', KEYS[1], 'g', 'c', ARGV[2], '0')\nredis.call('XPENDING', KEYS[1], 'g', 'idle', ARGV[2], '-', '+', 10)\n" +
				"redis.call('XCLAIM', KEYS[1], 'g', 'c', ARGV[1], '0-1', 'IDLE', ARGV[1], 'TIME', ARGV[2])\nredis.call('XAUTOCLAIM', KEYS[1], 'g', 'c', ARGV[1], '0')\n" +
				"redis.call('XPENDING', KEYS[1], 'g', 'IDLE', ARGV[1], '-', '+', 10)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:41: XCLAIM reads a length of time there (min-idle-time, milliseconds), and ARGV[2] is @arg until time, a unix time: no entry has been idle that long, so the call never claims one; declare @arg until duration`,
				`scripts/x.lua:5:65: XCLAIM IDLE reads a length of time there (milliseconds), and ARGV[2] is @arg until time, a unix time: the entries' last delivery would be set decades back, or to now; use TIME for a unix time, or declare @arg until duration`,
				`scripts/x.lua:5:82: XCLAIM TIME reads a unix time there (milliseconds), and ARGV[1] is @arg ttl duration, a length of time: the entries' last delivery would be set in January 1970; use IDLE for a length of time, or declare @arg ttl time`,
				`scripts/x.lua:6:45: XAUTOCLAIM reads a length of time there (min-idle-time, milliseconds), and ARGV[2] is @arg until time, a unix time: no entry has been idle that long, so the call never claims one; declare @arg until duration`,
				`scripts/x.lua:7:46: XPENDING IDLE reads a length of time there (min-idle-time, milliseconds), and ARGV[2] is @arg until time, a unix time: no entry has been idle that long, so the call never lists one; declare @arg until duration`,
			},
		},
		{
			name: "RESTORE's numbers out of range",
			src:  "-- @key k\n-- @return none\nredis.call('RESTORE', KEYS[1], -1, 'x')\nredis.call('RESTORE', KEYS[1], 0, 'x', 'freq', '300')\nredis.call('RESTORE', KEYS[1], 5, 'x', 'REPLACE', 'IDLETIME', 10)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:32: RESTORE reads a ttl of 0 or more there, and the call passes -1: Redis refuses it at run time ("ERR Invalid TTL value, must be >= 0"), after the script's earlier writes; pass 0 (no expiry) or more`,
				`scripts/x.lua:4:48: RESTORE FREQ reads a frequency under 256 there, and the call passes 300: Redis refuses it at run time ("ERR Invalid FREQ value, must be >= 0 and <= 255"), after the script's earlier writes; pass 0 to 255`,
			},
		},
		{
			name: "a local holding a table, in a returned table",
			src:  "-- @arg a string\n-- @return []string\nlocal t = {ARGV[1]}\nif ARGV[1] == 'x' then\n  table.insert(t, 'y')\n  return {t}\nend\nt = ARGV[1]\nreturn {t}\n",
			want: []string{
				`scripts/x.lua:6:10: returns an array with t, assigned at line 3: a table at [0], but @return []string needs a string reply for each element`,
			},
		},
		{
			name: "RESTORE's IDLETIME: a unix time, and a length of time in milliseconds",
			src: "-- @key k\n-- @arg d duration\n-- @arg at time\n-- @return none\nredis.call('RESTORE', KEYS[1], 0, 'x', 'IDLETIME', ARGV[2])\n" +
				"redis.call('RESTORE', KEYS[1], 0, 'x', 'idletime', ARGV[1])\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:52: RESTORE IDLETIME reads a length of time there (seconds), and ARGV[2] is @arg at time, a unix time: the key would look idle for decades, the first to be evicted under an LRU policy; declare @arg at int64 (seconds)`,
				`scripts/x.lua:6:52: RESTORE IDLETIME reads seconds there, and ARGV[1] is @arg d duration, sent as milliseconds: it would be 1000 times too long; declare it int64 (seconds)`,
			},
		},
		{
			name: "field value pairs that do not pair",
			src:  "-- @key k\n-- @return none\nredis.call('HSET', KEYS[1], 'a', 1, 'b')\nredis.call('MSET', KEYS[1], 'v', KEYS[1])\nredis.call('HSET', KEYS[1], 'a', 1, 'b', 2)\nredis.call('HSET', KEYS[1], unpack({'a', 1}))\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:12: HSET takes field value pairs after key, and the call gives 3 words there: Redis refuses it at run time (wrong number of arguments); give every field its value`,
				`scripts/x.lua:4:12: MSET takes key value pairs, and the call gives 3 words there: Redis refuses it at run time (wrong number of arguments); give every key its value`,
			},
		},
		{
			name: "an expire time that is not positive",
			src:  "-- @key k\n-- @return none\nredis.call('SET', KEYS[1], 'v', 'EX', 0)\nredis.call('SETEX', KEYS[1], -5, 'v')\nredis.call('EXPIRE', KEYS[1], 0)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:39: SET EX reads a positive expire time there (seconds), and 0 is not: Redis refuses the call at run time ("invalid expire time in 'set' command"); to drop the key, use DEL`,
				`scripts/x.lua:4:30: SETEX reads a positive expire time there (seconds), and -5 is not: Redis refuses the call at run time ("invalid expire time in 'setex' command"); to drop the key, use DEL`,
			},
		},
		{
			name: "literal that is no integer",
			src:  "-- @key k\n-- @return int64\nredis.call('SET', KEYS[1], 'v', 'PX', '30s')\nreturn redis.call('INCRBY', KEYS[1], 1.5)\n",
			want: []string{
				`scripts/x.lua:3:39: SET PX reads an integer there (milliseconds), and "30s" is none: Redis refuses the call at run time`,
				`scripts/x.lua:4:38: INCRBY reads an integer there (increment), and "1.5" is none: Redis refuses the call at run time`,
			},
		},
		{
			name: "literal that is no number",
			src: "-- @key k\n-- @return none\nredis.call('INCRBYFLOAT', KEYS[1], 'abc')\nredis.call('ZCOUNT', KEYS[1], '[1', 5)\n" +
				"redis.call('ZADD', KEYS[1], 'GT', 'ch', 5, 'm', 'x', 'y')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:36: INCRBYFLOAT reads a number there (increment), and "abc" is none: Redis refuses the call at run time`,
				`scripts/x.lua:4:31: ZCOUNT reads a number there (min), and "[1" is none: Redis refuses the call at run time`,
				`scripts/x.lua:5:49: ZADD reads a number there (score), and "x" is none: Redis refuses the call at run time`,
			},
		},
		{
			name: "ZINCRBY's increment, which Redis reads as a double",
			src: "-- @key k\n-- @arg s string\n-- @arg f float64\n-- @return none\nredis.call('ZINCRBY', KEYS[1], 'abc', 'm')\nredis.call('ZINCRBY', KEYS[1], 'nan', 'm')\n" +
				"redis.call('ZINCRBY', KEYS[1], ARGV[1], 'm')\nredis.call('ZINCRBY', KEYS[1], ARGV[2], 'm')\nredis.call('ZINCRBY', KEYS[1], '-inf', 'm')\nredis.call('ZINCRBY', KEYS[1], 1.5, 'm')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:32: ZINCRBY reads a number there (increment), and "abc" is none: Redis refuses the call at run time`,
				`scripts/x.lua:6:32: ZINCRBY reads a number there (increment), and "nan" is none: Redis refuses the call at run time`,
			},
		},
		{
			name: "a number written as Go reads it, not as Redis does",
			src: "-- @key k\n-- @return none\nredis.call('ZINCRBY', KEYS[1], '1_0', 'm')\nredis.call('ZADD', KEYS[1], '0b1', 'm')\nredis.call('INCRBYFLOAT', KEYS[1], '0o7')\n" +
				"redis.call('ZCOUNT', KEYS[1], '0x1_0', '(1_0')\nredis.call('ZINCRBY', KEYS[1], '0x10', 'm')\nredis.call('ZADD', KEYS[1], '017', 'm')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:32: ZINCRBY reads a number there (increment), and "1_0" is none: Redis refuses the call at run time`,
				`scripts/x.lua:4:29: ZADD reads a number there (score, after the options CH, GT, INCR, LT, NX, XX), and "0b1" is neither: Redis refuses the call at run time`,
				`scripts/x.lua:5:36: INCRBYFLOAT reads a number there (increment), and "0o7" is none: Redis refuses the call at run time`,
				`scripts/x.lua:6:31: ZCOUNT reads a number there (min), and "0x1_0" is none: Redis refuses the call at run time`,
				`scripts/x.lua:6:40: ZCOUNT reads a number there (max), and "(1_0" is none: Redis refuses the call at run time`,
			},
		},
		{
			name: "a number out of a double's range where Redis reads a double",
			src: "-- @key k\n-- @return none\nredis.call('ZINCRBY', KEYS[1], '1e400', 'm')\nredis.call('ZADD', KEYS[1], '1e-400', 'm')\nredis.call('INCRBYFLOAT', KEYS[1], '1e400')\n" +
				"redis.call('ZCOUNT', KEYS[1], '-1e400', '(1e400')\nredis.call('ZADD', KEYS[1], '3e-324', 'm', 1e400, 'n', 'inf', 'o')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:32: ZINCRBY reads a double there (increment), and 1e400 is beyond a double's largest (about 1.8e308): Redis refuses the call at run time, after the script's earlier writes; write inf or -inf, or a smaller number`,
				`scripts/x.lua:4:29: ZADD reads a double there (score), and 1e-400 is so small that a double rounds it to 0: Redis refuses the call at run time, after the script's earlier writes; write 0, or a larger number`,
			},
		},
		{
			name: "a weight out of a double's range",
			src:  "-- @key a\n-- @key b\n-- @return none\nredis.call('ZUNIONSTORE', KEYS[1], 1, KEYS[2], 'WEIGHTS', '1e400')\nredis.call('ZINTER', 1, KEYS[2], 'WEIGHTS', '1e-400')\nredis.call('ZUNIONSTORE', KEYS[1], 1, KEYS[2], 'WEIGHTS', '3e-324')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:4:59: ZUNIONSTORE reads weight (a number) there, and the call gives "1e400": its words do not fit ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:5:45: ZINTER reads weight (a number) there, and the call gives "1e-400": its words do not fit ZINTER numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES], so Redis refuses the call at run time, after the script's earlier writes`,
			},
		},
		{
			name: "an optional count with no keyword that is no integer",
			src:  "-- @key k\n-- @return none\nredis.call('SRANDMEMBER', KEYS[1], 'x')\nredis.call('HRANDFIELD', KEYS[1], 'two', 'WITHVALUES')\nredis.call('SPOP', KEYS[1], '1.5')\nredis.call('ZRANDMEMBER', KEYS[1], 2)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:36: SRANDMEMBER reads an integer there (count), and "x" is none: Redis refuses the call at run time`,
				`scripts/x.lua:4:35: HRANDFIELD reads an integer there (count), and "two" is none: Redis refuses the call at run time`,
				`scripts/x.lua:5:29: SPOP reads an integer there (count), and "1.5" is none: Redis refuses the call at run time`,
			},
		},
		{
			name: "ZADD and GEOADD words out of order, and a misspelt option",
			src: "-- @key k\n-- @return none\nredis.call('ZADD', KEYS[1], 'member', 5)\nredis.call('ZADD', KEYS[1], 'nxx', 1, 'm')\n" +
				"redis.call('GEOADD', KEYS[1], 'Palermo', 13.36, 38.11)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:29: ZADD reads a number there (score, after the options CH, GT, INCR, LT, NX, XX), and "member" is neither: Redis refuses the call at run time`,
				`scripts/x.lua:4:29: ZADD reads a number there (score, after the options CH, GT, INCR, LT, NX, XX), and "nxx" is neither: Redis refuses the call at run time; did you mean NX?`,
				`scripts/x.lua:5:31: GEOADD reads a number there (longitude, after the options CH, NX, XX), and "Palermo" is neither: Redis refuses the call at run time`,
			},
		},
		{
			name: "returned table with named fields",
			src:  "-- @key k\n-- @return map[string]string\nlocal n = redis.call('INCR', KEYS[1])\nreturn {count = tostring(n), limit = '10'}\n",
			want: []string{`scripts/x.lua:4:8: returns a table with named fields (count, limit), which Redis drops: it replies a Lua table as the array of its values at 1, 2, ..., so the caller gets an empty array; list field-value pairs ({'count', value, ...}) for @return map[string]string, or return cjson.encode of the table`},
		},
		{
			name: "return of two values",
			src:  "-- @key k\n-- @return int64\nlocal n = redis.call('INCR', KEYS[1])\nreturn n, redis.call('PTTL', KEYS[1])\n",
			want: []string{`scripts/x.lua:4:8: returns 2 values, and Redis replies the first alone: return them in a table ({a, b, ...}) for an array reply`},
		},
		{
			name: "reply compared with nil",
			src:  "-- @key k\n-- @return int64\nif redis.call('GET', KEYS[1]) == nil then return 1 end\nlocal v = redis.call('HGET', KEYS[1], 'f')\nif v ~= nil then return 2 end\nreturn 0\n",
			want: []string{
				`scripts/x.lua:3:31: == compares the reply of GET with nil, but a reply is never nil (Redis turns a nil reply into false): it is always false; test it with not, or compare with false`,
				`scripts/x.lua:5:6: ~= compares v (the reply of HGET) with nil, but a reply is never nil (Redis turns a nil reply into false): it is always true; test it with not, or compare with false`,
			},
		},
		{
			name: "reply that is never nil as a condition",
			src: "-- @key k\n-- @return int64\nif redis.call('EXISTS', KEYS[1]) then return 1 end\nlocal h = redis.call('HGETALL', KEYS[1])\n" +
				"if not h then return 2 end\nwhile redis.call('SISMEMBER', KEYS[1], 'x') and #h > 0 do return 3 end\nreturn 0\n",
			want: []string{
				`scripts/x.lua:3:4: the reply of EXISTS is always true as a condition: it is an integer, and Lua finds 0 true too (only nil and false are false in Lua, and Redis replies nil as false); compare it with a number (== 1, > 0)`,
				`scripts/x.lua:5:8: not h (the reply of HGETALL) is always false: it is a list, and Lua finds an empty one true too (only nil and false are false in Lua, and Redis replies nil as false); test its length (#x > 0)`,
				`scripts/x.lua:6:7: the reply of SISMEMBER is always true as a condition: it is an integer, and Lua finds 0 true too (only nil and false are false in Lua, and Redis replies nil as false); compare it with a number (== 1, > 0)`,
			},
		},
		{
			name: "status reply compared with a string",
			src: "-- @key k\n-- @return int64\nif redis.call('TYPE', KEYS[1]) == 'hash' then return 1 end\nlocal t = redis.call('TYPE', KEYS[1])\n" +
				"if t ~= 'none' then return 2 end\nif redis.call('SET', KEYS[1], 'v', 'NX') == 'OK' then return 3 end\nreturn 0\n",
			want: []string{
				`scripts/x.lua:3:32: == compares the reply of TYPE, a status reply, with "hash", a string, but a status reply reaches Lua as a table {ok = ...}, which Lua never finds equal to a string or a number: it is always false; compare its ok field (redis.call('TYPE', ...).ok)`,
				`scripts/x.lua:5:6: ~= compares t (the reply of TYPE), a status reply, with "none", a string, but a status reply reaches Lua as a table {ok = ...}, which Lua never finds equal to a string or a number: it is always true; compare its ok field (redis.call('TYPE', ...).ok)`,
				`scripts/x.lua:6:42: == compares the reply of SET, a status reply, with "OK", a string, but a status reply reaches Lua as a table {ok = ...}, which Lua never finds equal to a string or a number: it is always false; compare its ok field (redis.call('SET', ...).ok)`,
			},
		},
		{
			name: "status reply as a condition",
			src:  "-- @key k\n-- @return int64\nif redis.call('TYPE', KEYS[1]) then return 1 end\nreturn 0\n",
			want: []string{`scripts/x.lua:3:4: the reply of TYPE is always true as a condition: it is a status reply, a table {ok = ...} in Lua (only nil and false are false in Lua, and Redis replies nil as false); compare its ok field (redis.call(...).ok)`},
		},
		{
			name: "ZADD options that exclude each other, and INCR with two pairs",
			src: "-- @key k\n-- @return none\nredis.call('ZADD', KEYS[1], 'NX', 'XX', 1, 'm')\nredis.call('ZADD', KEYS[1], 'gt', 'nx', 1, 'm')\n" +
				"redis.call('ZADD', KEYS[1], 'INCR', 1, 'a', 2, 'b')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:35: ZADD takes one of NX or XX, and the call gives NX and XX: Redis refuses the call`,
				`scripts/x.lua:4:35: ZADD takes one of NX or GT, and the call gives GT and NX: Redis refuses the call`,
				`scripts/x.lua:5:45: ZADD INCR takes one group of score member, and the call gives 2: Redis refuses the call`,
			},
		},
		{
			name: "bool from a count of two keys",
			src:  "-- @key a\n-- @key b\n-- @return bool\nreturn redis.call('EXISTS', KEYS[1], KEYS[2])\n",
			want: []string{`scripts/x.lua:4:8: EXISTS replies integers other than 0 and 1 (it counts the 2 keys given), but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`},
		},
		{
			name: "bool from a ZADD of two members",
			src:  "-- @key z\n-- @return bool\nreturn redis.call('ZADD', KEYS[1], 'NX', 1, 'a', 2, 'b')\n",
			want: []string{`scripts/x.lua:3:8: ZADD replies integers other than 0 and 1 (it counts the 2 members given), but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`},
		},
		{
			name: "bool from a GEOADD of two members, an XDEL and XACK of two IDs",
			src: "-- @key k\n-- @arg m string\n-- @return bool\n" +
				"if ARGV[1] == 'a' then return redis.call('GEOADD', KEYS[1], 'NX', 13.36, 38.11, 'a', 15.08, 37.50, 'b') end\n" +
				"if ARGV[1] == 'c' then return redis.call('XDEL', KEYS[1], '1-1', '1-2') end\n" +
				"return redis.call('XACK', KEYS[1], 'g', '1-1', '1-2')\n",
			want: []string{
				`scripts/x.lua:4:31: GEOADD replies integers other than 0 and 1 (it counts the 2 members given), but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`,
				`scripts/x.lua:5:31: XDEL replies integers other than 0 and 1 (it counts the 2 IDs given), but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`,
				`scripts/x.lua:6:8: XACK replies integers other than 0 and 1 (it counts the 2 IDs given), but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`,
			},
		},
		{
			name: "bool from a ZADD of unpacked members",
			src:  "-- @key z\n-- @return bool\nreturn redis.call('ZADD', KEYS[1], unpack(ARGV))\n",
			want: []string{
				`scripts/x.lua:3:8: ZADD replies integers other than 0 and 1 (it counts the members given), but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`,
				// No @arg is declared: unpack(ARGV) gives nothing.
				`scripts/x.lua:3:19: wrong number of arguments for ZADD: it takes at least 3 arguments, the call passes 1`,
			},
		},
		{
			name: "bool from a count of unpacked keys",
			src:  "-- @key k...\n-- @return bool\nreturn redis.call('DEL', unpack(KEYS))\n",
			want: []string{`scripts/x.lua:3:8: DEL replies integers other than 0 and 1 (it counts the keys given), but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`},
		},
		{
			name: "read of an undefined global",
			src:  "-- @key k\n-- @return int64\nreturn redis.call('INCRBY', KEYS[1], step)\n",
			want: []string{`scripts/x.lua:3:38: step is not a global of Redis's script sandbox: reading it fails at run time ("Script attempted to access nonexistent global variable 'step'"); declare it local, or check its name`},
		},
		{
			name: "print is not in Redis's sandbox",
			src:  "-- @return none\nprint('x')\nreturn 'OK'\n",
			want: []string{`scripts/x.lua:2:1: print is not a global of Redis's script sandbox: reading it fails at run time ("Script attempted to access nonexistent global variable 'print'"); Redis 7 removed print: use redis.log(redis.LOG_NOTICE, ...)`},
		},
		{
			name: "library Redis does not load",
			src:  "-- @return int64\nreturn os.time()\n",
			want: []string{`scripts/x.lua:2:8: os is not a global of Redis's script sandbox: reading it fails at run time ("Script attempted to access nonexistent global variable 'os'"); Redis loads only the Lua libraries string, table, math, cjson, cmsgpack, bit and struct`},
		},
		{
			name: "server is Valkey's",
			src:  "-- @key k\n-- @return string?\nreturn server.call('GET', KEYS[1])\n",
			want: []string{`scripts/x.lua:3:8: server is not a global of Redis's script sandbox: reading it fails at run time ("Script attempted to access nonexistent global variable 'server'"); server is Valkey's name for the redis table: use redis`},
		},
		{
			name: "global read in a function",
			src:  "-- @return int64\nlocal function f() return counter end\nreturn f()\n",
			want: []string{`scripts/x.lua:2:27: counter is not a global of Redis's script sandbox: reading it fails at run time ("Script attempted to access nonexistent global variable 'counter'"); declare it local, or check its name`},
		},
		{
			name: "byte-order mark",
			src:  "\ufeff-- @key k\n-- @return string?\nreturn redis.call('GET', KEYS[1])\n",
			want: []string{`scripts/x.lua:1:1: the file starts with a UTF-8 byte-order mark, which Redis refuses to compile ("Error compiling script (new function): user_script:1: unexpected symbol near ..."): save the file without it`},
		},
		{
			name: "byte-order mark before another problem",
			src:  "\ufeff-- @key k\n-- @return int64\nreturn redis.call('GET', KEYS[1])\n",
			want: []string{
				`scripts/x.lua:1:1: the file starts with a UTF-8 byte-order mark, which Redis refuses to compile ("Error compiling script (new function): user_script:1: unexpected symbol near ..."): save the file without it`,
				`scripts/x.lua:3:8: GET replies a string or nil, but @return int64 needs an integer reply`,
			},
		},
		{
			name: "hexadecimal index beyond the declared keys",
			src:  "-- @key a\n-- @return string?\nreturn redis.call('GET', KEYS[0x1]) or redis.call('GET', KEYS[0X2])\n",
			want: []string{`scripts/x.lua:3:58: KEYS[2] is used but only 1 key is declared`},
		},
		{
			name: "fractional index",
			src:  "-- @key a\n-- @return string?\nreturn redis.call('GET', KEYS[1]) or redis.call('GET', KEYS[1.5])\n",
			want: []string{`scripts/x.lua:3:56: KEYS[1.5] is not a valid index: Lua arrays start at 1`},
		},
		{
			name: "nil test that does not return",
			src:  "-- @key k\n-- @return string\nlocal v = redis.call('GET', KEYS[1])\nif not v then redis.log(redis.LOG_NOTICE, 'none') end\nreturn v\n",
			want: []string{`scripts/x.lua:5:8: returns v, assigned at line 3: GET replies a string or nil, but @return string is not nullable: declare @return string?`},
		},
		{
			name: "nil test in a nested block",
			src:  "-- @key k\n-- @arg m string\n-- @return string\nlocal v = redis.call('GET', KEYS[1])\nif ARGV[1] == 'x' then\n  if not v then return '' end\nend\nreturn v\n",
			want: []string{`scripts/x.lua:8:8: returns v, assigned at line 4: GET replies a string or nil, but @return string is not nullable: declare @return string?`},
		},
		{
			name: "local assigned again after its nil test",
			src:  "-- @key k\n-- @return string\nlocal v = redis.call('GET', KEYS[1])\nif not v then return '' end\nv = redis.call('GET', KEYS[1] .. ':x')\nreturn v\n",
			want: []string{`scripts/x.lua:6:8: returns v, assigned at line 5: GET replies a string or nil, but @return string is not nullable: declare @return string?`},
		},
		{
			name: "nil test with and",
			src:  "-- @key k\n-- @return string\nlocal v = redis.call('GET', KEYS[1])\nif not v and #KEYS > 0 then return '' end\nreturn v\n",
			want: []string{`scripts/x.lua:5:8: returns v, assigned at line 3: GET replies a string or nil, but @return string is not nullable: declare @return string?`},
		},
		{
			name: "nil test against nil",
			src:  "-- @key k\n-- @return string\nlocal v = redis.call('GET', KEYS[1])\nif v == nil then return '' end\nreturn v\n",
			want: []string{`scripts/x.lua:4:6: == compares v (the reply of GET) with nil, but a reply is never nil (Redis turns a nil reply into false): it is always false; test it with not, or compare with false`},
		},
		{
			name: "nil tested local of another shape",
			src:  "-- @key k\n-- @return int64\nlocal v = redis.call('GET', KEYS[1])\nif not v then return 0 end\nreturn v\n",
			want: []string{`scripts/x.lua:5:8: returns v, assigned at line 3: GET replies a string or nil, but @return int64 needs an integer reply`},
		},
		{
			name: "key changed by the script",
			src: "-- @key k\n-- @key ks...\n-- @return none\nredis.call('SET', KEYS[1]:sub(1, 3), 'v')\nredis.call('DEL', string.sub(KEYS[1], 2))\nlocal k = string.lower(KEYS[1]) .. ':x'\nredis.call('GET', k)\n" +
				"for _, key in ipairs(KEYS) do redis.call('DEL', key:upper()) end\nredis.call('MGET', KEYS[1], (KEYS[1] .. ':x'):gsub('x', 'y'))\nreturn nil\n",
			want: []string{
				"scripts/x.lua:4:19: key position of SET holds KEYS[1]:sub(...), a key the script changed: it is not the key the callers passed, and may hash to another slot, where Redis Cluster fails the call (\"Script attempted to access a non local key in a cluster node\") after the script's earlier writes; pass the key itself in KEYS (declared with @key), extend one only on the right (KEYS[1] .. ':x' keeps its hash tag), or mark the script @cluster-unsafe",
				"scripts/x.lua:5:19: key position of DEL holds string.sub(KEYS[1], ...), a key the script changed: it is not the key the callers passed, and may hash to another slot, where Redis Cluster fails the call (\"Script attempted to access a non local key in a cluster node\") after the script's earlier writes; pass the key itself in KEYS (declared with @key), extend one only on the right (KEYS[1] .. ':x' keeps its hash tag), or mark the script @cluster-unsafe",
				"scripts/x.lua:7:19: key position of GET holds string.lower(KEYS[1]), a key the script changed: it is not the key the callers passed, and may hash to another slot, where Redis Cluster fails the call (\"Script attempted to access a non local key in a cluster node\") after the script's earlier writes; pass the key itself in KEYS (declared with @key), extend one only on the right (KEYS[1] .. ':x' keeps its hash tag), or mark the script @cluster-unsafe",
				"scripts/x.lua:8:49: key position of DEL holds KEYS[i]:upper(), a key the script changed: it is not the key the callers passed, and may hash to another slot, where Redis Cluster fails the call (\"Script attempted to access a non local key in a cluster node\") after the script's earlier writes; pass the key itself in KEYS (declared with @key), extend one only on the right (KEYS[1] .. ':x' keeps its hash tag), or mark the script @cluster-unsafe",
				// gsub also gives the count of its replacements, one more key.
				"scripts/x.lua:9:29: argument 2 of MGET is a call of gsub, which gives two values, the string and the count of its replacements: MGET gets both, the count as one more argument; wrap the call in parentheses to pass the string alone ((s:gsub(...)))",
				"scripts/x.lua:9:29: key position of MGET holds KEYS[1]:gsub(...), a key the script changed: it is not the key the callers passed, and may hash to another slot, where Redis Cluster fails the call (\"Script attempted to access a non local key in a cluster node\") after the script's earlier writes; pass the key itself in KEYS (declared with @key), extend one only on the right (KEYS[1] .. ':x' keeps its hash tag), or mark the script @cluster-unsafe",
			},
		},
		{
			name: "incomplete score member pairs",
			src: "-- @key k\n-- @arg opt string\n-- @arg score float64\n-- @return none\nredis.call('SET', KEYS[1], 'v')\nredis.call('ZADD', KEYS[1], 1, 'a', 2)\nredis.call('ZADD', KEYS[1], 'NX', 'CH')\n" +
				"redis.call('ZADD', KEYS[1], 'XX', ARGV[1])\nredis.call('ZADD', KEYS[1], ARGV[2], 'a', 2)\nredis.call('GEOADD', KEYS[1], 13.36, 38.11, 'Palermo', 15.08)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:6:37: ZADD takes score member pairs after key and its options (CH, GT, INCR, LT, NX, XX), and the call gives 3 words there: Redis refuses it at run time ("ERR syntax error"), after the script's earlier writes; give every member its score`,
				`scripts/x.lua:7:35: ZADD takes score member pairs after key and its options (CH, GT, INCR, LT, NX, XX), and the call gives 0 words there: Redis refuses it at run time ("ERR syntax error"), after the script's earlier writes; give every member its score`,
				`scripts/x.lua:8:35: ZADD takes score member pairs after key and its options (CH, GT, INCR, LT, NX, XX), and the call gives 1 word there: Redis refuses it at run time ("ERR syntax error"), after the script's earlier writes; give every member its score`,
				`scripts/x.lua:9:43: ZADD takes score member pairs after key and its options (CH, GT, INCR, LT, NX, XX), and the call gives 3 words there: Redis refuses it at run time ("ERR syntax error"), after the script's earlier writes; give every member its score`,
				`scripts/x.lua:10:56: GEOADD takes longitude latitude member groups after key and its options (CH, NX, XX), and the call gives 4 words there: Redis refuses it at run time ("ERR syntax error"), after the script's earlier writes; give every member its longitude and latitude`,
			},
		},
		{
			name: "array reply with nil elements",
			src:  "-- @key k\n-- @return []string\nif #KEYS > 5 then return redis.call('MGET', KEYS[1], KEYS[1] .. ':x') end\nlocal v = redis.call('HMGET', KEYS[1], 'a', 'b')\nreturn v\n",
			want: []string{
				`scripts/x.lua:3:26: MGET replies an array whose elements may be nil (for what it does not find), but @return []string reads no nil element: the callers get a *DecodeError when one is missing; return a record of nullable fields ({a string?, b string?}) for a fixed number of values, or replace the nils (false in Lua) in the script (for i = 1, #t do if not t[i] then t[i] = '' end end)`,
				`scripts/x.lua:5:8: returns v, assigned at line 4: HMGET replies an array whose elements may be nil (for what it does not find), but @return []string reads no nil element: the callers get a *DecodeError when one is missing; return a record of nullable fields ({a string?, b string?}) for a fixed number of values, or replace the nils (false in Lua) in the script (for i = 1, #t do if not t[i] then t[i] = '' end end)`,
			},
		},
		{
			name: "array reply with nil elements into a record",
			src:  "-- @key k\n-- @return {a string?, b int64}\nreturn redis.call('HMGET', KEYS[1], 'a', 'b')\n",
			want: []string{
				`scripts/x.lua:3:8: HMGET replies an array whose elements may be nil (for what it does not find), but field b of @return {a string?, b int64} is not nullable: the callers get a *DecodeError when it is missing; declare it b int64?`,
			},
		},
		{
			name: "Lua boolean returned after switching to RESP3",
			src:  "-- @key k\n-- @return string?\nredis.setresp(3)\nlocal v = redis.call('GET', KEYS[1])\nif not v then return false end\nreturn v\n",
			want: []string{
				`scripts/x.lua:5:22: returns a Lua boolean after redis.setresp(3) (line 3): Redis then replies a Lua boolean as a RESP3 boolean (false, not nil; true, not 1), which @return string? does not read: the callers get a *DecodeError; return nil for a nil reply and 1 for true, or switch back with redis.setresp(2) before returning`,
			},
		},
		{
			name: "Lua booleans in a returned table after switching to RESP3",
			src:  "-- @key k\n-- @return {a int64, b string?}\nredis.setresp(3)\nlocal n = redis.call('INCR', KEYS[1])\nreturn {n, n > 5}\n",
			want: []string{
				`scripts/x.lua:5:8: returns an array with a Lua boolean at [1] after redis.setresp(3) (line 3): Redis then replies a Lua boolean as a RESP3 boolean (false, not nil; true, not 1), which @return {a int64, b string?} does not read there: the callers get a *DecodeError; switch back with redis.setresp(2) before returning, or put 1 and 0 in the table`,
			},
		},
		{
			name: "replies of another shape in RESP3 returned",
			src: "-- @key k\n-- @return []string\nredis.setresp(3)\nif #KEYS > 5 then return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES') end\n" +
				"if #KEYS > 4 then return redis.call('HMGET', KEYS[1], 'a', 'b') end\nlocal p = redis.call('ZPOPMIN', KEYS[1])\nif #KEYS > 3 then return p end\nreturn redis.call('HGETALL', KEYS[1])\n",
			want: []string{
				`scripts/x.lua:4:26: returns the reply of ZRANGE, called after redis.setresp(3) (line 3): it is then an array of doubles or of arrays (scores as doubles, pairs in arrays of two), not a flat array of strings, which @return []string does not read (the callers get a *DecodeError, or values are lost); call ZRANGE before redis.setresp(3), or build the reply in the script`,
				`scripts/x.lua:5:26: returns the reply of HMGET, called after redis.setresp(3) (line 3): it is then an array that ends at its first missing element (RESP3 hands a missing value to Lua as nil, not false, and Lua ends an array at its first nil), which @return []string does not read (the callers get a *DecodeError, or values are lost); call HMGET before redis.setresp(3), or build the reply in the script`,
				`scripts/x.lua:7:26: returns p, assigned at line 6: the reply of ZPOPMIN, called after redis.setresp(3) (line 3): it is then an array of doubles or of arrays (scores as doubles, pairs in arrays of two), not a flat array of strings, which @return []string does not read (the callers get a *DecodeError, or values are lost); call ZPOPMIN before redis.setresp(3), or build the reply in the script`,
				`scripts/x.lua:8:8: returns the reply of HGETALL, called after redis.setresp(3) (line 3): it is then a map, not a flat array of field-value pairs, which @return []string does not read (the callers get a *DecodeError, or values are lost); call HGETALL before redis.setresp(3), or build the reply in the script`,
			},
		},
		{
			name: "double in RESP3 returned as a string",
			src:  "-- @key k\n-- @return string?\nredis.setresp(3)\nreturn redis.call('ZSCORE', KEYS[1], 'm')\n",
			want: []string{
				`scripts/x.lua:4:8: returns the reply of ZSCORE, called after redis.setresp(3) (line 3): it is then a double, not a string, which @return string? does not read (the callers get a *DecodeError, or values are lost); call ZSCORE before redis.setresp(3), or build the reply in the script`,
			},
		},
		{
			name: "pop with a count returned as one value",
			src:  "-- @key k\n-- @return string?\nif #KEYS > 5 then return redis.call('LPOP', KEYS[1], 5) end\nlocal v = redis.call('SRANDMEMBER', KEYS[1], 1)\nreturn v\n",
			want: []string{
				`scripts/x.lua:3:26: LPOP with a count replies an array or nil, but @return string? needs a string reply: Redis replies a list when the call gives a count; drop the count for one value, or declare @return []string?`,
				`scripts/x.lua:5:8: returns v, assigned at line 4: SRANDMEMBER with a count replies an array, but @return string? needs a string reply: Redis replies a list when the call gives a count; drop the count for one value, or declare @return []string`,
			},
		},
		{
			name: "pop without a count returned as a list",
			src:  "-- @key k\n-- @return []string\nif #KEYS > 5 then return redis.call('RPOP', KEYS[1]) end\nreturn redis.call('SPOP', KEYS[1])\n",
			want: []string{
				`scripts/x.lua:3:26: RPOP without a count replies a string or nil, but @return []string needs an array reply: Redis replies one value when the call gives no count; pass a count (RPOP key 1) for a list, or declare @return string?`,
				`scripts/x.lua:4:8: SPOP without a count replies a string or nil, but @return []string needs an array reply: Redis replies one value when the call gives no count; pass a count (SPOP key 1) for a list, or declare @return string?`,
			},
		},
		{
			name: "list of values returned as pairs",
			src:  "-- @key k\n-- @arg n int64\n-- @return map[string]string\nif #KEYS > 5 then return redis.call('ZRANGE', KEYS[1], 0, -1) end\nreturn redis.call('HRANDFIELD', KEYS[1], ARGV[1])\n",
			want: []string{
				`scripts/x.lua:4:26: ZRANGE without WITHSCORES replies a list of values, not pairs, but @return map[string]string reads field-value pairs: the callers get a *DecodeError for an odd number of values, and pair the values among themselves otherwise; add WITHSCORES to the call, or declare @return []string`,
				`scripts/x.lua:5:8: HRANDFIELD without WITHVALUES replies a list of values, not pairs, but @return map[string]string reads field-value pairs: the callers get a *DecodeError for an odd number of values, and pair the values among themselves otherwise; add WITHVALUES to the call, or declare @return []string`,
			},
		},
		{
			name: "count that gives more values than the record has fields",
			src:  "-- @key k\n-- @return {member string?, score string?}\nif #KEYS > 5 then return redis.call('ZPOPMIN', KEYS[1], 2) end\nreturn redis.call('HRANDFIELD', KEYS[1], -3)\n",
			want: []string{
				`scripts/x.lua:3:26: ZPOPMIN with the count 2 replies up to 4 values (2 pairs), but @return {member string?, score string?} has 2 fields: the callers get a *DecodeError whenever more values come; lower the count, or return a list (@return []string)`,
				`scripts/x.lua:4:8: HRANDFIELD with the count -3 replies up to 3 values, but @return {member string?, score string?} has 2 fields: the callers get a *DecodeError whenever more values come; lower the count, or return a list (@return []string)`,
			},
		},
		{
			name: "integer literals out of the range Redis takes",
			src: "-- @key k\n-- @return none\nredis.call('SET', KEYS[1], 'v')\nredis.call('LPOP', KEYS[1], -1)\nredis.call('ZPOPMIN', KEYS[1], '-2')\nredis.call('SETRANGE', KEYS[1], -1, 'x')\n" +
				"redis.call('SCAN', 0, 'count', 0)\nredis.call('LPOS', KEYS[1], 'a', 'RANK', 0, 'MAXLEN', -5)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:4:29: LPOP reads a count of 0 or more there, and the call passes -1: Redis refuses it at run time ("ERR value is out of range, must be positive"), after the script's earlier writes; pass 0 or more`,
				`scripts/x.lua:5:32: ZPOPMIN reads a count of 0 or more there, and the call passes -2: Redis refuses it at run time ("ERR value is out of range, must be positive"), after the script's earlier writes; pass 0 or more (ZPOPMAX pops from the other end)`,
				`scripts/x.lua:6:33: SETRANGE reads an offset of 0 or more there, and the call passes -1: Redis refuses it at run time ("ERR offset is out of range"), after the script's earlier writes; pass an offset of 0 or more, counted from the start of the string`,
				`scripts/x.lua:7:32: SCAN COUNT reads a count of 1 or more there, and the call passes 0: Redis refuses it at run time ("ERR syntax error"), after the script's earlier writes; pass 1 or more`,
				`scripts/x.lua:8:42: LPOS RANK reads a rank there that is not 0, and the call passes 0: Redis refuses it at run time ("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"), after the script's earlier writes; pass 1 for the first match, -1 for the last`,
				`scripts/x.lua:8:55: LPOS MAXLEN reads a maximum length of 0 or more there, and the call passes -5: Redis refuses it at run time ("ERR MAXLEN can't be negative"), after the script's earlier writes; pass 0 (the whole list) or more`,
			},
		},
		{
			name: "XADD words that fit no reading of its syntax",
			src: "-- @key s\n-- @return none\nredis.call('XADD', KEYS[1], '*', 'f', 'v', 'g')\nredis.call('XADD', KEYS[1], 'MAXLEN', 5, 'f', 'v')\n" +
				"redis.call('XADD', KEYS[1], 'MAXLEN', '*', 'f', 'v')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:44: XADD reads value there (after "g"), and the call ends: its words do not fit XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:4:47: XADD reads value there (after "v"), and the call ends: its words do not fit XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:5:49: XADD reads value there (after "v"), and the call ends: its words do not fit XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...], so Redis refuses the call at run time, after the script's earlier writes`,
			},
		},
		{
			name: "XADD and XTRIM words Redis reads as no ID or count",
			src: "-- @key s\n-- @return none\nredis.call('XADD', KEYS[1], 'LIMIT', 'x', '*', 'f', 'v')\nredis.call('XADD', KEYS[1], '0-0', 'f', 'v')\n" +
				"redis.call('XADD', KEYS[1], 'MINID', 'abc', '*', 'f', 'v')\nredis.call('XADD', KEYS[1], 'MAXLEN', '~', '1k', '*', 'f', 'v')\nredis.call('XTRIM', KEYS[1], 'MAXLEN', -1)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:38: XADD LIMIT reads an integer there (count), and "x" is none: Redis refuses the call at run time ("ERR value is not an integer or out of range"), after the script's earlier writes`,
				`scripts/x.lua:4:29: XADD's entry ID "0-0" is 0-0, which no entry may have: Redis refuses the call at run time ("ERR The ID specified in XADD must be greater than 0-0"), after the script's earlier writes; give * for an ID Redis picks`,
				`scripts/x.lua:5:38: XADD MINID reads a stream ID there (threshold), and "abc" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write ms-seq (1700000000000-0) or ms`,
				`scripts/x.lua:6:44: XADD MAXLEN reads an integer there (threshold), and "1k" is none: Redis refuses the call at run time ("ERR value is not an integer or out of range"), after the script's earlier writes`,
				`scripts/x.lua:7:40: XTRIM MAXLEN reads an integer of 0 or more there (threshold), and the call passes -1: Redis refuses the call at run time ("ERR The MAXLEN argument must be >= 0."), after the script's earlier writes`,
			},
		},
		{
			name: "words of BITOP, BITFIELD, the MPOP and the sorted set combining commands, and GEOADD coordinates",
			src:  "-- @key k\n-- @key j\n-- @return none\nredis.call('BITOP', 'NAND', KEYS[1], KEYS[2])\nredis.call('BITOP', 'NOT', KEYS[1], KEYS[2], KEYS[2])\nredis.call('BITFIELD', KEYS[1], 'GET', 'u8')\nredis.call('BITFIELD_RO', KEYS[1], 'GET', 'x8', 0)\nredis.call('LMPOP', 1, KEYS[1], 'UP')\nredis.call('ZMPOP', 1, KEYS[1], 'MIN', 'COUNT')\nredis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[1], KEYS[2], 'WEIGHTS', 1)\nredis.call('ZINTER', 1, KEYS[1], 'AGGREGATE', 'AVG')\nredis.call('GEOADD', KEYS[1], 13.4, 85.1, 'm')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:4:21: BITOP reads AND, OR, XOR or NOT there, and the call gives "NAND": its words do not fit BITOP AND|OR|XOR|NOT destkey key [key ...], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:5:46: BITOP NOT takes one source key, and the call gives 2: Redis refuses the call at run time ("ERR BITOP NOT must be called with a single source key."), after the script's earlier writes`,
				`scripts/x.lua:6:40: BITFIELD reads offset there (after "u8"), and the call ends: its words do not fit BITFIELD key [GET encoding offset|[OVERFLOW WRAP|SAT|FAIL] SET encoding offset value|INCRBY encoding offset increment [GET encoding offset|[OVERFLOW WRAP|SAT|FAIL] SET encoding offset value|INCRBY encoding offset increment ...]], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:7:43: BITFIELD_RO reads encoding (i1 to i64, u1 to u63) there, and the call gives "x8": its words do not fit BITFIELD_RO key [GET encoding offset [GET encoding offset ...]], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:8:33: LMPOP reads LEFT or RIGHT there, and the call gives "UP": its words do not fit LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:9:40: ZMPOP reads count there (after "COUNT"), and the call ends: its words do not fit ZMPOP numkeys key [key ...] MIN|MAX [COUNT count], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:10:68: ZUNIONSTORE reads weight there (after "1"), and the call ends: its words do not fit ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:11:47: ZINTER reads SUM, MIN or MAX there, and the call gives "AVG": its words do not fit ZINTER numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:12:37: GEOADD reads a latitude there, from -85.05112878 to 85.05112878, and 85.1 is out of that range: Redis refuses the call at run time ("ERR invalid longitude,latitude pair ..."), after the script's earlier writes`,
			},
		},
		{
			name: "coordinates out of range in the geo commands that read a longitude and latitude",
			src: "-- @key k\n-- @key dst\n-- @return none\nredis.call('GEORADIUS', KEYS[1], 180.5, 0, 1, 'km')\nredis.call('GEORADIUS_RO', KEYS[1], 0, -85.06, 1, 'km')\n" +
				"redis.call('GEOSEARCH', KEYS[1], 'FROMLONLAT', '-181', 0, 'BYRADIUS', 1, 'km')\nredis.call('GEOSEARCHSTORE', KEYS[2], KEYS[1], 'BYBOX', 1, 1, 'km', 'fromlonlat', 0, 86)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:4:34: GEORADIUS reads a longitude there, from -180 to 180, and 180.5 is out of that range: Redis refuses the call at run time ("ERR invalid longitude,latitude pair ..."), after the script's earlier writes`,
				`scripts/x.lua:5:40: GEORADIUS_RO reads a latitude there, from -85.05112878 to 85.05112878, and -85.06 is out of that range: Redis refuses the call at run time ("ERR invalid longitude,latitude pair ..."), after the script's earlier writes`,
				`scripts/x.lua:6:48: GEOSEARCH FROMLONLAT reads a longitude there, from -180 to 180, and -181 is out of that range: Redis refuses the call at run time ("ERR invalid longitude,latitude pair ..."), after the script's earlier writes`,
				`scripts/x.lua:7:86: GEOSEARCHSTORE FROMLONLAT reads a latitude there, from -85.05112878 to 85.05112878, and 86 is out of that range: Redis refuses the call at run time ("ERR invalid longitude,latitude pair ..."), after the script's earlier writes`,
			},
		},
		{
			name: "COUNT given twice to the MPOP commands",
			src: "-- @key k\n-- @arg n int64\n-- @return none\nredis.call('LMPOP', 1, KEYS[1], 'LEFT', 'COUNT', 1, 'COUNT', 2)\nredis.call('BLMPOP', 0, 1, KEYS[1], 'LEFT', 'COUNT', ARGV[1], 'count', 2)\n" +
				"redis.call('ZMPOP', 1, KEYS[1], 'MIN', 'COUNT', 2, 'COUNT', 1)\nredis.call('BZMPOP', 0, 1, KEYS[1], 'MAX', 'COUNT', 1, 'COUNT', 1)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:4:53: LMPOP takes COUNT once, and the call gives it again: Redis refuses the call at run time ("ERR syntax error"), after the script's earlier writes; give one COUNT`,
				`scripts/x.lua:5:63: BLMPOP takes COUNT once, and the call gives it again: Redis refuses the call at run time ("ERR syntax error"), after the script's earlier writes; give one COUNT`,
				`scripts/x.lua:6:52: ZMPOP takes COUNT once, and the call gives it again: Redis refuses the call at run time ("ERR syntax error"), after the script's earlier writes; give one COUNT`,
				`scripts/x.lua:7:56: BZMPOP takes COUNT once, and the call gives it again: Redis refuses the call at run time ("ERR syntax error"), after the script's earlier writes; give one COUNT`,
			},
		},
		{
			name: "blocking timeouts Redis reads as negative",
			src: "-- @key k\n-- @return none\nredis.call('BLMPOP', -1, 1, KEYS[1], 'LEFT')\nredis.call('BZMPOP', '-0.5', 1, KEYS[1], 'MIN')\n" +
				"redis.call('BLMPOP', 1e16, 1, KEYS[1], 'RIGHT')\nredis.call('BLPOP', KEYS[1], -1)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:22: BLMPOP reads a timeout there (seconds, 0 or more; a script never blocks, but Redis reads it), and -1 is negative: Redis refuses the call at run time ("ERR timeout is negative"), after the script's earlier writes; pass 0`,
				`scripts/x.lua:4:22: BZMPOP reads a timeout there (seconds, 0 or more; a script never blocks, but Redis reads it), and -0.5 is negative: Redis refuses the call at run time ("ERR timeout is negative"), after the script's earlier writes; pass 0`,
				`scripts/x.lua:5:22: BLMPOP reads a timeout there (seconds, 0 or more; a script never blocks, but Redis reads it), and 1e16 is too large: Redis counts it in milliseconds, which overflow to a negative number, and refuses the call at run time ("ERR timeout is negative"), after the script's earlier writes; pass 0`,
				`scripts/x.lua:6:12: BLPOP is not allowed in scripts on Redis 7.0 (flagged noscript there; later versions run it without blocking)`,
			},
		},
		{
			name: "BITFIELD offsets out of range, or wrapping around",
			src: "-- @key k\n-- @return none\nredis.call('BITFIELD', KEYS[1], 'SET', 'u8', 4294967296, 1)\nredis.call('BITFIELD_RO', KEYS[1], 'GET', 'u8', 0, 'GET', 'i64', '#67108864')\n" +
				"redis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'FAIL', 'INCRBY', 'u8', '#2305843009213693953', 1)\nredis.call('BITFIELD', KEYS[1], 'GET', 'u8', '#1152921504606846976')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:46: BITFIELD SET reads a bit offset there under 2^32 (4294967296), and 4294967296 is not: Redis refuses the call at run time ("ERR bit offset is not an integer or out of range"), after the script's earlier writes`,
				`scripts/x.lua:4:66: BITFIELD_RO GET reads a bit offset there under 2^32 (4294967296), and "#67108864" of i64 is 4294967296: Redis refuses the call at run time ("ERR bit offset is not an integer or out of range"), after the script's earlier writes`,
				`scripts/x.lua:5:69: BITFIELD INCRBY reads a bit offset there, and "#2305843009213693953" of u8 is 2305843009213693953 times 8, which overflows 64 bits and wraps around to 8: Redis reads that offset instead, without a word; pass the offset Redis should read`,
				`scripts/x.lua:6:46: BITFIELD GET reads a bit offset there under 2^32 (4294967296), and "#1152921504606846976" of u8 is 1152921504606846976 times 8, which overflows 64 bits: Redis refuses the call at run time ("ERR bit offset is not an integer or out of range"), after the script's earlier writes`,
			},
		},
		{
			name: "Lua number literals that do not reach Redis as the integer written",
			src: "-- @key k\n-- @return none\nredis.call('EXPIRE', KEYS[1], 1e17)\nredis.call('INCRBY', KEYS[1], -0)\nredis.call('INCRBY', KEYS[1], 12345678901234567)\n" +
				"redis.call('SET', KEYS[1], 'v', 'PX', 123456789012345678)\nredis.call('LRANGE', KEYS[1], -1.5e17, -0.0)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:31: EXPIRE reads an integer there (seconds), and the Lua number 1e17 is sent as "1e+17" (Redis writes number arguments with %.17g), which is no integer: Redis refuses the call at run time, after the script's earlier writes; write it as a string ('100000000000000000')`,
				`scripts/x.lua:4:31: INCRBY reads an integer there (increment), and the Lua number -0 is sent as "-0", which Redis reads as no integer, or as 0 when the script has a 0 literal before it (Lua 5.1 keeps one constant for both): Redis refuses the call at run time, after the script's earlier writes; write 0`,
				`scripts/x.lua:5:31: INCRBY reads an integer there (increment), and the Lua number 12345678901234567 is a double, which holds every integer only up to 2^53: Redis gets "12345678901234568", and reads that without a word; write it as a string ('12345678901234567')`,
				`scripts/x.lua:6:39: SET PX reads an integer there (milliseconds), and the Lua number 123456789012345678 is sent as "1.2345678901234568e+17" (Redis writes number arguments with %.17g), which is no integer: Redis refuses the call at run time, after the script's earlier writes; write it as a string ('123456789012345678')`,
				`scripts/x.lua:7:31: LRANGE reads an integer there (start), and the Lua number -1.5e17 is sent as "-1.5e+17" (Redis writes number arguments with %.17g), which is no integer: Redis refuses the call at run time, after the script's earlier writes; write it as a string ('-150000000000000000')`,
				`scripts/x.lua:7:40: LRANGE reads an integer there (stop), and the Lua number -0.0 is sent as "-0", which Redis reads as no integer, or as 0 when the script has a 0 literal before it (Lua 5.1 keeps one constant for both): Redis refuses the call at run time, after the script's earlier writes; write 0`,
			},
		},
		{
			name: "SETBIT and GETBIT offsets of 2^32 or more",
			src:  "-- @key k\n-- @return none\nredis.call('SETBIT', KEYS[1], 4294967296, 1)\nredis.call('GETBIT', KEYS[1], '4294967296')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:31: SETBIT reads a bit offset under 4294967296 there, and the call passes 4294967296: Redis refuses it at run time ("ERR bit offset is not an integer or out of range"), after the script's earlier writes; pass an offset from 0 to 4294967295 (2^32 - 1), counted from the start of the string`,
				`scripts/x.lua:4:31: GETBIT reads a bit offset under 4294967296 there, and the call passes 4294967296: Redis refuses it at run time ("ERR bit offset is not an integer or out of range"), after the script's earlier writes; pass an offset from 0 to 4294967295 (2^32 - 1), counted from the start of the string`,
			},
		},
		{
			name: "SETBIT values other than 0 and 1",
			src:  "-- @key k\n-- @return none\nredis.call('SETBIT', KEYS[1], 0, 2)\nredis.call('SETBIT', KEYS[1], 7, '-1')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:34: SETBIT reads a bit under 2 there, and the call passes 2: Redis refuses it at run time ("ERR bit is not an integer or out of range"), after the script's earlier writes; pass 0 or 1`,
				`scripts/x.lua:4:34: SETBIT reads a bit of 0 or more there, and the call passes -1: Redis refuses it at run time ("ERR bit is not an integer or out of range"), after the script's earlier writes; pass 0 or 1`,
			},
		},
		{
			name: "BITPOS bits other than 0 and 1",
			src:  "-- @key k\n-- @return none\nredis.call('BITPOS', KEYS[1], 2)\nredis.call('BITPOS', KEYS[1], '-1', 0, -1)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:31: BITPOS reads a bit under 2 there, and the call passes 2: Redis refuses it at run time ("ERR The bit argument must be 1 or 0."), after the script's earlier writes; pass 0 or 1`,
				`scripts/x.lua:4:31: BITPOS reads a bit of 0 or more there, and the call passes -1: Redis refuses it at run time ("ERR The bit argument must be 1 or 0."), after the script's earlier writes; pass 0 or 1`,
			},
		},
		{
			name: "SETRANGE past 512 MB",
			src: "-- @key k\n-- @return none\nredis.call('SETRANGE', KEYS[1], 536870912, 'x')\nredis.call('SETRANGE', KEYS[1], '536870911', 'xy')\n" +
				"redis.call('SETRANGE', KEYS[1], '9223372036854775807', 'x')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:33: SETRANGE writes its 1-byte value at offset 536870912, which ends past 536870912 bytes (512 MB, proto-max-bulk-len's default): Redis refuses the call at run time ("ERR string exceeds maximum allowed size (proto-max-bulk-len)"), after the script's earlier writes; keep the offset at 536870911 or under`,
				`scripts/x.lua:4:33: SETRANGE writes its 2-byte value at offset 536870911, which ends past 536870912 bytes (512 MB, proto-max-bulk-len's default): Redis refuses the call at run time ("ERR string exceeds maximum allowed size (proto-max-bulk-len)"), after the script's earlier writes; keep the offset at 536870910 or under`,
				`scripts/x.lua:5:33: SETRANGE writes its 1-byte value at offset 9223372036854775807, which ends past 536870912 bytes (512 MB, proto-max-bulk-len's default): Redis refuses the call at run time ("ERR string exceeds maximum allowed size (proto-max-bulk-len)"), after the script's earlier writes; keep the offset at 536870911 or under`,
			},
		},
		{
			name: "BITCOUNT and BITPOS ranges Redis 7.0 refuses",
			src: "-- @key k\n-- @return none\nredis.call('BITCOUNT', KEYS[1], 0)\nredis.call('BITCOUNT', KEYS[1], 0, -1, 'BOT')\nredis.call('BITCOUNT', KEYS[1], 0, -1, 'BIT', 1)\n" +
				"redis.call('BITPOS', KEYS[1], 1, 0, 'BIT')\nredis.call('BITPOS', KEYS[1], 1, 'x', -1, 'BOT')\nredis.call('BITPOS', KEYS[1], 1, 0, 'x', 'BOT')\nredis.call('BITCOUNT', KEYS[1], 0, 1e17)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:33: BITCOUNT takes a start only with an end (BITCOUNT key [start end [BIT|BYTE]]), and the call passes a start alone: Redis refuses the call at run time when the key holds a string ("ERR syntax error"), after the script's earlier writes`,
				`scripts/x.lua:4:40: BITCOUNT reads BIT or BYTE there (BITCOUNT key [start end [BIT|BYTE]]), and "BOT" is neither: Redis refuses the call at run time when the key holds a string ("ERR syntax error"), after the script's earlier writes`,
				`scripts/x.lua:5:47: BITCOUNT takes up to 3 words of range, start, end and BIT or BYTE (BITCOUNT key [start end [BIT|BYTE]]), and the call passes 4: Redis refuses the call at run time when the key holds a string ("ERR syntax error"), after the script's earlier writes`,
				`scripts/x.lua:6:37: BITPOS reads an end there (an integer; BITPOS key bit [start [end [BIT|BYTE]]]), and "BIT" is none: Redis refuses the call at run time when the key holds a string ("ERR value is not an integer or out of range"), after the script's earlier writes`,
				`scripts/x.lua:7:34: BITPOS reads a start there (an integer; BITPOS key bit [start [end [BIT|BYTE]]]), and "x" is none: Redis refuses the call at run time when the key holds a string ("ERR value is not an integer or out of range"), after the script's earlier writes`,
				`scripts/x.lua:8:42: BITPOS reads BIT or BYTE there (BITPOS key bit [start [end [BIT|BYTE]]]), and "BOT" is neither: Redis refuses the call at run time when the key holds a string ("ERR syntax error"), after the script's earlier writes`,
				`scripts/x.lua:9:36: BITCOUNT reads an end there (an integer; BITCOUNT key [start end [BIT|BYTE]]), and the Lua number 1e17 is sent as "1e+17" (Redis writes number arguments with %.17g), which is no integer: Redis refuses the call at run time, after the script's earlier writes; write it as a string ('100000000000000000')`,
			},
		},
		{
			name: "SORT BY a pattern or GET, which Redis Cluster refuses",
			src:  "-- @key k\n-- @return none\nredis.call('SORT', KEYS[1], 'BY', 'w_*')\nredis.call('SORT_RO', KEYS[1], 'LIMIT', 0, 1, 'GET', '#')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:3:29: SORT BY "w_*" reads keys the pattern names, which Redis Cluster refuses ("ERR BY option of SORT denied in Cluster mode."), after the script's earlier writes: sort by the values themselves and read the other keys in the script (passed in KEYS), or mark the script @cluster-unsafe if it never runs on Redis Cluster`,
				`scripts/x.lua:4:47: SORT_RO GET reads keys a pattern names, which Redis Cluster refuses ("ERR GET option of SORT denied in Cluster mode."), after the script's earlier writes: sort by the values themselves and read the other keys in the script (passed in KEYS), or mark the script @cluster-unsafe if it never runs on Redis Cluster`,
			},
		},
		{
			name: "XADD and XTRIM given two trimming strategies or an unknown XTRIM word",
			src: "-- @key s\n-- @return none\n" +
				"redis.call('XADD', KEYS[1], 'MAXLEN', 1, 'MINID', 1, '*', 'f', 'v')\n" +
				"redis.call('XADD', KEYS[1], 'MINID', '~', '1-1', 'minid', '2', '*', 'f', 'v')\n" +
				"redis.call('XTRIM', KEYS[1], 'MAXLEN', 1, 'MINID', 1)\n" +
				"redis.call('XTRIM', KEYS[1], 'MAXLEN', 1, 'FOO')\n" +
				"return nil\n",
			want: []string{
				`scripts/x.lua:3:42: XADD takes one trimming strategy, and the call gives MINID after MAXLEN: Redis refuses the call at run time ("ERR syntax error, MAXLEN and MINID options at the same time are not compatible"), after the script's earlier writes; keep one`,
				`scripts/x.lua:4:50: XADD takes one trimming strategy, and the call gives MINID after MINID: Redis refuses the call at run time ("ERR syntax error, MAXLEN and MINID options at the same time are not compatible"), after the script's earlier writes; keep one`,
				`scripts/x.lua:5:43: XTRIM takes one trimming strategy, and the call gives MINID after MAXLEN: Redis refuses the call at run time ("ERR syntax error, MAXLEN and MINID options at the same time are not compatible"), after the script's earlier writes; keep one`,
				`scripts/x.lua:6:43: XTRIM reads MAXLEN, MINID or LIMIT there, and the call gives "FOO": Redis refuses the call at run time ("ERR syntax error"), after the script's earlier writes`,
			},
		},
		{
			name: "stream ranges: IDs, exclusive bounds past the last ID, counts",
			src: "-- @key s\n-- @return none\n" +
				"redis.call('XRANGE', KEYS[1], '(-', '+')\n" +
				"redis.call('XRANGE', KEYS[1], '-', '5 ')\n" +
				"redis.call('XRANGE', KEYS[1], '(18446744073709551615-18446744073709551615', '+')\n" +
				"redis.call('XREVRANGE', KEYS[1], '(0-0', '-')\n" +
				"redis.call('XRANGE', KEYS[1], 1.5, '+')\n" +
				"redis.call('XPENDING', KEYS[1], 'g', '-', '+', 'x')\n" +
				"redis.call('XPENDING', KEYS[1], 'g', 'IDLE', 5, '1-*', '+', 5)\n" +
				"redis.call('XAUTOCLAIM', KEYS[1], 'g', 'c', 0, '(+')\n" +
				"return nil\n",
			want: []string{
				`scripts/x.lua:3:31: XRANGE reads a stream ID there (start), and "(-" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write -, +, ms-seq (1700000000000-0) or ms, or ( before ms-seq or ms for an exclusive bound`,
				`scripts/x.lua:4:36: XRANGE reads a stream ID there (end), and "5 " is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write -, +, ms-seq (1700000000000-0) or ms, or ( before ms-seq or ms for an exclusive bound`,
				`scripts/x.lua:5:31: XRANGE's exclusive start "(18446744073709551615-18446744073709551615" leaves no ID after it: Redis refuses the call at run time ("ERR invalid start ID for the interval"), after the script's earlier writes`,
				`scripts/x.lua:6:34: XREVRANGE's exclusive end "(0-0" leaves no ID before it: Redis refuses the call at run time ("ERR invalid end ID for the interval"), after the script's earlier writes`,
				`scripts/x.lua:7:31: XRANGE reads a stream ID there (start), and the Lua number 1.5 is sent as "1.5", which is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write the ID as a string ('1700000000000-0')`,
				`scripts/x.lua:8:48: XPENDING reads an integer there (count), and "x" is none: Redis refuses the call at run time ("ERR value is not an integer or out of range"), after the script's earlier writes`,
				`scripts/x.lua:9:49: XPENDING reads a stream ID there (start), and "1-*" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write -, +, ms-seq (1700000000000-0) or ms, or ( before ms-seq or ms for an exclusive bound`,
				`scripts/x.lua:10:48: XAUTOCLAIM reads a stream ID there (start), and "(+" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write -, +, ms-seq (1700000000000-0) or ms, or ( before ms-seq or ms for an exclusive bound`,
			},
		},
		{
			name: "XDEL, XACK, XCLAIM and XAUTOCLAIM IDs, times and counts",
			src: "-- @key s\n-- @return none\n" +
				"redis.call('XDEL', KEYS[1], '1-1', '1--1')\n" +
				"redis.call('XACK', KEYS[1], 'g', '+')\n" +
				"redis.call('XCLAIM', KEYS[1], 'g', 'c', 'x', '1-1')\n" +
				"redis.call('XCLAIM', KEYS[1], 'g', 'c', 0, '1-1', 'JUSTID', '2-2')\n" +
				"redis.call('XCLAIM', KEYS[1], 'g', 'c', 0, '1-1', 'IDLE', '1s')\n" +
				"redis.call('XCLAIM', KEYS[1], 'g', 'c', 0, '1-1', 'LASTID', '-')\n" +
				"redis.call('XAUTOCLAIM', KEYS[1], 'g', 'c', '1.0', '0')\n" +
				"redis.call('XAUTOCLAIM', KEYS[1], 'g', 'c', 0, '0', 'COUNT', 0)\n" +
				"return nil\n",
			want: []string{
				`scripts/x.lua:3:36: XDEL reads a stream ID there (ID), and "1--1" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument") whenever the stream exists, after the script's earlier writes; write ms-seq (1700000000000-0) or ms`,
				`scripts/x.lua:4:34: XACK reads a stream ID there (ID), and "+" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument") whenever the stream and the group exist, after the script's earlier writes; write ms-seq (1700000000000-0) or ms`,
				`scripts/x.lua:5:41: XCLAIM reads an integer there (min-idle-time), and "x" is none: Redis refuses the call at run time ("ERR Invalid min-idle-time argument for XCLAIM") whenever the stream and the group exist, after the script's earlier writes`,
				`scripts/x.lua:6:61: XCLAIM reads an ID (ms-seq (1700000000000-0) or ms) or an option (FORCE, IDLE, JUSTID, LASTID, RETRYCOUNT, TIME) there, and "2-2" is neither: Redis refuses the call at run time ("ERR Unrecognized XCLAIM option '2-2'") whenever the stream and the group exist, after the script's earlier writes; write the IDs first, then the options`,
				`scripts/x.lua:7:59: XCLAIM reads an integer there (idle), and "1s" is none: Redis refuses the call at run time ("ERR Invalid IDLE option argument for XCLAIM") whenever the stream and the group exist, after the script's earlier writes`,
				`scripts/x.lua:8:61: XCLAIM reads a stream ID there (LASTID), and "-" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument") whenever the stream and the group exist, after the script's earlier writes; write ms-seq (1700000000000-0) or ms`,
				`scripts/x.lua:9:45: XAUTOCLAIM reads an integer there (min-idle-time), and "1.0" is none: Redis refuses the call at run time ("ERR Invalid min-idle-time argument for XAUTOCLAIM"), after the script's earlier writes`,
				`scripts/x.lua:10:62: XAUTOCLAIM reads a COUNT of 1 to 576460752303423487 there, and the call passes 0: Redis refuses the call at run time ("ERR COUNT must be > 0"), after the script's earlier writes`,
			},
		},
		{
			name: "XSETID and XGROUP IDs and counts",
			src: "-- @key s\n-- @return none\n" +
				"redis.call('XSETID', KEYS[1], '-')\n" +
				"redis.call('XSETID', KEYS[1], '5-0', 'ENTRIESADDED', -1)\n" +
				"redis.call('XSETID', KEYS[1], '5', 'MAXDELETEDID', '5-1')\n" +
				"redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '+', 'MKSTREAM')\n" +
				"redis.call('XGROUP', 'SETID', KEYS[1], 'g', '>')\n" +
				"redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '$', 'ENTRIESREAD', -2)\n" +
				"return nil\n",
			want: []string{
				`scripts/x.lua:3:31: XSETID reads a stream ID there (last-id), and "-" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write ms-seq (1700000000000-0) or ms`,
				`scripts/x.lua:4:54: XSETID reads a count of 0 or more there (entries-added), and the call passes -1: Redis refuses the call at run time ("ERR entries_added must be positive"), after the script's earlier writes`,
				`scripts/x.lua:5:52: XSETID's max-deleted-id "5-1" is past its last-id "5": Redis refuses the call at run time ("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"), after the script's earlier writes`,
				`scripts/x.lua:6:46: XGROUP CREATE reads a stream ID there (id), and "+" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write $ for the stream's last entry, ms-seq (1700000000000-0) or ms`,
				`scripts/x.lua:7:45: XGROUP SETID reads a stream ID there (id), and ">" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write $ for the stream's last entry, -, +, ms-seq (1700000000000-0) or ms`,
				`scripts/x.lua:8:66: XGROUP CREATE reads a count of 0 or more, or -1 (unknown), there (entries-read), and the call passes -2: Redis refuses the call at run time ("ERR value for ENTRIESREAD must be positive or -1"), after the script's earlier writes`,
			},
		},
		{
			name: "XREAD and XREADGROUP: BLOCK, COUNT, and the IDs after STREAMS",
			src: "-- @key s\n-- @key t\n-- @return none\n" +
				"redis.call('XREAD', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')\n" +
				"redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 100, 'STREAMS', KEYS[1], '>')\n" +
				"redis.call('XREAD', 'COUNT', '10x', 'STREAMS', KEYS[1], '0')\n" +
				"redis.call('XREAD', 'STREAMS', KEYS[1], KEYS[2], '0')\n" +
				"redis.call('XREAD', 'STREAMS', KEYS[1], '>')\n" +
				"redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], '$')\n" +
				"redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], KEYS[2], '>', '-')\n" +
				"return nil\n",
			want: []string{
				`scripts/x.lua:4:21: XREAD's BLOCK is refused in scripts: Redis refuses the call at run time ("ERR XREAD command is not allowed with BLOCK option from scripts"), after the script's earlier writes; leave BLOCK out: a script cannot wait, and reads what is there`,
				`scripts/x.lua:5:45: XREADGROUP's BLOCK is refused in scripts: Redis refuses the call at run time ("ERR XREADGROUP command is not allowed with BLOCK option from scripts"), after the script's earlier writes; leave BLOCK out: a script cannot wait, and reads what is there`,
				`scripts/x.lua:6:30: XREAD reads an integer there (count), and "10x" is none: Redis refuses the call at run time ("ERR value is not an integer or out of range"), after the script's earlier writes`,
				`scripts/x.lua:7:32: XREAD reads as many IDs as keys after STREAMS, and the call gives 3 words there: Redis refuses the call at run time ("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."), after the script's earlier writes; give each key its ID`,
				`scripts/x.lua:8:41: XREAD takes no > ID: Redis refuses the call at run time ("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."), after the script's earlier writes; write $ for entries added from now on, or an ID`,
				`scripts/x.lua:9:65: XREADGROUP takes no $ ID: Redis refuses the call at run time ("ERR The $ ID is meaningless in the context of XREADGROUP: ..."), after the script's earlier writes; write > for entries never delivered to the group, or an ID to read the consumer's pending entries`,
				`scripts/x.lua:10:79: XREADGROUP reads a stream ID there (ID), and "-" is none: Redis refuses the call at run time ("ERR Invalid stream ID specified as stream command argument"), after the script's earlier writes; write >, ms-seq (1700000000000-0) or ms`,
			},
		},
		{
			name: "SORT words that fit no reading of its syntax",
			src: "-- @key k\n-- @key dst\n-- @arg by string\n-- @return none\nredis.call('SORT', KEYS[1], 'LIMIT', 0)\nredis.call('SORT', KEYS[1], 'BY', ARGV[1], 'GET')\n" +
				"redis.call('SORT', KEYS[1], 'ALPHA', 'STORE')\nredis.call('SORT', KEYS[1], 'LIMIT', 'x', 10)\nredis.call('SORT', KEYS[1], 'REVERSE')\n" +
				"redis.call('SORT_RO', KEYS[1], 'STORE', KEYS[2])\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:38: SORT reads count there (after "0"), and the call ends: its words do not fit SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:6:44: SORT reads pattern there (after "GET"), and the call ends: its words do not fit SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:7:38: SORT reads destination there (after "STORE"), and the call ends: its words do not fit SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:8:38: SORT reads offset (an integer) there, and the call gives "x": its words do not fit SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:9:29: SORT reads BY, LIMIT, GET, ASC, DESC, ALPHA, STORE or nothing more there, and the call gives "REVERSE": its words do not fit SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:10:32: SORT_RO reads BY, LIMIT, GET, ASC, DESC, ALPHA or nothing more there, and the call gives "STORE": its words do not fit SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA], so Redis refuses the call at run time, after the script's earlier writes`,
			},
		},
		{
			name: "integer literals Redis reads strictly",
			src: "-- @key dst\n-- @key a\n-- @return none\nredis.call('ZUNIONSTORE', KEYS[1], '01', KEYS[2])\nredis.call('EXPIRE', KEYS[1], '+10')\n" +
				"redis.call('SORT', KEYS[2], 'LIMIT', '0', '1.0')\nredis.call('LRANGE', KEYS[2], ' 0', 1e3)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:4:36: ZUNIONSTORE reads an integer there (numkeys), and "01" is none (Redis reads an integer's digits alone: no leading zero, "+", space, decimal point or exponent): Redis refuses the call at run time`,
				`scripts/x.lua:5:31: EXPIRE reads an integer there (seconds), and "+10" is none (Redis reads an integer's digits alone: no leading zero, "+", space, decimal point or exponent): Redis refuses the call at run time`,
				`scripts/x.lua:6:43: SORT reads count (an integer) there, and the call gives "1.0": its words do not fit SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination], so Redis refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:7:31: LRANGE reads an integer there (start), and " 0" is none (Redis reads an integer's digits alone: no leading zero, "+", space, decimal point or exponent): Redis refuses the call at run time`,
			},
		},
		{
			name: "key count out of the keys given",
			src: "-- @key dst\n-- @key a\n-- @key b\n-- @return none\nredis.call('ZINTERSTORE', KEYS[1], 3, KEYS[2], KEYS[3])\nredis.call('SINTERCARD', 0, KEYS[2])\n" +
				"redis.call('LMPOP', 3, KEYS[2], 'LEFT')\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:36: ZINTERSTORE reads a count of keys there (numkeys), and the call passes 3 but gives 2 words after it: Redis refuses the call at run time, after the script's earlier writes; pass as many keys as the count says`,
				`scripts/x.lua:6:26: SINTERCARD reads a count of keys there (numkeys), and the call passes 0: Redis takes 1 or more and refuses the call at run time, after the script's earlier writes`,
				`scripts/x.lua:7:21: LMPOP reads a count of keys there (numkeys), and the call passes 3 but gives 2 words after it: Redis refuses the call at run time, after the script's earlier writes; pass as many keys as the count says`,
			},
		},
		{
			name: "options without the options they need, or with ones they exclude",
			src: "-- @key k\n-- @key dst\n-- @return none\nredis.call('ZRANGE', KEYS[1], 0, -1, 'REV', 'LIMIT', 0, 1)\nredis.call('ZRANGESTORE', KEYS[2], KEYS[1], 0, -1, 'LIMIT', 0, 1)\n" +
				"redis.call('ZRANGE', KEYS[1], '-', '+', 'BYLEX', 'WITHSCORES')\nredis.call('XADD', KEYS[1], 'MAXLEN', 5, 'LIMIT', 10, '*', 'f', 'v')\nredis.call('XTRIM', KEYS[1], 'MINID', '=', 5, 'LIMIT', 10)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:4:45: ZRANGE's option LIMIT needs BYSCORE or BYLEX among the options, and the call gives none: Redis refuses the call at run time ("ERR syntax error, ..."), after the script's earlier writes`,
				`scripts/x.lua:5:52: ZRANGESTORE's option LIMIT needs BYSCORE or BYLEX among the options, and the call gives none: Redis refuses the call at run time ("ERR syntax error, ..."), after the script's earlier writes`,
				`scripts/x.lua:6:50: ZRANGE takes BYLEX or WITHSCORES, not both: Redis refuses the call at run time ("ERR syntax error, WITHSCORES not supported in combination with BYLEX"), after the script's earlier writes`,
				`scripts/x.lua:7:42: XADD's option LIMIT needs ~ among the options, and the call gives none: Redis refuses the call at run time ("ERR syntax error, ..."), after the script's earlier writes`,
				`scripts/x.lua:8:47: XTRIM's option LIMIT needs ~ among the options, and the call gives none: Redis refuses the call at run time ("ERR syntax error, ..."), after the script's earlier writes`,
			},
		},
		{
			name: "errors are collected and sorted",
			src:  "-- @key k\n-- @arg n int32\n-- @bogus\nreturn redis.call('GET', 'x')\n",
			want: []string{
				`scripts/x.lua:1:1: missing @return (use "@return none" for a script without a reply)`,
				`scripts/x.lua:1:9: key "k" (KEYS[1]) is declared but never used`,
				`scripts/x.lua:2:11: unknown type "int32": argument types are string, bytes, int64, float64, bool, duration (sent as milliseconds), time (sent as unix milliseconds)`,
				`scripts/x.lua:3:4: unknown directive @bogus`,
				`scripts/x.lua:4:26: key position of GET holds the literal "x": pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "scripts/x.lua"
			}
			got := checkFiles(t, File{Path: file, Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckAccepts(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"keys in locals", "-- @key a\n-- @return none\nlocal k = KEYS[1]\nreturn redis.call('GET', k)\n"},
		{"keys a local function is passed", "-- @key a\n-- @key b\n-- @arg n string\n-- @return none\nlocal del = function(x, y) redis.call('DEL', x) redis.call('SET', x, y) end\ndel(KEYS[1], ARGV[1])\ndel(KEYS[2] .. ':x', 'v')\n" +
			"local function g(x) x = KEYS[1] redis.call('DEL', x) end\ng(ARGV[1])\nreturn nil\n"},
		{"reply of a command in a returned table that its words fit", "-- @key k\n-- @return {n int64, s float64}\nreturn {redis.call('ZADD', KEYS[1], 1, 'm'), redis.call('ZADD', KEYS[1], 'INCR', 1, 'm')}\n"},
		{"replies of commands in a returned table that fit", "-- @key k\n-- @arg pick string\n-- @return {a string, b string?, n int64}\nif ARGV[1] == 'a' then return {'a', redis.call('GET', KEYS[1]), redis.call('TTL', KEYS[1])} end\n" +
			"local v = redis.call('HGET', KEYS[1], 'f')\nif not v then v = 'none' end\nreturn {v, redis.call('HGET', KEYS[1], 'g') or false, redis.call('PTTL', KEYS[1])}\n"},
		{"key of a function replaced by another key", "-- @key a\n-- @key b\n-- @return none\nlocal k = KEYS[1]\nlocal function del() redis.call('DEL', k) end\ndel()\nk = KEYS[2] .. ':x'\ndel()\nreturn nil\n"},
		{"MIGRATE with KEYS and an empty key", "-- @key k\n-- @key j\n-- @arg pw string\n-- @return none\nredis.call('MIGRATE', 'h', 6380, '', 0, 100, 'COPY', 'AUTH', ARGV[1], 'KEYS', KEYS[1], KEYS[2])\nreturn nil\n"},
		{"values taken out of a list holding arrays", "-- @key k\n-- @return []string\nlocal r = redis.call('SSCAN', KEYS[1], 0)\nreturn r[2]\n"},
		{"list elements of the kind read", "-- @key k\n-- @arg pick string\n-- @return []int64\nif ARGV[1] == 'a' then return redis.call('SMISMEMBER', KEYS[1], 'a') end\nreturn redis.call('LPOS', KEYS[1], 'a', 'COUNT', 0)\n"},
		{"list elements of mixed kinds", "-- @key k\n-- @return []string\nreturn redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n"},
		{"ZADD INCR score", "-- @key k\n-- @return float64\nreturn redis.call('ZADD', KEYS[1], 'incr', 1, 'm')\n"},
		{"ZADD INCR NX score", "-- @key k\n-- @return float64?\nreturn redis.call('ZADD', KEYS[1], 'NX', 'INCR', 1, 'm')\n"},
		{"ZADD count with a member named INCR", "-- @key k\n-- @return int64\nreturn redis.call('ZADD', KEYS[1], 'CH', 1, 'INCR')\n"},
		{"LPOS COUNT list", "-- @key k\n-- @return []int64\nreturn redis.call('LPOS', KEYS[1], 'm', 'RANK', -1, 'COUNT', 0)\n"},
		{"SORT STORE count", "-- @key k\n-- @key d\n-- @return int64\nreturn redis.call('SORT', KEYS[1], 'LIMIT', 0, 5, 'ALPHA', 'STORE', KEYS[2])\n"},
		{"LCS LEN and IDX", "-- @key a\n-- @key b\n-- @arg pick string\n-- @return int64\nif ARGV[1] == 'x' then return #redis.call('LCS', KEYS[1], KEYS[2], 'IDX', 'MINMATCHLEN', 2) end\nreturn redis.call('LCS', KEYS[1], KEYS[2], 'LEN')\n"},
		{"option the checker cannot read", "-- @key k\n-- @arg opt string\n-- @return int64?\nreturn redis.call('LPOS', KEYS[1], 'm', ARGV[1], 2)\n"},
		{"XREAD streams in KEYS after a number argument", "-- @key a\n-- @key b\n-- @arg n int64\n-- @arg id string\n-- @return none\nredis.call('XREAD', 'COUNT', ARGV[1], 'STREAMS', KEYS[1], KEYS[2], ARGV[2], '0')\nreturn nil\n"},
		{"SORT STORE destination in KEYS", "-- @key k\n-- @key dst\n-- @arg n int64\n-- @return int64\nreturn redis.call('SORT', KEYS[1], 'BY', 'nosort', 'LIMIT', 0, ARGV[1], 'store', KEYS[2] .. ':x')\n"},
		{"publish channel literal", "-- @return int64\nreturn redis.call('PUBLISH', 'chan', 'msg')\n"},
		{"value literals", "-- @key a\n-- @return none\nreturn redis.call('SET', KEYS[1], 'v', 'PX', '100')\n"},
		{"variadic keys dynamic", "-- @key first\n-- @key rest...\n-- @return none\nfor i = 1, #KEYS do redis.call('DEL', KEYS[i]) end\n"},
		{"unpack all args", "-- @key k\n-- @arg fields... string\n-- @return int64\nreturn redis.call('HDEL', KEYS[1], unpack(ARGV))\n"},
		{"trailing descriptions", "-- @key k  the lock\n-- @arg n int64  how many\n-- @return int64  the count\n-- @readonly  reads only\nreturn (tonumber(redis.call('GET', KEYS[1])) or 0) + ARGV[1]\n"},
		{"declared dynamic command", "-- @key ch\n-- @arg cmd string\n-- @commands publish spublish\n-- @return int64\nreturn redis.call(ARGV[1], KEYS[1] .. ':x', 'm')\n"},
		{"local declared nil, then a key", "-- @key a\n-- @key b\n-- @return none\nlocal k\nif #KEYS > 1 then k = KEYS[2] else k = KEYS[1] end\nreturn redis.call('GET', k)\n"},
		{"same local name in two scopes", "-- @key a\n-- @arg f string\n-- @return int64\nfor _, k in ipairs(ARGV) do redis.call('HDEL', KEYS[1], k) end\nfor _, k in ipairs(KEYS) do redis.call('DEL', k) end\nreturn 1\n"},
		{"shadowed in an inner block", "-- @key a\n-- @return none\nlocal k = KEYS[1]\ndo local k = 'x' end\nreturn redis.call('GET', k)\n"},
		{"comparison returned as a bool", "-- @key k\n-- @return bool\nreturn redis.call('EXISTS', KEYS[1]) == 1\n"},
		{"key formatted from a key", "-- @key k\n-- @return string?\nreturn redis.call('GET', string.format('%s:x', KEYS[1]))\n"},
		{"local replaced on one path", "-- @key k\n-- @return string\nlocal v = redis.call('GET', KEYS[1])\nif not v then v = 'none' end\nreturn v\n"},
		{"local replaced in a loop after a return in it", "-- @key k\n-- @return string\nlocal v = 0\nfor i = 1, 2 do\n  if i == 2 then return v end\n  v = redis.call('GET', KEYS[1]) or ''\nend\nreturn 'none'\n"},
		{"local replaced in a function", "-- @return string\nlocal v = 0\nlocal function set() v = 'x' end\nset()\nreturn v\n"},
		{"local replaced in a function passed to pcall", "-- @return string\nlocal v = 0\nwhile true do\n  if v ~= 0 then return v end\n  pcall(function() v = 'x' end)\nend\n"},
		{"local counted on one path", "-- @key k\n-- @return int64\nlocal n = 0\nif redis.call('EXISTS', KEYS[1]) == 1 then n = redis.call('INCR', KEYS[1]) end\nreturn n\n"},
		{"local that may hold a fitting value", "-- @key k\n-- @return int64\nlocal v = redis.call('GET', KEYS[1])\nif not v then v = 0 end\nreturn v\n"},
		{"integer literals Redis reads", "-- @key k\n-- @return none\nredis.call('EXPIRE', KEYS[1], 1.0)\nredis.call('EXPIRE', KEYS[1], 1e3)\nredis.call('LRANGE', KEYS[1], '-1', 0x10)\n" +
			"redis.call('SCAN', '01')\nredis.call('SORT', KEYS[1], 'LIMIT', 0, 1.0)\nredis.call('ZINCRBY', KEYS[1], '01.5', 'm')\nreturn nil\n"},
		{"integer arguments", "-- @key k\n-- @arg ms duration\n-- @arg n int64\n-- @arg at time\n-- @arg s int64\n-- @arg f float64\n-- @return none\n" +
			"redis.call('SET', KEYS[1], 'v', 'PX', ARGV[1])\nredis.call('PEXPIREAT', KEYS[1], ARGV[3])\nredis.call('EXPIRE', KEYS[1], ARGV[4])\n" +
			"redis.call('INCRBY', KEYS[1], ARGV[2])\nredis.call('ZINCRBY', KEYS[1], ARGV[5], 'm')\nredis.call('EXPIRE', KEYS[1], 1e3)\n" +
			"redis.call('EXPIRE', KEYS[1], math.floor(ARGV[1] / 1000))\nredis.call('PEXPIRE', KEYS[1], ARGV[1] * 2)\nredis.call('LRANGE', KEYS[1], '0', -1)\nredis.call('SET', KEYS[1], 'PX')\nreturn nil\n"},
		{"comparisons of one type", "-- @key k\n-- @arg limit int64\n-- @arg owner string\n-- @return int64\nlocal n = tonumber(ARGV[1])\n" +
			"if n > 0 and #KEYS >= 1 and redis.call('GET', KEYS[1]) == ARGV[2] and redis.call('EXISTS', KEYS[1]) == 1 and ARGV[2] ~= 'x' then return 1 end\n" +
			"if (redis.call('GET', KEYS[1]) or '') .. 'x' == 'ax' and tonumber(redis.call('GET', KEYS[1])) > 5 then return 2 end\nreturn 0\n"},
		{"typed arguments compared with what their callers send", "-- @key k\n-- @arg flag bool\n-- @arg n int64\n-- @arg s string\n-- @return int64\n" +
			"if ARGV[1] == '1' and ARGV[2] ~= '-5' and ARGV[3] == 'true' and redis.call('GET', KEYS[1]) == false and redis.call('HGET', KEYS[1], 'f') ~= false then return 1 end\nreturn 0\n"},
		{"fields of replies that have them", "-- @key k\n-- @return string\nlocal h = redis.call('HGETALL', KEYS[1])\nlocal first = h[1]\n" +
			"if redis.call('SET', KEYS[1], 'v').ok == 'OK' and redis.pcall('GET', KEYS[1]).err == nil then return redis.call('TYPE', KEYS[1]).ok end\nreturn first or ''\n"},
		{"replies and booleans the decoders read after switching to RESP3", "-- @key k\n-- @return bool\nredis.setresp(3)\nif #KEYS > 5 then return redis.call('EXISTS', KEYS[1]) == 1 end\nreturn false\n"},
		{"RESP3 shapes the decoders read", "-- @key k\n-- @return map[string]string\nredis.setresp(3)\nif #KEYS > 5 then return redis.call('HGETALL', KEYS[1]) end\nreturn redis.call('ZRANGE', KEYS[1], 0, -1)\n"},
		{"RESP3 double as float64, RESP2 booleans after switching back", "-- @key k\n-- @return float64?\nredis.setresp(3)\nlocal s = redis.call('ZSCORE', KEYS[1], 'm')\nif #KEYS > 5 then return s end\nredis.setresp(2)\nif not s then return false end\nreturn redis.call('HGET', KEYS[1], 'f')\n"},
		{"reply called before switching to RESP3", "-- @key k\n-- @return []string\nlocal r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\nredis.setresp(3)\nredis.call('HGETALL', KEYS[1])\nreturn r\n"},
		{"replies whose count or option fits @return", "-- @key k\n-- @arg n int64\n-- @arg opt string\n-- @return []string?\nif #KEYS > 5 then return redis.call('LPOP', KEYS[1], ARGV[1]) end\n" +
			"if #KEYS > 4 then return redis.call('LPOP', KEYS[1], unpack(ARGV)) end\nif #KEYS > 3 then return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES') end\nreturn redis.call('SPOP', KEYS[1], 2)\n"},
		{"one value, pairs and records that fit", "-- @key k\n-- @return {member string?, score string?}\nif #KEYS > 5 then return redis.call('ZPOPMIN', KEYS[1]) end\n" +
			"if #KEYS > 4 then return redis.call('HRANDFIELD', KEYS[1], 1, 'WITHVALUES') end\nreturn redis.call('SPOP', KEYS[1], 2)\n"},
		{"pairs from options", "-- @key k\n-- @arg n int64\n-- @arg opt string\n-- @return map[string]string\nif #KEYS > 5 then return redis.call('ZRANGE', KEYS[1], 0, -1, ARGV[2]) end\n" +
			"if #KEYS > 4 then return redis.call('HRANDFIELD', KEYS[1], ARGV[1], 'withvalues') end\nreturn redis.call('ZPOPMAX', KEYS[1], ARGV[1])\n"},
		{"one value without a count", "-- @key k\n-- @return string?\nif #KEYS > 5 then return redis.call('ZRANDMEMBER', KEYS[1]) end\nreturn redis.call('RPOP', KEYS[1])\n"},
		{"coordinates at the ends of the range Redis takes", "-- @key k\n-- @key dst\n-- @return none\nredis.call('GEOADD', KEYS[1], -180, -85.05112878, 'a', 180, 85.05112878, 'b')\n" +
			"redis.call('GEORADIUS', KEYS[1], 180, 85.05112878, 1, 'km')\nredis.call('GEORADIUS_RO', KEYS[1], -180, '-85.05112878', 1, 'km')\n" +
			"redis.call('GEOSEARCH', KEYS[1], 'FROMLONLAT', '180', -85.05112878, 'BYRADIUS', 1, 'km')\nredis.call('GEOSEARCHSTORE', KEYS[2], KEYS[1], 'FROMLONLAT', -180, 85.05112878, 'BYBOX', 1, 1, 'km')\nreturn nil\n"},
		{"one COUNT to the MPOP commands, and COUNT as a key", "-- @key k\n-- @key c\n-- @arg n int64\n-- @return none\nredis.call('LMPOP', 2, KEYS[1], KEYS[2], 'LEFT', 'COUNT', 1)\n" +
			"redis.call('ZMPOP', ARGV[1], KEYS[1], 'COUNT', 'MIN', 'COUNT', 1)\nreturn nil\n"},
		{"blocking timeouts Redis reads as 0 or more", "-- @key k\n-- @return none\nredis.call('BLMPOP', 0, 1, KEYS[1], 'LEFT')\nredis.call('BZMPOP', '-0.001', 1, KEYS[1], 'MIN')\n" +
			"redis.call('BLMPOP', -0, 1, KEYS[1], 'RIGHT')\nredis.call('BZMPOP', '9223372036854775', 1, KEYS[1], 'MAX')\nreturn nil\n"},
		{"BITFIELD offsets under 2^32", "-- @key k\n-- @arg off string\n-- @return none\nredis.call('BITFIELD', KEYS[1], 'GET', 'u8', 4294967295, 'SET', 'i64', '#67108863', 1)\n" +
			"redis.call('BITFIELD_RO', KEYS[1], 'GET', 'i1', '#4294967295', 'GET', 'u8', '#536870911')\nredis.call('BITFIELD', KEYS[1], 'GET', 'u8', ARGV[1], 'GET', 'u8', 4294967296)\nreturn nil\n"},
		{"Lua number literals Redis reads as the integer written", "-- @key k\n-- @return none\nredis.call('INCRBY', KEYS[1], 1e16)\nredis.call('INCRBY', KEYS[1], 9007199254740992)\n" +
			"redis.call('INCRBY', KEYS[1], -99999999999999984)\nredis.call('INCRBY', KEYS[1], 0)\nredis.call('INCRBY', KEYS[1], '123456789012345678')\n" +
			"redis.call('SET', KEYS[1], 1e17)\nredis.call('INCRBYFLOAT', KEYS[1], 1e17)\nredis.call('ZINCRBY', KEYS[1], -0, 'm')\nredis.call('SCAN', -0)\nreturn nil\n"},
		{"SETBIT and GETBIT offsets under 2^32", "-- @key k\n-- @arg off int64\n-- @return none\nredis.call('SETBIT', KEYS[1], 4294967295, 0)\nredis.call('GETBIT', KEYS[1], '4294967295')\n" +
			"redis.call('SETBIT', KEYS[1], 0, '1')\nredis.call('SETBIT', KEYS[1], 1, ARGV[1])\n" +
			"redis.call('BITPOS', KEYS[1], 0)\nredis.call('BITPOS', KEYS[1], '1', 0, -1)\nredis.call('BITPOS', KEYS[1], ARGV[1])\n" +
			"redis.call('SETRANGE', KEYS[1], 536870911, 'x')\nredis.call('SETRANGE', KEYS[1], '536870910', 'xy')\nredis.call('SETRANGE', KEYS[1], '9223372036854775807', '')\n" +
			"redis.call('SETRANGE', KEYS[1], ARGV[1], 'x')\nredis.call('SETRANGE', KEYS[1], 536870912, 1)\n" +
			"redis.call('BITCOUNT', KEYS[1])\nredis.call('BITCOUNT', KEYS[1], 0, -1)\nredis.call('BITCOUNT', KEYS[1], '0', -1, 'bit')\nredis.call('BITCOUNT', KEYS[1], ARGV[1], -1, 'BYTE')\n" +
			"redis.call('BITPOS', KEYS[1], 1, 0)\nredis.call('BITPOS', KEYS[1], 0, 2, -1)\nredis.call('BITPOS', KEYS[1], 1, 0, -1, 'Byte')\nredis.call('BITPOS', KEYS[1], 1, 0, ARGV[1], 'BIT')\n" +
			"redis.call('GETBIT', KEYS[1], ARGV[1])\nreturn nil\n"},
		{"integer literals in the range Redis takes", "-- @key k\n-- @arg n int64\n-- @return none\nredis.call('LPOP', KEYS[1], 0)\nredis.call('SRANDMEMBER', KEYS[1], -3)\nredis.call('SETBIT', KEYS[1], 0, 1)\n" +
			"redis.call('SCAN', 0, 'COUNT', 1)\nredis.call('LPOS', KEYS[1], 'a', 'RANK', -1, 'COUNT', 0, 'MAXLEN', 0)\nredis.call('LPOS', KEYS[1], 'a', ARGV[1], 0)\nredis.call('SPOP', KEYS[1], ARGV[1])\nreturn nil\n"},
		{"comparison after switching to RESP3", "-- @key k\n-- @return int64\nredis.setresp(3)\nif redis.call('ZSCORE', KEYS[1], 'm') == 1 then return 1 end\nreturn 0\n"},
		{"options", "-- @key k\n-- @key dst\n-- @arg opt string\n-- @return none\nredis.call('SET', KEYS[1], 'v', 'px', 100, 'nx', 'GET')\n" +
			"redis.call('SET', KEYS[1], 'v', ARGV[1], 'ANYTHING')\nredis.call('SCAN', 0, 'MATCH', 'COUNT', 'COUNT', 10)\n" +
			"redis.call('LMOVE', KEYS[1], KEYS[2], 'left', 'RIGHT')\nredis.call('EXPIRE', KEYS[1], 10, 'GT')\nredis.call('LOLWUT', 'VERSION', 5, 'extra')\nreturn nil\n"},
		{"options Redis takes together", "-- @key k\n-- @key dst\n-- @return none\nredis.call('PEXPIRE', KEYS[1], 100, 'XX', 'GT')\n" +
			"redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'LEFT')\nredis.call('GEORADIUS', KEYS[1], 0, 0, 1, 'km', 'ASC', 'DESC')\nredis.call('SET', KEYS[1], 'v', 'NX', 'GET', 'EX', 1)\nreturn nil\n"},
		{"number arguments", "-- @key k\n-- @arg member string\n-- @arg score float64\n-- @arg opt string\n-- @arg n int64\n-- @return none\n" +
			"redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])\nredis.call('ZADD', KEYS[1], ARGV[3], ARGV[2], ARGV[1])\n" +
			"redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1], ARGV[1], ARGV[1])\nredis.call('ZADD', KEYS[1], 'incr', ARGV[4], 'm')\n" +
			"redis.call('ZADD', KEYS[1], unpack(ARGV))\nredis.call('ZCOUNT', KEYS[1], '(1', '+inf')\nredis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(5')\n" +
			"redis.call('HINCRBYFLOAT', KEYS[1], 'f', '0x1A')\nredis.call('INCRBYFLOAT', KEYS[1], 0x10)\nredis.call('INCRBYFLOAT', KEYS[1], '1e500')\n" +
			"redis.call('GEOADD', KEYS[1], 'CH', 13.36, 38.11, 'Palermo')\nredis.call('INCRBYFLOAT', KEYS[1], ARGV[4])\nreturn nil\n"},
		{"table with numbered fields", "-- @key k\n-- @return []string\nreturn {[1] = 'a', [2] = KEYS[1]}\n"},
		{"status table with more fields", "-- @return string\nreturn {ok = 'fine', note = 'x'}\n"},
		{"several values returned by a function the script calls", "-- @return int64\nlocal function two() return 1, 2 end\nlocal a, b = two()\nreturn a + b\n"},
		{"local tested for nil before it is returned", "-- @key k\n-- @return string\nlocal v = redis.call('get', KEYS[1]); if not v then return '' end; return v\n"},
		{"local compared with false before it is returned", "-- @key k\n-- @return string\nlocal v = redis.call('GET', KEYS[1])\nif v == false or v == '' then error('empty') end\nreturn v\n"},
		{"local returned in the branches of a nil test", "-- @key k\n-- @return string\nlocal v = redis.call('GET', KEYS[1])\nif v then return v end\nif not v then return 'none' else return v end\n"},
		{"local returned after a nil test with else", "-- @key k\n-- @return string\nlocal v = redis.call('HGET', KEYS[1], 'f')\nif v ~= false then redis.call('DEL', KEYS[1]) else return '' end\nreturn v\n"},
		{"local of several values tested for nil", "-- @key k\n-- @return string\nlocal v = false\nif #KEYS > 0 then v = redis.call('GET', KEYS[1]) end\nif not v then return '' end\nreturn v\n"},
		{"keys extended on the right, or given to tostring", "-- @key k\n-- @return none\nredis.call('SET', KEYS[1] .. ':x', 'v')\nredis.call('GET', tostring(KEYS[1]))\nredis.call('DEL', string.format('%s:y', KEYS[1]))\nredis.call('SET', KEYS[1], KEYS[1]:upper())\nreturn nil\n"},
		{"score member pairs after options the checker cannot read", "-- @key k\n-- @arg opt string\n-- @arg m string\n-- @return none\nredis.call('ZADD', KEYS[1], ARGV[1], 1, ARGV[2])\nredis.call('ZADD', KEYS[1], ARGV[1], ARGV[1], 1, ARGV[2])\nredis.call('ZADD', KEYS[1], 'CH', ARGV[1], 1, 'a', 2, 'b')\nreturn nil\n"},
		{"array reply with nil elements into nullable fields", "-- @key k\n-- @return {a string?, b string?, c string?}\nreturn redis.call('HMGET', KEYS[1], 'a', 'b', 'c')\n"},
		{"nil tests that work", "-- @key k\n-- @arg a string\n-- @arg b string\n-- @return int64\nif ARGV[2] == nil then return 0 end\nif not redis.call('GET', KEYS[1]) then return 1 end\n" +
			"if redis.call('GET', KEYS[1]) == false then return 2 end\nlocal v\nif #ARGV > 1 then v = redis.call('GET', KEYS[1]) end\nif v == nil then return 3 end\nreturn 4\n"},
		{"reply compared with nil under RESP3", "-- @key k\n-- @return int64\nredis.setresp(3)\nif redis.call('GET', KEYS[1]) == nil then return 1 end\nreturn 0\n"},
		{"replies that may be nil as conditions", "-- @key k\n-- @return int64\nif redis.call('GET', KEYS[1]) then return 1 end\nlocal v = redis.call('SET', KEYS[1], 'v', 'NX')\n" +
			"if not v then return 2 end\nif redis.call('EXISTS', KEYS[1]) == 1 and redis.call('ZSCORE', KEYS[1], 'm') then return 3 end\nlocal n = redis.call('INCR', KEYS[1]) or 0\nreturn n\n"},
		{"integer reply as a condition under RESP3", "-- @key k\n-- @return int64\nredis.setresp(3)\nif redis.call('EXISTS', KEYS[1]) then return 1 end\nreturn 0\n"},
		{"status replies read through ok, and SET with GET", "-- @key k\n-- @arg opt string\n-- @return int64\nif redis.call('TYPE', KEYS[1]).ok == 'hash' then return 1 end\n" +
			"if redis.call('SET', KEYS[1], 'v', 'GET') == 'old' then return 2 end\nif redis.call('SET', KEYS[1], 'v', ARGV[1]) == 'old' then return 3 end\nif redis.call('PING', 'x') == 'x' then return 4 end\nreturn 0\n"},
		{"status reply that may be nil against false", "-- @key k\n-- @return int64\nif redis.call('SET', KEYS[1], 'v', 'NX') == false then return 0 end\nreturn 1\n"},
		{"ZADD options Redis takes together", "-- @key k\n-- @return none\nredis.call('ZADD', KEYS[1], 'XX', 'GT', 'CH', 1, 'm', 2, 'n')\nredis.call('ZADD', KEYS[1], 'NX', 'CH', 'INCR', 1, 'm')\nreturn nil\n"},
		{"key replaced by keys in a loop", "-- @key first\n-- @key rest...\n-- @return none\nlocal k = KEYS[1]\nfor i = 2, #KEYS do\n  redis.call('DEL', k)\n  k = KEYS[i]\nend\nreturn nil\n"},
		{"local counted in a loop", "-- @key k\n-- @return int64\nlocal n = 0\nfor i = 1, 2 do n = redis.call('INCR', KEYS[1]) end\nreturn n\n"},
		{"local in a loop that may end up fitting", "-- @key k\n-- @return int64\nlocal v = 'x'\nlocal w = 0\nwhile v ~= w do\n  v = w\n  w = redis.call('GET', KEYS[1])\nend\nreturn v\n"},
		{"local read by a return above its assignment in a loop", "-- @key k\n-- @return int64\nlocal v = 'x'\nfor i = 1, 3 do\n  if i == 3 then return v end\n  v = redis.call('INCR', KEYS[1])\nend\nreturn 0\n"},
		{"local replaced in sequence", "-- @key k\n-- @return string?\nlocal v = redis.call('INCR', KEYS[1])\nv = redis.call('GET', KEYS[1])\nreturn v\n"},
		{"local shadowed in an inner block", "-- @return int64\nlocal v = 5\ndo local v = 'x' end\nreturn v\n"},
		{"bool from a ZADD of one member", "-- @key z\n-- @arg score int64\n-- @arg m string\n-- @return bool\n" +
			"if ARGV[2] == 'a' then return redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) end\n" +
			"return redis.call('ZADD', KEYS[1], 'nx', 'CH', ARGV[1], ARGV[2])\n"},
		{"bool from a GEOADD of one member, an XDEL or XACK of one ID", "-- @key k\n-- @arg m string\n-- @return bool\n" +
			"if ARGV[1] == 'a' then return redis.call('GEOADD', KEYS[1], 13.361389, 38.115556, 'Palermo') end\n" +
			"if ARGV[1] == 'b' then return redis.call('GEOADD', KEYS[1], 'XX', 'ch', 13.361389, 38.115556, 'Palermo') end\n" +
			"if ARGV[1] == 'c' then return redis.call('XDEL', KEYS[1], '1-1') end\n" +
			"return redis.call('XACK', KEYS[1], 'g', '1-1')\n"},
		{"local from a command replying 0 or 1", "-- @key k\n-- @return bool\nlocal ok = redis.call('SETNX', KEYS[1], 1)\nreturn ok\n"},
		{"local table changed after it is made", "-- @return string\nlocal t = {}\nt.ok = 'OK'\nreturn t\n"},
		{"bool from replies of 0 or 1", "-- @key k\n-- @arg m string\n-- @return bool\n" +
			"if ARGV[1] == 'a' then return redis.call('SETNX', KEYS[1], 1) end\n" +
			"if ARGV[1] == 'b' then return redis.call('HSETNX', KEYS[1], 'f', 1) end\n" +
			"if ARGV[1] == 'c' then return redis.call('PEXPIRE', KEYS[1], 100) end\n" +
			"if ARGV[1] == 'd' then return redis.call('SISMEMBER', KEYS[1], ARGV[1]) end\n" +
			"if ARGV[1] == 'e' then return redis.call('EXISTS', KEYS[1]) end\n" +
			"if ARGV[1] == 'f' then return redis.call('DEL', KEYS[1]) end\n" +
			"if ARGV[1] == 'g' then return redis.call('HDEL', KEYS[1], 'f') end\n" +
			"return redis.call('SADD', KEYS[1], ARGV[1])\n"},
		{"bool from a comparison of a count", "-- @key k\n-- @return bool\nreturn redis.call('TTL', KEYS[1]) > 0\n"},
		{"globals of Redis's script sandbox", "-- @key k\n-- @return string\n" +
			"local n = tonumber(redis.call('GET', KEYS[1])) or 0\n" +
			"local t = {string.format('%d', math.floor(n)), tostring(bit.band(n, 1)), type(cjson.encode({}))}\n" +
			"table.insert(t, cmsgpack.pack(1) .. struct.pack('>I', 1))\n" +
			"for _, v in ipairs(t) do assert(v) end\n" +
			"for k, v in pairs({}) do error(k) end\n" +
			"local ok = pcall(tonumber, 1) and xpcall(tostring, type) and select('#', unpack(t)) and next(t)\n" +
			"setmetatable(t, getmetatable({})); rawset(t, 'x', rawget(t, 1)); ok = rawequal(t, t) and _VERSION\n" +
			"ok = collectgarbage and gcinfo and coroutine\n" +
			"return table.concat(t, ',')\n"},
		{"local named like a missing global", "-- @return string\nlocal print = tostring\nreturn print(1)\n"},
		{"index in any Lua 5.1 number form", "-- @key a\n-- @key b\n-- @arg v string\n-- @return none\nreturn redis.call('SET', KEYS[0x1], ARGV[1.0] .. ARGV[1e0] .. ARGV[0.1e1], 'PX', 10) and redis.call('GET', KEYS[0X2])\n"},
		{"command name from a hexadecimal index", "-- @key ch\n-- @arg cmd string\n-- @commands publish spublish\n-- @return int64\nreturn redis.call(ARGV[0x1], KEYS[1], 'm')\n"},
		{"XADD words that fit its syntax", "-- @key s\n-- @arg id string\n-- @arg n int64\n-- @arg fields... string\n-- @return none\n" +
			"redis.call('XADD', KEYS[1], '*', 'f', 'v', 'g', 'w')\nredis.call('XADD', KEYS[1], 'nomkstream', 'MAXLEN', '~', 1000, 'LIMIT', 10, '*', 'f', 'v')\n" +
			"redis.call('XADD', KEYS[1], 'MAXLEN', 5, 'NOMKSTREAM', '1-1', 'f', 'v')\nredis.call('XADD', KEYS[1], 'LIMIT', 10, 'MINID', '~', '0-1', '1-*', 'f', 'v')\n" +
			"redis.call('XADD', KEYS[1], ARGV[1], 'f', 'v')\nredis.call('XADD', KEYS[1], 'MAXLEN', ARGV[2], '*', 'f', 'v')\nredis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))\n" +
			"redis.call('XADD', KEYS[1], ARGV[1], ARGV[1], ARGV[1], 'f', 'v')\nreturn nil\n"},
		{"SORT words Redis Cluster takes", "-- @key k\n-- @key dst\n-- @arg p string\n-- @return none\nredis.call('SORT', KEYS[1], 'BY', 'nosort', 'LIMIT', 0, 10, 'STORE', KEYS[2])\n" +
			"redis.call('SORT_RO', KEYS[1], 'ALPHA', 'DESC', 'BY', ARGV[1])\nreturn nil\n"},
		{"SORT GET in a script Redis Cluster refuses", "#!lua flags=no-cluster\n-- @key k\n-- @return none\nredis.call('SORT', KEYS[1], 'GET', '#')\nreturn nil\n"},
		{"XADD and XTRIM IDs and counts Redis reads", "-- @key s\n-- @arg id string\n-- @return none\nredis.call('XADD', KEYS[1], '0-*', 'f', 'v')\nredis.call('XADD', KEYS[1], 1, 'f', 'v')\n" +
			"redis.call('XADD', KEYS[1], 'MINID', '=', 5, '1-1', 'f', 'v')\nredis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], ARGV[1], 'f', 'v')\nredis.call('XADD', KEYS[1], 'MAXLEN', 0, 'NOMKSTREAM', '*', 'f', 'v')\n" +
			"redis.call('XTRIM', KEYS[1], 'MINID', '~', '0')\nreturn nil\n"},
		{"words of BITOP, BITFIELD, the MPOP and the sorted set combining commands that Redis reads", "-- @key k\n-- @key j\n-- @arg w float64\n-- @return none\n" +
			"redis.call('BITOP', 'not', KEYS[1], KEYS[2])\nredis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'SAT')\nredis.call('BITFIELD', KEYS[1], 'GET', 'i64', '#2', 'OVERFLOW', 'fail', 'INCRBY', 'u63', 0, -1)\n" +
			"redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u8', 0, 'GET', 'i1', 7)\nredis.call('LMPOP', 2, KEYS[1], KEYS[2], 'RIGHT', 'COUNT', 2)\n" +
			"redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[1], KEYS[2], 'WEIGHTS', 1.5, ARGV[1], 'AGGREGATE', 'min', 'WEIGHTS', 1, 'inf')\n" +
			"redis.call('ZINTER', 2, KEYS[1], KEYS[2], 'WITHSCORES')\nredis.call('GEOADD', KEYS[1], -180, '85.05112878', 'm', 180, -85.05112878, 'n')\nreturn nil\n"},
		{"XADD and XTRIM trimming Redis takes", "-- @key s\n-- @arg a string\n-- @arg b string\n-- @return none\n" +
			"redis.call('XTRIM', KEYS[1], 'MINID', '~', '+5', 'LIMIT', 10)\n" +
			"redis.call('XTRIM', KEYS[1], 'LIMIT', 10, 'maxlen', '~', 0)\n" +
			"redis.call('XADD', KEYS[1], 'MAXLEN', '~', 1, 'LIMIT', 0, 'NOMKSTREAM', '*', 'f', 'v')\n" +
			"redis.call('XADD', KEYS[1], 'MINID', ' 007-0', '*', 'f', 'v')\n" +
			"redis.call('XTRIM', KEYS[1], 'MAXLEN', 1, ARGV[1], ARGV[2])\n" +
			"return nil\n"},
		{"stream ranges Redis reads", "-- @key s\n-- @arg a string\n-- @arg b string\n-- @return none\n" +
			"redis.call('XRANGE', KEYS[1], '+5', ' 007-0', 'COUNT', -1)\n" +
			"redis.call('XRANGE', KEYS[1], '(1', '(2')\n" +
			"redis.call('XREVRANGE', KEYS[1], '(+5', '(0')\n" +
			"redis.call('XRANGE', KEYS[1], '(18446744073709551615', '(1-18446744073709551615')\n" +
			"redis.call('XRANGE', KEYS[1], ARGV[1], '(' .. ARGV[2])\n" +
			"redis.call('XPENDING', KEYS[1], 'g', 'IDLE', -5, '(0', '(5', -5, 'c')\n" +
			"redis.call('XPENDING', KEYS[1], 'g', ARGV[1], ARGV[2], '-', '+', 5)\n" +
			"redis.call('XAUTOCLAIM', KEYS[1], 'g', 'c', -1, '-', 'COUNT', 1, 'JUSTID')\n" +
			"redis.call('XAUTOCLAIM', KEYS[1], 'g', 'c', 0, '(0', 'COUNT', '576460752303423487')\n" +
			"return nil\n"},
		{"XDEL, XACK, XCLAIM, XSETID and XGROUP IDs and options Redis reads", "-- @key s\n-- @arg a string\n-- @arg b string\n-- @return none\n" +
			"redis.call('XDEL', KEYS[1], '1-1', 7, '1--0', ARGV[1])\n" +
			"redis.call('XACK', KEYS[1], 'g', '0-0', unpack(ARGV))\n" +
			"redis.call('XCLAIM', KEYS[1], 'g', 'c', -5, '1-1', '2', 'idle', -5, 'TIME', -1, 'RETRYCOUNT', -1, 'FORCE', 'JUSTID', 'LASTID', '5')\n" +
			"redis.call('XCLAIM', KEYS[1], 'g', 'c', 0, 'FORCE')\n" +
			"redis.call('XCLAIM', KEYS[1], 'g', 'c', 0, '1-1', ARGV[1], 'abc')\n" +
			"redis.call('XSETID', KEYS[1], '5', 'ENTRIESADDED', 0, 'MAXDELETEDID', '4-18446744073709551615')\n" +
			"redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '0-0', 'MKSTREAM', 'ENTRIESREAD', -1)\n" +
			"redis.call('XGROUP', 'SETID', KEYS[1], 'g', '-')\n" +
			"redis.call('XGROUP', 'SETID', KEYS[1], 'g', '$', 'ENTRIESREAD', 0)\n" +
			"return nil\n"},
		{"XREAD and XREADGROUP IDs and counts Redis reads", "-- @key s\n-- @key t\n-- @arg a string\n-- @arg b string\n-- @return none\n" +
			"redis.call('XREAD', 'COUNT', -1, 'STREAMS', KEYS[1], KEYS[2], '$', '0')\n" +
			"redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 0, 'NOACK', 'STREAMS', KEYS[1], '>')\n" +
			"redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], '+5')\n" +
			"redis.call('XREAD', 'STREAMS', KEYS[1], ARGV[1])\n" +
			"redis.call('XREAD', 'STREAMS', KEYS[1], ARGV[2])\n" +
			"return nil\n"},
		{"SORT words that fit its syntax", "-- @key k\n-- @key dst\n-- @arg off int64\n-- @arg opt string\n-- @cluster-unsafe\n-- @return none\n" +
			"redis.call('SORT', KEYS[1], 'BY', 'nosort', 'LIMIT', 0, 10, 'GET', '#', 'GET', 'o_*', 'DESC', 'ALPHA', 'STORE', KEYS[2])\n" +
			"redis.call('SORT', KEYS[1], 'alpha', 'limit', ARGV[1], '10', 'ASC', 'DESC', 'ALPHA')\nredis.call('SORT', KEYS[1], ARGV[2], ARGV[2])\n" +
			"redis.call('SORT', KEYS[1], 'STORE', KEYS[2], 'LIMIT', 0, 1)\nredis.call('SORT_RO', KEYS[1], 'BY', 'ALPHA', 'ALPHA')\nredis.call('SORT', KEYS[1])\nreturn nil\n"},
		{"key counts that fit the keys given", "-- @key dst\n-- @key a\n-- @key rest...\n-- @arg n int64\n-- @return none\n" +
			"redis.call('ZINTERSTORE', KEYS[1], 2, KEYS[2], KEYS[3], 'WEIGHTS', 1, 2)\nredis.call('SINTERCARD', 1, KEYS[2], 'LIMIT', 5)\n" +
			"redis.call('ZUNIONSTORE', KEYS[1], #KEYS - 1, unpack(KEYS, 2))\nredis.call('ZUNION', 3, KEYS[2], unpack(KEYS, 3))\nredis.call('LMPOP', ARGV[1], KEYS[2], 'LEFT')\nreturn nil\n"},
		{"options with the options they need", "-- @key k\n-- @key dst\n-- @arg by string\n-- @return none\n" +
			"redis.call('ZRANGE', KEYS[1], 0, -1, 'LIMIT', 0, 1, 'byscore')\nredis.call('ZRANGE', KEYS[1], 0, -1, ARGV[1], 'LIMIT', 0, 1)\nredis.call('ZRANGESTORE', KEYS[2], KEYS[1], '-', '+', 'BYLEX', 'LIMIT', 0, 1)\n" +
			"redis.call('ZRANGE', KEYS[1], '-inf', '+inf', 'BYSCORE', 'WITHSCORES')\nredis.call('XADD', KEYS[1], 'MAXLEN', '~', 5, 'LIMIT', 10, '*', 'f', 'v')\nredis.call('XTRIM', KEYS[1], 'LIMIT', 10, 'MINID', '~', 5)\nreturn nil\n"},
		{"empty script", "-- @return none\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)}); got != nil {
				t.Errorf("rejected:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

func TestCheckPackage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []File
		want  []string
	}{
		{
			name: "duplicate script name",
			files: []File{
				{Path: "scripts/a.lua", Source: []byte("-- @name Lock\n-- @return none\n")},
				{Path: "scripts/b.lua", Source: []byte("-- x\n-- @name Lock\n-- @return none\n")},
			},
			want: []string{`scripts/b.lua:2:10: duplicate script name "Lock" (also in scripts/a.lua:1)`},
		},
		{
			name: "error codes disagree",
			files: []File{
				{Path: "scripts/a.lua", Source: []byte("-- @error NOT_HELD lock is not held\n-- @return none\n")},
				{Path: "scripts/b.lua", Source: []byte("-- @return none\n-- @error NOT_HELD not held\n")},
			},
			want: []string{`scripts/b.lua:2:11: @error NOT_HELD has a different message in scripts/a.lua:1: "lock is not held"`},
		},
		{
			name: "error codes agree",
			files: []File{
				{Path: "scripts/a.lua", Source: []byte("-- @error NOT_HELD not held\n-- @return none\n")},
				{Path: "scripts/b.lua", Source: []byte("-- @return none\n-- @error NOT_HELD not held\n")},
			},
		},
		{
			name: "error codes clash in Go",
			files: []File{
				{Path: "scripts/a.lua", Source: []byte("-- @error NOT_HELD not held\n-- @error NOT__HELD other\n-- @return none\n")},
			},
			want: []string{`scripts/a.lua:2:11: @error codes NOT_HELD and NOT__HELD both become ErrNotHeld`},
		},
		{
			name: "generated names clash",
			files: []File{
				{Path: "scripts/lock.lua", Source: []byte("-- @return none\n")},
				{Path: "scripts/lock_multi.lua", Source: []byte("-- @return none\n")},
			},
			want: []string{`scripts/lock_multi.lua:1:1: generated name LockMulti of script "LockMulti" clashes with generated name LockMulti of script "Lock" (scripts/lock.lua:1)`},
		},
		{
			name: "generated decoder clashes",
			files: []File{
				{Path: "scripts/lock.lua", Source: []byte("-- @return none\n")},
				{Path: "scripts/x.lua", Source: []byte("-- @name DecodeLock\n-- @return none\n")},
			},
			want: []string{`scripts/x.lua:1:10: generated name DecodeLock of script "DecodeLock" clashes with generated name DecodeLock of script "Lock" (scripts/lock.lua:1)`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, tc.files...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}

// checkWarnings checks that src is accepted with the warnings want, and that
// -strict refuses it exactly when there is one.
func checkWarnings(t *testing.T, src string, want []string) {
	t.Helper()
	files := []File{{Path: "scripts/x.lua", Source: []byte(src)}}
	_, warnings, err := GenerateWarnings("generated", files, false)
	if err != nil {
		t.Fatalf("not strict: %v", err)
	}
	var got []string
	for _, w := range warnings {
		got = append(got, w.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	_, _, err = GenerateWarnings("generated", files, true)
	if (err != nil) != (len(want) > 0) {
		t.Errorf("strict: err = %v, want an error only with a warning", err)
	}
}

// TestClusterUnsafeFlags: a @cluster-unsafe script with a #!lua line that
// lets Redis Cluster refuse keys of several slots gets a warning, which
// -strict refuses.
func TestClusterUnsafeFlags(t *testing.T) {
	const body = "-- @key k\n-- @arg other string\n-- @cluster-unsafe\n-- @return int64\nredis.call('DEL', KEYS[1])\nreturn redis.call('DEL', ARGV[1])\n"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "flags without allow-cross-slot-keys",
			src:  "#!lua flags=allow-oom\n" + body,
			want: []string{`scripts/x.lua:1:1: warning: the #!lua line has no flag allow-cross-slot-keys, but @cluster-unsafe (line 4) says the script reaches keys not passed in KEYS: in Redis Cluster such a script fails when they hash to another slot than its first key ("Script attempted to access keys that do not hash to the same slot"); add allow-cross-slot-keys (or no-cluster, for a script not run on Cluster), or keep those keys in the slot of KEYS with a hash tag`},
		},
		{
			name: "bare #!lua line",
			src:  "#!lua\n" + body,
			want: []string{`scripts/x.lua:1:1: warning: the #!lua line has no flag allow-cross-slot-keys, but @cluster-unsafe (line 4) says the script reaches keys not passed in KEYS: in Redis Cluster such a script fails when they hash to another slot than its first key ("Script attempted to access keys that do not hash to the same slot"); add allow-cross-slot-keys (or no-cluster, for a script not run on Cluster), or keep those keys in the slot of KEYS with a hash tag`},
		},
		{name: "allow-cross-slot-keys", src: "#!lua flags=allow-oom,allow-cross-slot-keys\n" + body},
		{name: "no-cluster", src: "#!lua flags=no-cluster\n" + body},
		{name: "no #! line", src: body},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWarnings(t, tc.src, tc.want) })
	}
}

// TestComputedSubcommand: a container command (CLIENT, OBJECT, XGROUP, ...)
// whose subcommand is not a literal cannot be checked (scripts may be refused
// it, its arity, keys and writes are the subcommand's): a warning, which
// -strict refuses. In a @readonly script it is an error (TestGolden,
// readonly_bad).
func TestComputedSubcommand(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "subcommand from an argument",
			src:  "-- @arg sub string\n-- @return none\nreturn redis.call('CLIENT', ARGV[1])\n",
			want: []string{`scripts/x.lua:3:29: warning: CLIENT is called with the subcommand ARGV[1], not a literal: the checker cannot check what it runs (whether scripts may run it, its arguments, keys and writes); write the subcommand as a string literal`},
		},
		{
			name: "subcommand from an expression",
			src:  "-- @key k\n-- @arg sub string\n-- @return string?\nreturn redis.call('OBJECT', string.lower(ARGV[1]), KEYS[1])\n",
			want: []string{`scripts/x.lua:4:29: warning: OBJECT is called with the subcommand an expression, not a literal: the checker cannot check what it runs (whether scripts may run it, its arguments, keys and writes); write the subcommand as a string literal`},
		},
		{
			name: "literal subcommand",
			src:  "-- @key k\n-- @return string?\nreturn redis.call('OBJECT', 'encoding', KEYS[1])\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWarnings(t, tc.src, tc.want) })
	}
}

// TestCheckDeepLoops: a loop's body is walked more than once to gather what
// it assigns; nested loops must not multiply those walks (30 levels would
// never finish).
func TestCheckDeepLoops(t *testing.T) {
	const depth = 30
	var b strings.Builder
	b.WriteString("-- @key k\n-- @return int64\nlocal v = 'x'\n")
	for range depth {
		b.WriteString("for i = 1, 2 do\n")
	}
	b.WriteString("v = redis.call('GET', KEYS[1])\n")
	for range depth {
		b.WriteString("end\n")
	}
	b.WriteString("return v\n")
	got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(b.String())})
	want := fmt.Sprintf("scripts/x.lua:%d:8: v holds the value assigned at line 3 or %d", 2*depth+5, depth+4)
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("checker output %q, want one error starting %q", got, want)
	}
}

// TestIntegerArgWarnings: an @arg whose values need not be integers, where
// Redis reads an integer (or need not be numbers, where it reads a number),
// is a warning; -strict refuses it.
func TestIntegerArgWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "string ttl",
			src:  "-- @key k\n-- @arg ttl string\n-- @return none\nredis.call('SET', KEYS[1], 'v', 'PX', ARGV[1])\nredis.call('PEXPIRE', KEYS[1], ARGV[1])\nreturn nil\n",
			want: []string{
				`scripts/x.lua:4:39: warning: SET PX reads an integer there (milliseconds), and ARGV[1] is @arg ttl string: a value that is no integer fails at run time; declare @arg ttl duration (sent as milliseconds) or int64`,
				`scripts/x.lua:5:32: warning: PEXPIRE reads an integer there (milliseconds), and ARGV[1] is @arg ttl string: a value that is no integer fails at run time; declare @arg ttl duration (sent as milliseconds) or int64`,
			},
		},
		{
			name: "float64 step, and a scan count after a pattern that reads as a keyword",
			src: "-- @key k\n-- @arg step float64\n-- @arg n bytes\n-- @return none\nredis.call('INCRBY', KEYS[1], ARGV[1])\n" +
				"redis.call('SSCAN', KEYS[1], 0, 'MATCH', 'COUNT', 'COUNT', ARGV[2])\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:31: warning: INCRBY reads an integer there (increment), and ARGV[1] is @arg step float64: a value that is no integer fails at run time; declare @arg step int64`,
				`scripts/x.lua:6:60: warning: SSCAN COUNT reads an integer there (count), and ARGV[2] is @arg n bytes: a value that is no integer fails at run time; declare @arg n int64`,
			},
		},
		{
			name: "ZADD's member and score swapped, a string increment",
			src: "-- @key k\n-- @arg member string\n-- @arg score float64\n-- @return none\nredis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])\n" +
				"redis.call('HINCRBYFLOAT', KEYS[1], 'f', ARGV[1])\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:29: warning: ZADD reads a number there (score), and ARGV[1] is @arg member string: a value that is no number fails at run time; declare @arg member float64 or int64`,
				`scripts/x.lua:6:42: warning: HINCRBYFLOAT reads a number there (increment), and ARGV[1] is @arg member string: a value that is no number fails at run time; declare @arg member float64 or int64`,
			},
		},
		{
			name: "ZADD words that may be options",
			src: "-- @key k\n-- @arg member string\n-- @arg score float64\n-- @arg opt string\n-- @return none\n" +
				"redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])\nredis.call('ZADD', KEYS[1], ARGV[3], ARGV[2], ARGV[1])\n" +
				"redis.call('ZADD', KEYS[1], ARGV[3], ARGV[3], ARGV[2], ARGV[1])\nreturn nil\n",
		},
		{
			name: "a reply asserted present",
			src:  "-- @key k\n-- @return int64\nlocal v = assert(redis.call('GET', KEYS[1]))\nreturn v + #assert(redis.call('HGET', KEYS[1], 'f'))\n",
		},
		{
			name: "a division and a product with a fraction",
			src: "-- @key k\n-- @arg ms duration\n-- @return none\nredis.call('EXPIRE', KEYS[1], ARGV[1] / 1000)\nredis.call('PEXPIRE', KEYS[1], ARGV[1] * 1.5)\n" +
				"redis.call('PEXPIRE', KEYS[1], math.floor(ARGV[1] / 2))\nredis.call('INCRBYFLOAT', KEYS[1], ARGV[1] / 3)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:4:31: warning: EXPIRE reads an integer there (seconds), and the argument is a division, which has a fraction unless it comes out even (1500 / 1000 is 1.5): Redis refuses the call then ("value is not an integer or out of range"); round it with math.floor(...) or math.ceil(...)`,
				`scripts/x.lua:5:32: warning: PEXPIRE reads an integer there (milliseconds), and the argument is a product with 1.5, which has a fraction unless it comes out even (1500 / 1000 is 1.5): Redis refuses the call then ("value is not an integer or out of range"); round it with math.floor(...) or math.ceil(...)`,
			},
		},
		{
			// Past the literals a local is followed through (16), one
			// given a bad literal after them is not taken silently.
			name: "a local given more literals than are followed",
			src: func() string {
				var b strings.Builder
				b.WriteString("-- @key k\n-- @arg c string\n-- @return none\nlocal n = 5\n")
				for i := range 16 {
					fmt.Fprintf(&b, "if ARGV[1] == '%d' then n = %d end\n", i, i+10)
				}
				b.WriteString("if ARGV[1] == 'x' then n = '01' end\nredis.call('EXPIRE', KEYS[1], n)\n")
				// Where any string is taken, nothing is to be said.
				b.WriteString("redis.call('SET', KEYS[1], n)\nreturn nil\n")
				return b.String()
			}(),
			want: []string{
				`scripts/x.lua:22:31: warning: EXPIRE gets n there, which holds more literals on some paths than the checker follows (16): it checked those and not the rest, which Redis may refuse at run time; give n fewer literals, or compute it`,
			},
		},
		{
			name: "a local holding a division, and one rounded",
			src: "-- @key k\n-- @arg ms duration\n-- @return none\nlocal s = ARGV[1] / 1000\nredis.call('EXPIRE', KEYS[1], s)\n" +
				"local r = ARGV[1] / 1000\nr = math.floor(r)\nredis.call('EXPIRE', KEYS[1], r)\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:31: warning: EXPIRE reads an integer there (seconds), and the argument is s, a division, which has a fraction unless it comes out even (1500 / 1000 is 1.5): Redis refuses the call then ("value is not an integer or out of range"); round it with math.floor(...) or math.ceil(...)`,
			},
		},
		{
			name: "a negation of a value, directly and through a local",
			src: "-- @key k\n-- @arg n string\n-- @return none\nlocal z = tonumber(ARGV[1])\nredis.call('HINCRBY', KEYS[1], 'f', -z)\n" +
				"redis.call('INCRBY', KEYS[1], -#ARGV[1])\nlocal d = -(z + 1)\nredis.call('DECRBY', KEYS[1], d)\n" +
				"redis.call('LRANGE', KEYS[1], 0, z * -1)\nredis.call('SETRANGE', KEYS[1], -z * 2, 'x')\nlocal k = 3\nredis.call('INCRBY', KEYS[1], (z + 1) * -k)\n" +
				"for i = 0, z do redis.call('LINDEX', KEYS[1], -i) end\nfor i = 1, z, -1 do redis.call('LINDEX', KEYS[1], -i) end\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:37: warning: HINCRBY reads an integer there (increment), and the argument is -z, which is -0 when z is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - z, which gives 0`,
				`scripts/x.lua:6:31: warning: INCRBY reads an integer there (increment), and the argument is -#ARGV[1], which is -0 when #ARGV[1] is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - #ARGV[1], which gives 0`,
				`scripts/x.lua:8:31: warning: DECRBY reads an integer there (decrement), and the argument is d (-(z + 1), assigned at line 7), which is -0 when z + 1 is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - (z + 1) at line 7, which gives 0`,
				`scripts/x.lua:9:34: warning: LRANGE reads an integer there (stop), and the argument is z * -1, which is -0 when z is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - z, which gives 0`,
				`scripts/x.lua:10:33: warning: SETRANGE reads an integer there (offset), and the argument is -z * 2, which is -0 when z * 2 is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - z * 2, which gives 0`,
				`scripts/x.lua:12:31: warning: INCRBY reads an integer there (increment), and the argument is (z + 1) * -k, which is -0 when (z + 1) * k is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - (z + 1) * k, which gives 0`,
				`scripts/x.lua:13:47: warning: LINDEX reads an integer there (index), and the argument is -i, which is -0 when i is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - i, which gives 0`,
				`scripts/x.lua:14:51: warning: LINDEX reads an integer there (index), and the argument is -i, which is -0 when i is 0 (a Lua number is a double): Redis gets "-0" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write 0 - i, which gives 0`,
			},
		},
		{
			name: "a negation subtracted from 0, of a literal, or where Redis reads a number or a value",
			src: "-- @key k\n-- @arg n string\n-- @return none\nlocal z = tonumber(ARGV[1])\nlocal five = 5\nredis.call('INCRBY', KEYS[1], 0 - z)\n" +
				"redis.call('INCRBY', KEYS[1], -5)\nredis.call('INCRBY', KEYS[1], -five)\nredis.call('INCRBY', KEYS[1], 2 * -five)\n" +
				"redis.call('ZINCRBY', KEYS[1], -z, 'm')\nredis.call('INCRBYFLOAT', KEYS[1], -z)\nredis.call('SET', KEYS[1], -z)\n" +
				"redis.call('SCAN', -z)\nlocal d = -z\nd = 0 - z\nredis.call('INCRBY', KEYS[1], d)\n" +
				"redis.call('INCRBY', KEYS[1], -z * -1)\nredis.call('INCRBY', KEYS[1], - -z)\nredis.call('INCRBY', KEYS[1], -'5')\n" +
				"for i = 1, z do redis.call('LINDEX', KEYS[1], -i) end\nfor i = -1, -z, -1 do redis.call('LINDEX', KEYS[1], -i) end\nreturn nil\n",
		},
		{
			name: "a string or float64 RESTORE ttl, with ABSTTL and without",
			src: "-- @key k\n-- @arg ttl string\n-- @arg f float64\n-- @return none\nredis.call('RESTORE', KEYS[1], ARGV[1], 'x', 'REPLACE')\n" +
				"redis.call('RESTORE', KEYS[1], ARGV[2], 'x', 'ABSTTL')\nredis.call('RESTORE', KEYS[1], ARGV[1], 'x', ARGV[2])\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:32: warning: RESTORE reads an integer there (ttl), and ARGV[1] is @arg ttl string: a value that is no integer fails at run time; declare @arg ttl int64`,
				`scripts/x.lua:6:32: warning: RESTORE reads an integer there (ttl), and ARGV[2] is @arg f float64: a value that is no integer fails at run time; declare @arg f int64`,
				`scripts/x.lua:7:32: warning: RESTORE reads an integer there (ttl), and ARGV[1] is @arg ttl string: a value that is no integer fails at run time; declare @arg ttl int64`,
			},
		},
		{
			name: "strings where no integer is read",
			src:  "-- @key k\n-- @arg v string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\nredis.call('ZADD', KEYS[1], 1, ARGV[1])\nreturn nil\n",
		},
		{
			name: "a returned division, directly and through a local",
			src: "-- @arg n int64\n-- @return int64\nif ARGV[1] == '0' then\n  return ARGV[1] / 2\nend\nlocal v = ARGV[1] + 1\n" +
				"if ARGV[1] == '1' then\n  v = (ARGV[1] - 1) * 0.9\nend\nif ARGV[1] == '2' then\n  return v\nend\nreturn 1 + ARGV[1] / 3\n",
			want: []string{
				`scripts/x.lua:4:10: warning: returns a division, which has a fraction unless it comes out even (7 / 2 is 3.5): Redis replies a Lua number as an integer, truncated toward zero (3.5 reaches the caller as 3, -3.5 as -3); round it with math.floor(...) or math.ceil(...), or return string.format('%.17g', ...) and declare @return float64 to keep the fraction (tostring keeps 14 significant digits)`,
				`scripts/x.lua:11:10: warning: returns v, assigned at line 8: a product with 0.9, which has a fraction unless it comes out even (7 / 2 is 3.5): Redis replies a Lua number as an integer, truncated toward zero (3.5 reaches the caller as 3, -3.5 as -3); round it with math.floor(...) or math.ceil(...), or return string.format('%.17g', ...) and declare @return float64 to keep the fraction (tostring keeps 14 significant digits)`,
				`scripts/x.lua:13:8: warning: returns a sum with a division, which has a fraction unless it comes out even (7 / 2 is 3.5): Redis replies a Lua number as an integer, truncated toward zero (3.5 reaches the caller as 3, -3.5 as -3); round it with math.floor(...) or math.ceil(...), or return string.format('%.17g', ...) and declare @return float64 to keep the fraction (tostring keeps 14 significant digits)`,
			},
		},
		{
			name: "a division in a returned array",
			src: "-- @arg n int64\n-- @return []int64\nlocal half = ARGV[1] / 2\nif ARGV[1] == '0' then\n  return {1, half}\nend\n" +
				"return {math.floor(ARGV[1] / 2), math.ceil(half), ARGV[1] * 2}\n",
			want: []string{
				`scripts/x.lua:5:10: warning: returns an array with half (a division, assigned at line 3) at [1], which has a fraction unless it comes out even (7 / 2 is 3.5): Redis replies a Lua number as an integer, truncated toward zero (3.5 reaches the caller as 3, -3.5 as -3); round it with math.floor(...) or math.ceil(...), or return string.format('%.17g', ...) and declare @return []string to keep the fraction (tostring keeps 14 significant digits)`,
			},
		},
		{
			name: "an int64 argument made a number and written back",
			src: "-- @key k\n-- @arg id int64\n-- @arg n int64\n-- @return none\nlocal id = tonumber(ARGV[1])\nredis.call('SET', KEYS[1] .. ':' .. id, 1)\n" +
				"redis.call('INCRBY', KEYS[1], tonumber(ARGV[2]))\nredis.call('SET', KEYS[1], tostring(id))\nreturn nil\n",
			want: []string{
				`scripts/x.lua:6:34: warning: id (tonumber(ARGV[1])) is concatenated (..), which writes a number with 14 significant digits: @arg id int64 from 1e14 on comes out as 1.2345678901235e+17, not its digits, and above 2^53 (9007199254740992) a Lua number has lost digits already; use ARGV[1] itself, a string, there`,
				`scripts/x.lua:7:31: warning: tonumber(ARGV[2]) is passed to INCRBY as a number, which Redis writes with 17 significant digits: @arg n int64 from 1e17 on arrives as 1.2345678901234568e+17, which Redis reads as no integer, and above 2^53 (9007199254740992) a Lua number has lost digits already; pass ARGV[2] itself, a string`,
				`scripts/x.lua:8:28: warning: id (tonumber(ARGV[1])) is given to tostring, which writes a number with 14 significant digits: @arg id int64 from 1e14 on comes out as 1.2345678901235e+17, not its digits, and above 2^53 (9007199254740992) a Lua number has lost digits already; use ARGV[1] itself, a string, there`,
			},
		},
		{
			name: "a float64 argument made a number and written back by Lua",
			src: "-- @key k\n-- @arg f float64\n-- @return none\nlocal f = tonumber(ARGV[1])\nredis.call('SET', KEYS[1], 'v:' .. f)\n" +
				"redis.call('SET', KEYS[1], tostring(tonumber(ARGV[1])))\nredis.call('SET', KEYS[1], f)\nredis.call('SET', KEYS[1], string.format('%.17g', f))\nreturn nil\n",
			want: []string{
				`scripts/x.lua:5:33: warning: f (tonumber(ARGV[1])) is concatenated (..), which writes a number with 14 significant digits: @arg f float64 1.2345678901234567 comes out as 1.2345678901235; use ARGV[1] itself, a string, or string.format('%.17g', ...), which keeps every digit`,
				`scripts/x.lua:6:28: warning: tonumber(ARGV[1]) is given to tostring, which writes a number with 14 significant digits: @arg f float64 1.2345678901234567 comes out as 1.2345678901235; use ARGV[1] itself, a string, or string.format('%.17g', ...), which keeps every digit`,
			},
		},
		{
			name: "an int64 argument compared as a number and written as it came",
			src: "-- @key k\n-- @arg id int64\n-- @arg note string\n-- @return none\nlocal id = tonumber(ARGV[1])\nif id > 0 then\n  redis.call('SET', KEYS[1] .. ':' .. ARGV[1], ARGV[2] .. tonumber(ARGV[2]))\nend\n" +
				"if ARGV[2] == 'x' then\n  id = 1\nend\nredis.call('INCRBY', KEYS[1], id)\nreturn nil\n",
		},
		{
			name: "a number argument ordered as a string",
			src: "-- @key k\n-- @arg limit int64\n-- @arg ttl duration\n-- @return int64\nlocal v = redis.call('GET', KEYS[1])\nif v and v >= ARGV[1] then\n  return 1\nend\n" +
				"local ms = ARGV[2]\nif ms < '1000' then\n  return 2\nend\nif tonumber(v) > tonumber(ARGV[1]) or ARGV[1] == v or v < KEYS[1] then\n  return 3\nend\nreturn 0\n",
			want: []string{
				`scripts/x.lua:6:12: warning: >= compares v (the reply of GET) with ARGV[1] as strings, since ARGV[1] (@arg limit int64) holds its number as text: Lua orders strings character by character, so "10" < "9"; compare numbers: tonumber(...) on both sides`,
				`scripts/x.lua:10:7: warning: < compares ms (ARGV[2]) with "1000" as strings, since ARGV[2] (@arg ttl duration) holds its number as text: Lua orders strings character by character, so "10" < "9"; compare numbers: tonumber(...) on both sides`,
				// (The test of v at line 6 holds in that if only.)
				`scripts/x.lua:13:16: warning: > compares tonumber(v (the reply of GET)), which is nil when GET replies nil: Lua fails the script at run time on nil ("attempt to compare ..."); hold it in a local and test that first (if not v then ... end), or give a default (tonumber(redis.call(...) or '0'))`,
			},
		},
		{
			name: "a value of a returned table that may be nil",
			src: "-- @key k\n-- @arg f string\n-- @return {count int64?, limit int64}\nlocal n = tonumber(redis.call('GET', KEYS[1]))\nif redis.call('EXISTS', KEYS[1]) == 0 then\n  return {n, 5}\nend\n" +
				"if n then\n  return {n, 5}\nend\nif ARGV[1] then\n  return {tonumber(redis.call('HGET', KEYS[1], 'f')) or false, 6}\nend\nreturn {5, tonumber(redis.call('HGET', KEYS[1], 'f'))}\n",
			want: []string{
				`scripts/x.lua:6:10: warning: value 1 of the returned table is n (tonumber of the reply of GET), which is nil when GET replies nil: Redis ends an array at its first nil, so the caller then gets 0 values, not 2; give it a default where it is assigned (tonumber(...) or 0), or put (n or false) in the table: false reaches the caller as nil`,
				`scripts/x.lua:14:8: warning: value 2 of the returned table is tonumber of the reply of HGET, which is nil when HGET replies nil: Redis ends an array at its first nil, so the caller then gets 1 value, not 2; give it a default where it is assigned (tonumber(...) or 0), or put (tonumber(...) or false) in the table: false reaches the caller as nil`,
			},
		},
		{
			name: "an and/or that may give nil in a returned table",
			src: "-- @key k\n-- @return {a string?, b int64?, c int64?}\nlocal v = redis.call('GET', KEYS[1])\nif redis.call('EXISTS', KEYS[1]) == 0 then\n  return {v or false, 5, 6}\nend\n" +
				"if v then\n  return {v, 5, v and 6 or nil}\nend\nreturn {v or nil, redis.call('STRLEN', KEYS[1]) > 0 and 1 or nil, 5}\n",
			want: []string{
				`scripts/x.lua:10:8: warning: value 1 of the returned table is an and/or that may give nil: Redis ends an array at its first nil, so the caller then gets 0 values, not 3; put false in place of nil there (... or false): false reaches the caller as nil`,
			},
		},
		{
			name: "a fraction in a record's integer field",
			src:  "-- @arg n int64\n-- @return {a float64, b int64}\nreturn {tostring(ARGV[1] / 2), ARGV[1] - 0.5}\n",
			want: []string{
				`scripts/x.lua:3:8: warning: returns an array with a sum with 0.5 at [1], which has a fraction unless it comes out even (7 / 2 is 3.5): Redis replies a Lua number as an integer, truncated toward zero (3.5 reaches the caller as 3, -3.5 as -3); round it with math.floor(...) or math.ceil(...), or return string.format('%.17g', ...) and declare field b float64 to keep the fraction (tostring keeps 14 significant digits)`,
			},
		},
		{
			name: "a sum with a literal fraction",
			src: "-- @key k\n-- @arg n int64\n-- @return []int64\nredis.call('EXPIRE', KEYS[1], ARGV[1] + 0.5)\nif ARGV[1] == '0' then\n  return {ARGV[1] - 0.25}\nend\n" +
				"return {math.floor(ARGV[1] + 0.5), ARGV[1] + 1.0}\n",
			want: []string{
				`scripts/x.lua:4:31: warning: EXPIRE reads an integer there (seconds), and the argument is a sum with 0.5, which has a fraction unless it comes out even (1500 / 1000 is 1.5): Redis refuses the call then ("value is not an integer or out of range"); round it with math.floor(...) or math.ceil(...)`,
				`scripts/x.lua:6:10: warning: returns an array with a sum with 0.25 at [0], which has a fraction unless it comes out even (7 / 2 is 3.5): Redis replies a Lua number as an integer, truncated toward zero (3.5 reaches the caller as 3, -3.5 as -3); round it with math.floor(...) or math.ceil(...), or return string.format('%.17g', ...) and declare @return []string to keep the fraction (tostring keeps 14 significant digits)`,
			},
		},
		{
			name: "a division rounded, or returned where no integer is read",
			src:  "-- @arg n int64\n-- @return string\nlocal v = ARGV[1] / 2\nv = math.floor(v)\nif ARGV[1] == '0' then\n  return tostring(ARGV[1] / 2)\nend\nreturn tostring(v)\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWarnings(t, tc.src, tc.want) })
	}
}

// TestUnpackWarnings: unpack of a whole reply whose length the data sets is
// a warning; a reply the script bounds (LIMIT, COUNT, a short index range) or
// a batch is not.
func TestUnpackWarnings(t *testing.T) {
	const tail = ": Lua fails the script once that is about 8000 values (\"too many results to unpack\"); pass it in batches (for i = 1, #t, 1000 do ... unpack(t, i, math.min(i + 999, #t)) ... end)"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "whole replies",
			src: "-- @key a\n-- @key b\n-- @return none\nlocal m = redis.call('SMEMBERS', KEYS[1])\nredis.call('SADD', KEYS[2], unpack(m))\n" +
				"redis.call('RPUSH', KEYS[2], unpack(redis.call('LRANGE', KEYS[1], 0, -1)))\n" +
				"redis.call('ZREM', KEYS[2], unpack(redis.call('ZRANGE', KEYS[1], 0, 4999, 'WITHSCORES')))\n" +
				"redis.call('ZREM', KEYS[2], unpack(redis.call('ZRANGEBYSCORE', KEYS[1], 0, 10, 'LIMIT', 0, 10000)))\nreturn nil\n",
			want: []string{
				"scripts/x.lua:5:29: warning: unpack of m (the reply of SMEMBERS), which lists every member of the set" + tail,
				"scripts/x.lua:6:30: warning: unpack of the reply of LRANGE, which lists every element in the range" + tail,
				"scripts/x.lua:7:29: warning: unpack of the reply of ZRANGE, which lists every member in the range" + tail,
				"scripts/x.lua:8:29: warning: unpack of the reply of ZRANGEBYSCORE, which lists every member in the range" + tail,
			},
		},
		{
			name: "bounded replies and batches",
			src: "-- @key a\n-- @key b\n-- @arg n int64\n-- @return none\nlocal m = redis.call('SMEMBERS', KEYS[1])\n" +
				"for i = 1, #m, 1000 do\n  redis.call('SADD', KEYS[2], unpack(m, i, math.min(i + 999, #m)))\nend\n" +
				"redis.call('RPUSH', KEYS[2], unpack(redis.call('LRANGE', KEYS[1], 0, 99)))\n" +
				"redis.call('RPUSH', KEYS[2], unpack(redis.call('LRANGE', KEYS[1], -100, -1)))\n" +
				"redis.call('RPUSH', KEYS[2], unpack(redis.call('LRANGE', KEYS[1], 0, ARGV[1])))\n" +
				"redis.call('ZREM', KEYS[2], unpack(redis.call('ZRANGEBYSCORE', KEYS[1], 0, 10, 'LIMIT', 0, 1000)))\n" +
				"redis.call('ZREM', KEYS[2], unpack(redis.call('ZRANGEBYSCORE', KEYS[1], 0, 10, 'LIMIT', 0, ARGV[1])))\n" +
				"local a, b = unpack(redis.call('HMGET', KEYS[1], 'a', 'b'))\nreturn nil\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWarnings(t, tc.src, tc.want) })
	}
}
