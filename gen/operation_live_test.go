package gen

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/gen/parse"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// operationCases are scripts that use a reply where Lua fails on false, nil
// or a table (arithmetic, .., #, an ordering), and scripts that deal with
// nil first. Each body runs on a server where its keys are missing (the nil
// case), or hold what setup writes.
var operationCases = []struct {
	name, body string
	ret        string // @return, when not int64?
	setup      string // a script run first, when the keys must hold something
	warning    string // the checker's warning, "" for none
	err        string // the checker's error, "" for none
}{
	{
		name: "GET plus one", body: "return redis.call('GET', KEYS[1]) + 1",
		warning: `scripts/x.lua:3:35: warning: arithmetic (+) on the reply of GET, which is false when GET replies nil: Lua fails the script at run time ("attempt to perform arithmetic on a boolean value"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or 0)`,
	},
	{
		name: "tonumber of GET, held, then added to", body: "local n = tonumber(redis.call('GET', KEYS[1]))\nif n + 1 > 5 then return 1 end\nreturn n * 2",
		warning: `scripts/x.lua:4:6: warning: arithmetic (+) on n (tonumber of the reply of GET), which is nil when GET replies nil: Lua fails the script at run time ("attempt to perform arithmetic on local 'n' (a nil value)"); test n first (if not n then ... end), or give it a default where it is assigned (tonumber(redis.call(...) or '0'))`,
	},
	{
		name: "HGET concatenated", ret: "string", body: "return 'v:' .. redis.call('HGET', KEYS[1], 'f')",
		warning: `scripts/x.lua:3:13: warning: concatenation (..) of the reply of HGET, which is false when HGET replies nil: Lua fails the script at run time ("attempt to concatenate a boolean value"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or '')`,
	},
	{
		name: "length of GET", body: "return #redis.call('GET', KEYS[1])",
		warning: `scripts/x.lua:3:8: warning: # of the reply of GET, which is false when GET replies nil: Lua fails the script at run time ("attempt to get length of a boolean value"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or '')`,
	},
	{
		name: "ZRANK ordered", body: "if redis.call('ZRANK', KEYS[1], 'm') < 3 then return 1 end\nreturn 0",
		warning: `scripts/x.lua:3:38: warning: < compares the reply of ZRANK, which is false when ZRANK replies nil: Lua fails the script at run time on false ("attempt to compare ..."); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or 0)`,
	},
	{
		name: "ZSCORE negated", body: "local s = redis.call('ZSCORE', KEYS[1], 'm')\nreturn -s",
		warning: `scripts/x.lua:4:8: warning: arithmetic (unary -) on s (the reply of ZSCORE), which is false when ZSCORE replies nil: Lua fails the script at run time ("attempt to perform arithmetic on local 's' (a boolean value)"); test s first (if not s then ... end), or give it a default where it is assigned (redis.call(...) or 0)`,
	},
	{
		name: "tested after the use, in a loop", body: "local v = redis.call('GET', KEYS[1])\nlocal t = 0\nfor i = 1, 3 do\n  t = t + v\n  if v then t = 1 end\nend\nreturn t",
		warning: `scripts/x.lua:6:9: warning: arithmetic (+) on v (the reply of GET), which is false when GET replies nil: Lua fails the script at run time ("attempt to perform arithmetic on local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or 0)`,
	},
	{
		name: "another field made sure of", body: "if redis.call('HEXISTS', KEYS[1], 'a') == 0 then return 0 end\nreturn redis.call('HGET', KEYS[1], 'b') + 1",
		setup:   "redis.call('HSET', KEYS[1], 'a', '1')",
		warning: `scripts/x.lua:4:41: warning: arithmetic (+) on the reply of HGET, which is false when HGET replies nil: Lua fails the script at run time ("attempt to perform arithmetic on a boolean value"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or 0)`,
	},
	{
		name: "deleted first", body: "redis.call('DEL', KEYS[1])\nreturn redis.call('GET', KEYS[1]) + 1",
		warning: `scripts/x.lua:4:35: warning: arithmetic (+) on the reply of GET, which is false when GET replies nil: Lua fails the script at run time ("attempt to perform arithmetic on a boolean value"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or 0)`,
	},
	{
		name: "an array reply added to", body: "return redis.call('HMGET', KEYS[1], 'a') + 1",
		err: `scripts/x.lua:3:42: arithmetic (+) on the reply of HMGET, an array (a table in Lua): Lua fails the script at run time ("attempt to perform arithmetic on a table value")`,
	},
	{
		name: "a status reply concatenated", ret: "string", body: "return 'x' .. redis.call('TYPE', KEYS[1])",
		err: `scripts/x.lua:3:12: concatenation (..) of the reply of TYPE, a status reply (a table {ok = ...} in Lua): Lua fails the script at run time ("attempt to concatenate a table value")`,
	},
	{
		name: "length of an integer", body: "return #redis.call('LLEN', KEYS[1])",
		err: `scripts/x.lua:3:8: # of the reply of LLEN, an integer: Lua fails the script at run time on a number ("attempt to get length of a number value"); the reply is the number itself`,
	},
	{
		name: "tonumber of an array", body: "return tonumber(redis.call('HGETALL', KEYS[1])) + 1",
		err: `scripts/x.lua:3:49: arithmetic (+) on tonumber(the reply of HGETALL), which is always nil (HGETALL replies an array (a table in Lua), and tonumber gives nil for a table and for false): Lua fails the script at run time ("attempt to perform arithmetic on a nil value")`,
	},
	{
		name: "GET's length", ret: "int64", body: "return string.len(redis.call('GET', KEYS[1]))",
		warning: `scripts/x.lua:3:15: warning: string.len of the reply of GET, which is false when GET replies nil: Lua fails the script at run time ("bad argument #1 to 'len' (string expected, got boolean)"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or '')`,
	},
	{
		name: "a method of HGET's reply", ret: "string", body: "local v = redis.call('HGET', KEYS[1], 'f')\nreturn v:upper()",
		warning: `scripts/x.lua:4:10: warning: method call :upper() on v (the reply of HGET), which is false when HGET replies nil: Lua fails the script at run time ("attempt to index local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`,
	},
	{
		name: "a method of GET's reply", ret: "string", body: "return redis.call('GET', KEYS[1]):sub(1, 2)",
		warning: `scripts/x.lua:3:35: warning: method call :sub() on the reply of GET, which is false when GET replies nil: Lua fails the script at run time ("attempt to index a boolean value"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or '')`,
	},
	{
		name: "GET decoded", ret: "string?", body: "local d = cjson.decode(redis.call('GET', KEYS[1]))\nreturn d.x",
		warning: `scripts/x.lua:3:17: warning: cjson.decode of the reply of GET, which is false when GET replies nil: Lua fails the script at run time ("bad argument #1 to 'decode' (string expected, got boolean)"); hold it in a local and test that first (if not v then ... end)`,
	},
	{
		name: "GET unpacked", ret: "string?", body: "return cmsgpack.unpack(redis.call('GET', KEYS[1]))",
		warning: `scripts/x.lua:3:17: warning: cmsgpack.unpack of the reply of GET, which is false when GET replies nil: Lua fails the script at run time ("bad argument #1 to 'unpack' (string expected, got boolean)"); hold it in a local and test that first (if not v then ... end)`,
	},
	{
		name: "a substring of an array reply", ret: "string", body: "return string.sub(redis.call('HGETALL', KEYS[1]), 1, 2)",
		err: `scripts/x.lua:3:15: string.sub of the reply of HGETALL, an array (a table in Lua): Lua fails the script at run time ("bad argument #1 to 'sub' (string expected, got table)")`,
	},
	{
		name: "the length of a status reply", ret: "int64", body: "return string.len(redis.call('TYPE', KEYS[1]))",
		err: `scripts/x.lua:3:15: string.len of the reply of TYPE, a status reply (a table {ok = ...} in Lua): Lua fails the script at run time ("bad argument #1 to 'len' (string expected, got table)")`,
	},
	{
		name: "GET copied", body: "local v = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[1] .. ':copy', v)\nreturn 1",
		warning: `scripts/x.lua:4:39: warning: argument 2 of SET is v (the reply of GET), which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`,
	},
	{
		name: "tonumber of GET pushed", body: "return redis.call('LPUSH', KEYS[1], tonumber(redis.call('GET', KEYS[1] .. ':n')))",
		warning: `scripts/x.lua:3:37: warning: argument 2 of LPUSH is tonumber(the reply of GET), which is nil when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); hold it in a local and test that first (if not v then ... end), or give a default (tonumber(redis.call(...) or '0'))`,
	},
	{
		name: "GET's reply written back to its key", body: "return redis.call('SET', KEYS[1], redis.call('GET', KEYS[1]) .. 'x')['ok'] and 1",
		warning: `scripts/x.lua:3:62: warning: concatenation (..) of the reply of GET, which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate a boolean value"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or '')`,
	},
	{
		name: "an array reply as an argument", ret: "string", body: "return redis.call('SET', KEYS[1], redis.call('HGETALL', KEYS[1]))['ok']",
		err: `scripts/x.lua:3:35: argument 2 of SET is the reply of HGETALL, an array (a table in Lua): Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers")`,
	},
	{
		name: "HMGET joined", ret: "string", body: "return table.concat(redis.call('HMGET', KEYS[1], 'a', 'b'), ',')",
		warning: `scripts/x.lua:3:14: warning: table.concat of the reply of HMGET, whose values are false where HMGET finds nothing: Lua fails the script at run time then ("invalid value (boolean) at index 1 in table for 'concat'"); replace them first (for i = 1, #t do t[i] = t[i] or '' end)`,
	},
	{
		name: "GET joined", ret: "string", body: "return table.concat(redis.call('GET', KEYS[1]), ',')",
		err: `scripts/x.lua:3:14: table.concat of the reply of GET, which is no list (GET replies a string or nil): Lua fails the script at run time ("bad argument #1 to 'concat' (table expected, got ...)"); concatenate with .. instead`,
	},
	{
		name: "GET formatted", ret: "string", body: "return string.format('%s:%d', redis.call('GET', KEYS[1]), 5)",
		warning: `scripts/x.lua:3:15: warning: argument 2 of string.format is the reply of GET, which is false when GET replies nil: Lua fails the script at run time ("bad argument #2 to 'format' (... expected, got boolean)"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or '')`,
	},
	{
		name: "tonumber of HGET formatted", ret: "string", body: "return string.format('%d', tonumber(redis.call('HGET', KEYS[1], 'n')))",
		warning: `scripts/x.lua:3:15: warning: argument 2 of string.format is tonumber(the reply of HGET), which is nil when HGET replies nil: Lua fails the script at run time ("bad argument #2 to 'format' (... expected, got nil)"); hold it in a local and test that first (if not v then ... end), or give a default (tonumber(redis.call(...) or '0'))`,
	},
	{
		name: "an array formatted", ret: "string", body: "return string.format('%s', redis.call('HGETALL', KEYS[1]))",
		err: `scripts/x.lua:3:15: argument 2 of string.format is the reply of HGETALL, an array (a table in Lua): Lua fails the script at run time ("bad argument #2 to 'format' (... expected, got table)")`,
	},

	// Nil dealt with first: no report, and no failure on missing keys.
	{name: "tested", body: "local v = redis.call('GET', KEYS[1])\nif not v then return 0 end\nreturn v + 1"},
	{name: "compared with false", body: "local v = redis.call('HGET', KEYS[1], 'f')\nif v == false then return -1 end\nreturn v + 1"},
	{name: "tested in the same expression", body: "local v = redis.call('GET', KEYS[1])\nreturn v and v + 1 or 0"},
	{name: "default before tonumber", body: "return tonumber(redis.call('GET', KEYS[1]) or '0') + 1"},
	{name: "default after tonumber", body: "local n = tonumber(redis.call('GET', KEYS[1])) or 0\nreturn n + 1"},
	{name: "replaced when nil", body: "local v = redis.call('GET', KEYS[1])\nif not v then v = 0 end\nreturn v + 1"},
	{name: "key made sure of first", body: "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end\nreturn redis.call('GET', KEYS[1]) + 1"},
	{name: "field made sure of first", body: "if redis.call('HEXISTS', KEYS[1], 'f') == 0 then return 0 end\nreturn tonumber(redis.call('HGET', KEYS[1], 'f')) * 2"},
	{name: "integer replies", body: "return redis.call('INCR', KEYS[1]) + #('x' .. redis.call('INCR', KEYS[1]))"},
	{name: "string functions of a value tested", ret: "string", body: "local v = redis.call('GET', KEYS[1])\nif not v then return '' end\nreturn v:upper() .. string.lower(v) .. string.rep(redis.call('INCR', KEYS[1]), 2)"},
	{name: "decoded when there", ret: "string?", body: "local raw = redis.call('GET', KEYS[1])\nif raw then return cjson.decode(raw).x end\nreturn nil"},
	{name: "copied when there", body: "local v = redis.call('GET', KEYS[1])\nif v then redis.call('SET', KEYS[1] .. ':copy', v) end\nreturn 1"},
	{name: "MGET's values replaced, then joined", ret: "string", body: "local t = redis.call('MGET', KEYS[1])\nfor i = 1, #t do t[i] = t[i] or '' end\nreturn table.concat(t, ',') .. table.concat(redis.call('LRANGE', KEYS[1], 0, -1))"},
	{name: "formatted with a default", ret: "string", body: "return string.format('%s:%d', redis.call('GET', KEYS[1]) or '', tonumber(redis.call('HGET', KEYS[1], 'n')) or 0)"},
	{name: "written first", body: "redis.call('SET', KEYS[1], '5')\nreturn redis.call('GET', KEYS[1]) - 1"},
}

// TestOperationRules: the checker's warnings and errors for operationCases.
func TestOperationRules(t *testing.T) {
	for _, tc := range operationCases {
		t.Run(tc.name, func(t *testing.T) {
			src := operationSource(tc.body, tc.ret)
			var want []string
			if tc.warning != "" {
				want = []string{tc.warning}
			}
			if tc.err == "" {
				checkWarnings(t, src, want)
			}
			got := checkUsed(t, src)
			if tc.err == "" && len(got) > 0 || tc.err != "" && (len(got) != 1 || got[0] != tc.err) {
				t.Errorf("errors %q, want %q", got, tc.err)
			}
		})
	}
}

func operationSource(body, ret string) string {
	if ret == "" {
		ret = "int64?"
	}
	return "-- @key k\n-- @return " + ret + "\n" + body + "\n"
}

// luaError is the Lua error a message quotes: ("attempt to ... value"),
// ("bad argument #1 to ..."), ("Lua redis lib command arguments ..."),
// ("invalid value (boolean) at index 1 ...").
var luaError = regexp.MustCompile(`\("((attempt to|bad argument|Lua redis lib|invalid value) [^"]*?)(\.\.\.)?"\)`)

// TestOperationsAgreeWithServer runs operationCases on the test server with
// their keys missing: a script reported must fail with the Lua error its
// message quotes (the start of it, for a comparison), and one that deals
// with nil first must run.
func TestOperationsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range operationCases {
		if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if tc.setup != "" {
			if err := rc.Do(ctx, rc.B().Eval().Script(tc.setup).Numkeys(1).Key("{o}k").Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
				t.Fatalf("%s: setup: %v", tc.name, err)
			}
		}
		err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{o}k").Build()).Error()
		if rueidis.IsRedisNil(err) {
			err = nil
		}
		msg := tc.warning + tc.err
		if msg == "" {
			if err != nil {
				t.Errorf("%s: Redis: %v; want the script to run", tc.name, err)
			}
			continue
		}
		m := luaError.FindStringSubmatch(msg)
		if m == nil {
			t.Fatalf("%s: the message quotes no Lua error: %s", tc.name, msg)
		}
		want, _, _ := strings.Cut(m[1], "...") // the part Redis's message starts with
		want = strings.TrimSpace(want)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Redis: %v; want the script to fail with %q", tc.name, err, want)
		}
	}
}

// TestIndexArgAgreesWithServer: the key variable of a loop over HGETALL's
// reply passed to HSET is warned of, and on the server it writes the
// indexes 1, 2, ... as fields, as the warning says; walking the list two by
// two (no warning) copies the hash.
func TestIndexArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key src\n-- @key dst\n-- @return none\n"
	for _, tc := range []struct {
		name, body string
		warning    string
		fields     []string // HKEYS of dst afterwards
	}{
		{
			name: "pairs", body: "local h = redis.call('HGETALL', KEYS[1])\nfor k, v in pairs(h) do\n  redis.call('HSET', KEYS[2], k, v)\nend\nreturn nil",
			warning: `scripts/x.lua:6:31: warning: k is an index of HGETALL's reply (1, 2, ...), not a field: HGETALL replies a flat list (field, value, field, ...), so HSET gets 1, 2, ... there; walk the list two by two (for i = 1, #t, 2 do local field, value = t[i], t[i + 1] ... end)`,
			fields:  []string{"1", "2"},
		},
		{
			name: "two by two", body: "local h = redis.call('HGETALL', KEYS[1])\nfor i = 1, #h, 2 do\n  redis.call('HSET', KEYS[2], h[i], h[i + 1])\nend\nreturn nil",
			fields: []string{"owner"},
		},
		{
			name: "a list's indexes as fields", body: "for i, x in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do\n  redis.call('HSET', KEYS[2], i, x)\nend\nreturn nil",
			fields: []string{"1"},
		},
	} {
		src := head + tc.body + "\n"
		var want []string
		if tc.warning != "" {
			want = []string{tc.warning}
		}
		t.Run(tc.name, func(t *testing.T) { checkWarnings(t, src, want) })
		for _, cmd := range []rueidis.Completed{
			rc.B().Flushall().Build(),
			rc.B().Hset().Key("{i}src").FieldValue().FieldValue("owner", "a").Build(),
			rc.B().Rpush().Key("{i}list").Element("x").Build(),
		} {
			if err := rc.Do(ctx, cmd).Error(); err != nil {
				t.Fatal(err)
			}
		}
		src1 := "{i}src"
		if strings.Contains(tc.body, "LRANGE") {
			src1 = "{i}list"
		}
		if err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(2).Key(src1, "{i}dst").Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := rc.Do(ctx, rc.B().Hkeys().Key("{i}dst").Build()).AsStrSlice()
		slices.Sort(got)
		if err != nil || !slices.Equal(got, tc.fields) {
			t.Errorf("%s: fields written %q, %v; want %q", tc.name, got, err, tc.fields)
		}
	}
}

// TestFractionArgAgreesWithServer: a division where Redis reads an integer
// is warned of, and Redis refuses the call when it does not come out even;
// rounded, it runs.
func TestFractionArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg ms duration\n-- @return int64\n"
	for _, tc := range []struct {
		body, ms, fails string
	}{
		{"return redis.call('EXPIRE', KEYS[1], ARGV[1] / 1000)", "1500", "value is not an integer or out of range"},
		{"return redis.call('EXPIRE', KEYS[1], ARGV[1] / 1000)", "2000", ""},
		{"return redis.call('PEXPIRE', KEYS[1], ARGV[1] * 1.5)", "1001", "value is not an integer or out of range"},
		{"return redis.call('EXPIRE', KEYS[1], 1 + ARGV[1] / 1000)", "1500", "value is not an integer or out of range"},
		{"return redis.call('EXPIRE', KEYS[1], math.floor(ARGV[1] / 1000))", "1500", ""},
	} {
		var warned bool
		_, warnings, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(head + tc.body + "\n")}}, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		for _, w := range warnings {
			warned = warned || strings.Contains(w.Error(), "which has a fraction unless it comes out even")
		}
		if rounded := strings.Contains(tc.body, "math.floor"); warned == rounded {
			t.Errorf("%s: warned %v, want %v", tc.body, warned, !rounded)
		}
		if err := rc.Do(ctx, rc.B().Set().Key("{f}k").Value("v").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		err = rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{f}k").Arg(tc.ms).Build()).Error()
		switch {
		case tc.fails == "" && err != nil:
			t.Errorf("%s with %s: %v; want it to run", tc.body, tc.ms, err)
		case tc.fails != "" && (err == nil || !strings.Contains(err.Error(), tc.fails)):
			t.Errorf("%s with %s: %v; want %q", tc.body, tc.ms, err, tc.fails)
		}
	}
}

// TestReturnFractionAgreesWithServer: a returned number with a fraction
// reaches the caller truncated toward zero, as the warning says, and the
// rounded forms it suggests are not warned of.
func TestReturnFractionAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		ret, body string
		want      []int64
		warned    bool
	}{
		{"int64", "return ARGV[1] / 2", []int64{3}, true},
		{"int64", "return -ARGV[1] / 2", []int64{-3}, true},
		{"int64", "return -(ARGV[1] / 2)", []int64{-3}, true},
		{"int64", "local v = ARGV[1] * 0.5\nreturn v", []int64{3}, true},
		{"[]int64", "return {1, ARGV[1] / 2}", []int64{1, 3}, true},
		{"int64", "return math.floor(-ARGV[1] / 2)", []int64{-4}, false},
		{"int64", "return math.ceil(ARGV[1] / 2)", []int64{4}, false},
	} {
		out := checkWarningsOf(t, "-- @arg n int64\n-- @return "+tc.ret+"\n"+tc.body+"\n")
		if warned := strings.Contains(out, "truncated toward zero"); warned != tc.warned {
			t.Errorf("%s: warned %v (%s), want %v", tc.body, warned, out, tc.warned)
		}
		reply := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(0).Arg("7").Build())
		var got []int64
		var err error
		if tc.ret == "int64" {
			var n int64
			n, err = reply.AsInt64()
			got = []int64{n}
		} else {
			got, err = reply.AsIntSlice()
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s with 7: Redis replied %v, want %v", tc.body, got, tc.want)
		}
	}
}

// TestNumberTextAgreesWithServer: an int64 argument made a Lua number and
// written back as a string loses its digits as the warning says, and the
// argument passed as it came keeps them.
func TestNumberTextAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		body, id, want, fails string
		warned                bool
	}{
		{"return 'order:' .. tonumber(ARGV[1])", "123456789012345678", "order:1.2345678901235e+17", "", true},
		{"return tostring(tonumber(ARGV[1]))", "100000000000000", "1e+14", "", true},
		{"return 'order:' .. tonumber(ARGV[1])", "99999999999999", "order:99999999999999", "", true},
		{"return 'order:' .. ARGV[1]", "123456789012345678", "order:123456789012345678", "", false},
		{"redis.call('SET', KEYS[1], tonumber(ARGV[1]))\nreturn redis.call('GET', KEYS[1]) or ''", "9007199254740993", "9007199254740992", "", true},
		{"return redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]))", "123456789012345678", "", "value is not an integer or out of range", true},
		{"redis.call('INCRBY', KEYS[1], ARGV[1])\nreturn redis.call('GET', KEYS[1]) or ''", "123456789012345678", "123456789012345678", "", false},
	} {
		src := "-- @arg id int64\n-- @return string\n" + tc.body + "\n"
		if strings.Contains(tc.body, "KEYS[1]") {
			src = "-- @key k\n" + src
		}
		if strings.HasPrefix(tc.body, "return redis.call('INCRBY'") {
			src = strings.Replace(src, "@return string", "@return int64", 1)
		}
		out := checkWarningsOf(t, src)
		if warned := strings.Contains(out, "significant digits"); warned != tc.warned {
			t.Errorf("%s: warned %v (%s), want %v", tc.body, warned, out, tc.warned)
		}
		if err := rc.Do(ctx, rc.B().Del().Key("{n}k").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		reply := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{n}k").Arg(tc.id).Build())
		if tc.fails != "" {
			if err := reply.Error(); err == nil || !strings.Contains(err.Error(), tc.fails) {
				t.Errorf("%s with %s: %v; want %q", tc.body, tc.id, err, tc.fails)
			}
			continue
		}
		got, err := reply.ToString()
		if err != nil || got != tc.want {
			t.Errorf("%s with %s: Redis replied %q (%v), want %q", tc.body, tc.id, got, err, tc.want)
		}
	}
}

// TestNotStringArgsAgreeWithServer: every argument the checker calls no
// string or number (true, a table, nil, a comparison, not) makes Redis
// refuse the call.
func TestNotStringArgsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, arg := range []string{"true", "{}", "nil", "ARGV[1] == '1'", "not ARGV[1]"} {
		body := "return redis.call('HSET', KEYS[1], 'f', " + arg + ")"
		got := checkUsed(t, "-- @key k\n-- @arg a string\n-- @return int64\n"+body+"\n")
		if len(got) != 1 || !strings.Contains(got[0], "Redis refuses it at run time (command arguments must be strings or numbers)") {
			t.Errorf("%s: checker output %q, want one error", arg, got)
		}
		err := rc.Do(ctx, rc.B().Eval().Script(body).Numkeys(1).Key("{s}k").Arg("1").Build()).Error()
		if err == nil || !strings.Contains(err.Error(), "Lua redis lib command arguments must be strings or integers") {
			t.Errorf("%s: Redis: %v; want the call refused", arg, err)
		}
	}
}

// TestRedisFieldsAgreeWithServer: the checker's list of the redis table's
// fields is the server's (pairs(redis) in a script), and a script reading
// or calling another field fails as the checker's error says.
func TestRedisFieldsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	got, err := rc.Do(ctx, rc.B().Eval().Script("local t = {} for k in pairs(redis) do t[#t + 1] = k end return t").Numkeys(0).Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := parse.RedisFields(); !slices.Equal(got, want) {
		t.Errorf("the server's redis table has %q, the checker knows %q", got, want)
	}
	for _, tc := range []struct{ body, err, fails string }{
		{"return redis.pcal('GET', KEYS[1])", "did you mean redis.pcall?", "attempt to call field 'pcal' (a nil value)"},
		{"redis.log(redis.LOG_WARN, 'x')\nreturn 1", "did you mean redis.LOG_WARNING?", "First argument must be a number (log level)"},
	} {
		out := checkUsed(t, "-- @key k\n-- @return int64\n"+tc.body+"\n")
		if len(out) != 1 || !strings.Contains(out[0], tc.err) {
			t.Errorf("%s: checker output %q, want one error with %q", tc.body, out, tc.err)
		}
		err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{r}k").Build()).Error()
		if err == nil || !strings.Contains(err.Error(), tc.fails) {
			t.Errorf("%s: Redis: %v; want %q", tc.body, err, tc.fails)
		}
	}
}

// TestLibFieldsAgreeWithServer: the checker's list of each library's fields
// is the server's (pairs(lib) in a script), and the refused reads and
// assignments fail on the server as the checker's errors say.
func TestLibFieldsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for lib, want := range parse.LibFields() {
		got, err := rc.Do(ctx, rc.B().Eval().Script("local t = {} for k in pairs("+lib+") do t[#t + 1] = k end return t").Numkeys(0).Build()).AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("the server's %s library has %q, the checker knows %q", lib, got, want)
		}
	}
	for _, tc := range []struct{ body, err, fails string }{
		{"return unpack({table.unpack({1})})", "use unpack(t)", "attempt to call field 'unpack' (a nil value)"},
		{"return math.tointeger(1)", "round with math.floor", "attempt to call field 'tointeger' (a nil value)"},
		{"return string.pack('>I4', 1)", "use struct.pack", "attempt to call field 'pack' (a nil value)"},
		{"return cjson.decod('[1]')", "did you mean cjson.decode?", "attempt to call field 'decod' (a nil value)"},
		{"string.trim = function(s) return s end\nreturn 1", "read-only", "Attempt to modify a readonly table"},
		{"redis.foo = 1\nreturn 1", "read-only", "Attempt to modify a readonly table"},
		{"math.pi = 3\nreturn 1", "read-only", "Attempt to modify a readonly table"},
	} {
		out := checkUsed(t, "-- @return int64\n"+tc.body+"\n")
		if len(out) != 1 || !strings.Contains(out[0], tc.err) {
			t.Errorf("%s: checker output %q, want one error with %q", tc.body, out, tc.err)
		}
		err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(0).Build()).Error()
		if err == nil || !strings.Contains(err.Error(), tc.fails) {
			t.Errorf("%s: Redis: %v; want %q", tc.body, err, tc.fails)
		}
	}
	// The arguments Lua 5.1 ignores: the result is the one without them.
	for _, tc := range []struct{ body, same, err string }{
		{"return tostring(math.log(8, 2))", "return tostring(math.log(8))", "ignores the base"},
		{"return tostring(math.atan(1, 2))", "return tostring(math.atan(1))", "use math.atan2(y, x)"},
		{"return string.rep('a', 3, ',')", "return 'aaa'", "ignores the separator"},
	} {
		out := checkUsed(t, "-- @return string\n"+tc.body+"\n")
		if len(out) != 1 || !strings.Contains(out[0], tc.err) {
			t.Errorf("%s: checker output %q, want one error with %q", tc.body, out, tc.err)
		}
		got, err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(0).Build()).ToString()
		want, err2 := rc.Do(ctx, rc.B().Eval().Script(tc.same).Numkeys(0).Build()).ToString()
		if err != nil || err2 != nil || got != want {
			t.Errorf("%s: Redis replied %q (%v), want %q as for %s (%v)", tc.body, got, err, want, tc.same, err2)
		}
	}
	if got, err := rc.Do(ctx, rc.B().Eval().Script("return tostring(math.log(8) / math.log(2))").Numkeys(0).Build()).ToString(); err != nil || got != "3" {
		t.Errorf("math.log(8) / math.log(2): Redis replied %q (%v), want 3", got, err)
	}
}

// TestUnpackAgreesWithServer: with 9000 members, unpack of a whole reply
// fails as the warning says, and the bounded forms it accepts run.
func TestUnpackAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	fill := "for i = 1, 9000 do redis.call('SADD', KEYS[1], i) redis.call('RPUSH', KEYS[2], i) redis.call('ZADD', KEYS[3], i, i) end return 1"
	if err := rc.Do(ctx, rc.B().Eval().Script(fill).Numkeys(3).Key("{u}set", "{u}list", "{u}zset").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body   string
		warned bool
	}{
		{"redis.call('SADD', KEYS[4], unpack(redis.call('SMEMBERS', KEYS[1])))", true},
		{"local m = redis.call('SMEMBERS', KEYS[1])\nredis.call('SADD', KEYS[4], unpack(m))", true},
		{"redis.call('RPUSH', KEYS[4], unpack(redis.call('LRANGE', KEYS[2], 0, -1)))", true},
		{"redis.call('SADD', KEYS[4], unpack(redis.call('ZRANGE', KEYS[3], 0, 4999, 'WITHSCORES')))", true},
		{"redis.call('SADD', KEYS[4], unpack(redis.call('ZRANGEBYSCORE', KEYS[3], 0, 9000, 'LIMIT', 0, 10000)))", true},
		{"local m = redis.call('SMEMBERS', KEYS[1])\nfor i = 1, #m, 1000 do\n  redis.call('SADD', KEYS[4], unpack(m, i, math.min(i + 999, #m)))\nend", false},
		{"redis.call('RPUSH', KEYS[4], unpack(redis.call('LRANGE', KEYS[2], -100, -1)))", false},
		{"redis.call('SADD', KEYS[4], unpack(redis.call('ZRANGEBYSCORE', KEYS[3], 0, 9000, 'LIMIT', 0, 1000)))", false},
	} {
		// The EXISTS uses every key, so that the checker says only what
		// it finds of the body.
		src := "-- @key set\n-- @key list\n-- @key zset\n-- @key dst\n-- @return none\n" + tc.body +
			"\nredis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3], KEYS[4])\nreturn nil\n"
		out := checkWarningsOf(t, src)
		if warned := strings.Contains(out, "too many results to unpack"); warned != tc.warned {
			t.Errorf("%s: warned %v (%s), want %v", tc.body, warned, out, tc.warned)
		}
		run := "redis.call('DEL', KEYS[4])\n" + tc.body + "\nreturn 1"
		err := rc.Do(ctx, rc.B().Eval().Script(run).Numkeys(4).Key("{u}set", "{u}list", "{u}zset", "{u}dst").Build()).Error()
		if fails := err != nil && strings.Contains(err.Error(), "too many results to unpack"); fails != tc.warned || (err != nil && !fails) {
			t.Errorf("%s: Redis: %v; want it to fail on unpack: %v", tc.body, err, tc.warned)
		}
	}
}

// TestStringOrderAgreesWithServer: two numbers held as strings are ordered
// character by character, as the warning says, and as numbers once both
// sides are converted.
func TestStringOrderAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		body   string
		want   int64
		warned bool
	}{
		{"if ARGV[1] < ARGV[2] then return 1 end return 0", 1, true},
		{"if tonumber(ARGV[1]) < tonumber(ARGV[2]) then return 1 end return 0", 0, false},
	} {
		out := checkWarningsOf(t, "-- @arg n int64\n-- @arg limit int64\n-- @return int64\n"+tc.body+"\n")
		if warned := strings.Contains(out, `Lua orders strings character by character, so "10" < "9"`); warned != tc.warned {
			t.Errorf("%s: warned %v (%s), want %v", tc.body, warned, out, tc.warned)
		}
		got, err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(0).Arg("10", "9").Build()).AsInt64()
		if err != nil || got != tc.want {
			t.Errorf("%s with 10 and 9: Redis replied %d (%v), want %d", tc.body, got, err, tc.want)
		}
	}
}

// checkWarningsOf is the checker's warnings for one script, one per line;
// the script must have no error.
func checkWarningsOf(t *testing.T, src string) string {
	t.Helper()
	_, warnings, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	var lines []string
	for _, w := range warnings {
		lines = append(lines, w.Error())
	}
	return strings.Join(lines, "\n")
}

// TestTimeKindsAgreeWithServer: a length of time where Redis reads a unix
// time deletes the key at once, and a unix time where it reads a length of
// time keeps it for decades, as the checker's errors say; the right pairs
// give the lease asked for.
func TestTimeKindsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	now := time.Now().UnixMilli()
	const restore = "redis.call('SET', KEYS[1], 'v')\nlocal d = redis.call('DUMP', KEYS[1])\nredis.call('RESTORE', KEYS[1], ARGV[1], d, "
	for _, tc := range []struct {
		body, arg string
		wantMin   time.Duration // -1: the key is gone
		wantMax   time.Duration
		err       string
	}{
		{"redis.call('SET', KEYS[1], 'v')\nredis.call('PEXPIREAT', KEYS[1], ARGV[1])", "30000", -1, -1, "the expiry would fall in January 1970"},
		{"redis.call('SET', KEYS[1], 'v', 'PXAT', ARGV[1])", "30000", -1, -1, "the expiry would fall in January 1970"},
		{"redis.call('SET', KEYS[1], 'v')\nredis.call('PEXPIRE', KEYS[1], ARGV[1])", strconv.FormatInt(now+30000, 10), 10 * 365 * 24 * time.Hour, 100 * 365 * 24 * time.Hour, "the key would live for decades"},
		{"redis.call('SET', KEYS[1], 'v', 'PX', ARGV[1])", strconv.FormatInt(now+30000, 10), 10 * 365 * 24 * time.Hour, 100 * 365 * 24 * time.Hour, "the key would live for decades"},
		{"redis.call('SET', KEYS[1], 'v', 'PX', ARGV[1])", "30000", 20 * time.Second, 30 * time.Second, ""},
		{"redis.call('SET', KEYS[1], 'v', 'PXAT', ARGV[1])", strconv.FormatInt(now+30000, 10), 20 * time.Second, 30 * time.Second, ""},
		// RESTORE's ttl is a length of time, and a unix time after ABSTTL.
		{restore + "'REPLACE', 'ABSTTL')", "30000", -1, -1, "the expiry would fall in January 1970"},
		{restore + "'REPLACE')", strconv.FormatInt(now+30000, 10), 10 * 365 * 24 * time.Hour, 100 * 365 * 24 * time.Hour, "the key would live for decades"},
		{restore + "'REPLACE')", "30000", 20 * time.Second, 30 * time.Second, ""},
		{restore + "'ABSTTL', 'REPLACE')", strconv.FormatInt(now+30000, 10), 20 * time.Second, 30 * time.Second, ""},
	} {
		typ := "duration"
		if tc.arg != "30000" {
			typ = "time"
		}
		out := checkUsed(t, "-- @key k\n-- @arg a "+typ+"\n-- @return none\n"+tc.body+"\nreturn nil\n")
		switch {
		case tc.err == "" && len(out) != 0:
			t.Errorf("%s with @arg %s: checker output %q, want none", tc.body, typ, out)
		case tc.err != "" && (len(out) != 1 || !strings.Contains(out[0], tc.err)):
			t.Errorf("%s with @arg %s: checker output %q, want one error with %q", tc.body, typ, out, tc.err)
		}
		if err := rc.Do(ctx, rc.B().Eval().Script(tc.body+"\nreturn 1").Numkeys(1).Key("{t}k").Arg(tc.arg).Build()).Error(); err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		pttl, err := rc.Do(ctx, rc.B().Pttl().Key("{t}k").Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		got := time.Duration(pttl) * time.Millisecond
		if tc.wantMin < 0 {
			if pttl != -2 {
				t.Errorf("%s with %s: PTTL %d, want the key gone (-2)", tc.body, tc.arg, pttl)
			}
			continue
		}
		if got < tc.wantMin || got > tc.wantMax {
			t.Errorf("%s with %s: the key lives %s, want %s to %s", tc.body, tc.arg, got, tc.wantMin, tc.wantMax)
		}
	}
}

// TestRedisLibCallsAgreeWithServer: each call of the redis table's
// functions the checker refuses fails on the server with the error its
// message quotes, and the ones it accepts run.
func TestRedisLibCallsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct{ body, fails string }{
		{"redis.log(redis.LOG_NOTICE)", "redis.log() requires two arguments or more."},
		{"redis.log('warning', 'x')", "First argument must be a number (log level)"},
		{"redis.log(7, 'x')", "Invalid debug level."},
		{"redis.setresp(4)", "RESP version must be 2 or 3."},
		{"redis.setresp()", "redis.setresp() requires one argument."},
		{"redis.set_repl(redis.REPL_ALL, 1)", "redis.set_repl() requires two arguments."},
		{"redis.sha1hex()", "wrong number of arguments"},
		{"redis.sha1hex('a', 'b')", "wrong number of arguments"},
		{"return redis.error_reply(42)", "wrong number or type of arguments"},
		{"return redis.status_reply('OK', 'x')", "wrong number or type of arguments"},
		{"redis.acl_check_cmd()", "Please specify at least one argument for this redis lib call"},
		{"redis.log(redis.LOG_NOTICE, 'a', 'b')", ""},
		{"redis.log(3, 'x')", ""},
		{"redis.setresp(3)", ""},
		{"redis.set_repl(redis.REPL_ALL)", ""},
		{"local h = redis.sha1hex('x')", ""},
		{"local ok = redis.acl_check_cmd('GET', 'k')", ""},
	} {
		run := tc.body + "\nreturn 1"
		if strings.HasPrefix(tc.body, "return ") {
			run = tc.body
		}
		ret := "int64"
		if strings.Contains(tc.body, "status_reply") {
			ret = "string"
		}
		out := checkUsed(t, "-- @return "+ret+"\n"+run+"\n")
		switch {
		case tc.fails == "" && len(out) != 0:
			t.Errorf("%s: checker output %q, want none", tc.body, out)
		case tc.fails != "" && (len(out) != 1 || !strings.Contains(out[0], tc.fails)):
			t.Errorf("%s: checker output %q, want one error quoting %q", tc.body, out, tc.fails)
		}
		err := rc.Do(ctx, rc.B().Eval().Script(run).Numkeys(0).Build()).Error()
		switch {
		case tc.fails == "" && err != nil:
			t.Errorf("%s: Redis: %v; want it to run", tc.body, err)
		case tc.fails != "" && (err == nil || !strings.Contains(err.Error(), tc.fails)):
			t.Errorf("%s: Redis: %v; want %q", tc.body, err, tc.fails)
		}
	}
}

// TestNilElemAgreesWithServer: a nil value ends the array Redis replies, as
// the warning says, and (n or false) keeps the place.
func TestNilElemAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		ret, body string
		want      int // values in the reply
		warned    bool
	}{
		{"{count int64?, limit int64}", "local n = tonumber(redis.call('GET', KEYS[1]))\nreturn {n, 5}", 0, true},
		{"{a int64, b int64?, c int64}", "return {5, tonumber(redis.call('GET', KEYS[1])), 6}", 1, true},
		{"{count int64?, limit int64}", "local n = tonumber(redis.call('GET', KEYS[1]))\nreturn {n or false, 5}", 2, false},
		{"{owner string?, limit int64}", "local n = redis.call('GET', KEYS[1])\nreturn {n, 5}", 2, false},
	} {
		out := checkWarningsOf(t, "-- @key k\n-- @return "+tc.ret+"\n"+tc.body+"\n")
		if warned := strings.Contains(out, "Redis ends an array at its first nil"); warned != tc.warned {
			t.Errorf("%s: warned %v (%s), want %v", tc.body, warned, out, tc.warned)
		}
		vals, err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{e}missing").Build()).ToArray()
		if err != nil || len(vals) != tc.want {
			t.Errorf("%s on a missing key: Redis replied %d values (%v), want %d", tc.body, len(vals), err, tc.want)
		}
	}
}

// TestGroupArgsAgreeWithServer: for every command of groupArgs a script may
// run, Redis refuses a call one word short of whole groups, as the checker
// does, and runs one with whole groups.
func TestGroupArgsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	checked := 0
	for _, name := range slices.Sorted(maps.Keys(groupArgs)) {
		info, ok := lookupCommand(name)
		if !ok || strings.Contains(name, "|") || info.flags&flagNoscript != 0 {
			continue // CONFIG SET, CLUSTER ...: not in scripts
		}
		sig := groupArgs[name]
		var words []string
		for range sig.fixed {
			words = append(words, "'{g}k'")
		}
		for i := range 2 * len(sig.words) {
			words = append(words, fmt.Sprintf("'{g}w%d'", i))
		}
		for _, short := range []bool{true, false} {
			call := words
			if short {
				call = words[:len(words)-1]
			}
			body := "redis.call('" + name + "', " + strings.Join(call, ", ") + ")"
			out := checkUsed(t, "-- @return none\n-- @cluster-unsafe\n"+body+"\nreturn nil\n")
			refused := len(out) == 1 && strings.Contains(out[0], "Redis refuses it at run time (wrong number of arguments)")
			err := rc.Do(ctx, rc.B().Eval().Script(body+"\nreturn 1").Numkeys(0).Build()).Error()
			failed := err != nil && strings.Contains(strings.ToLower(err.Error()), "wrong number of arg")
			if refused != short || failed != short {
				t.Errorf("%s: checker %q, Redis %v; want both to refuse it: %v", body, out, err, short)
			}
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("checked %d commands, want HMSET, HSET, MSET and MSETNX at least", checked)
	}
}

// TestPositiveExpiryAgreesWithServer: every place the checker reads as a
// positive expire time refuses 0 on the server and takes a valid one;
// EXPIRE takes 0 (it deletes the key), and the checker lets it.
func TestPositiveExpiryAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	valid := map[string]string{ // a time in the future for the unix-time places
		"EXAT": strconv.FormatInt(time.Now().Unix()+100, 10), "PXAT": strconv.FormatInt(time.Now().UnixMilli()+100000, 10),
	}
	call := func(where, v string) string {
		cmd, opt, _ := strings.Cut(where, " ")
		switch {
		case cmd == "SET":
			return "redis.call('SET', KEYS[1], 'v', '" + opt + "', " + v + ")"
		case cmd == "GETEX":
			return "redis.call('SET', KEYS[1], 'v')\nredis.call('GETEX', KEYS[1], '" + opt + "', " + v + ")"
		}
		return "redis.call('" + cmd + "', KEYS[1], " + v + ", 'v')"
	}
	for _, where := range slices.Sorted(maps.Keys(positiveExpiry)) {
		_, opt, _ := strings.Cut(where, " ")
		ok := "100"
		if v, at := valid[opt]; at {
			ok = v
		}
		for _, v := range []string{"0", ok} {
			body := call(where, v)
			out := checkUsed(t, "-- @key k\n-- @return none\n"+body+"\nreturn nil\n")
			refused := len(out) == 1 && strings.Contains(out[0], "invalid expire time")
			err := rc.Do(ctx, rc.B().Eval().Script(body+"\nreturn 1").Numkeys(1).Key("{x}k").Build()).Error()
			failed := err != nil && strings.Contains(err.Error(), "invalid expire time")
			if want := v == "0"; refused != want || failed != want || (err != nil && !failed) {
				t.Errorf("%s: checker %q, Redis %v; want both to refuse it: %v", body, out, err, want)
			}
		}
	}
	body := "redis.call('SET', KEYS[1], 'v')\nredis.call('EXPIRE', KEYS[1], 0)"
	if out := checkUsed(t, "-- @key k\n-- @return none\n"+body+"\nreturn nil\n"); len(out) != 0 {
		t.Errorf("EXPIRE 0: checker %q, want nothing", out)
	}
	if err := rc.Do(ctx, rc.B().Eval().Script(body+"\nreturn 1").Numkeys(1).Key("{x}k").Build()).Error(); err != nil {
		t.Errorf("EXPIRE 0: Redis %v, want it to run", err)
	}
}
