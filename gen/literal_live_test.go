package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// literalCases are calls with Lua literals in them, which the command-word
// tests (sent as strings in ARGV) cannot send: refusal is the error Redis
// answers and the checker's message quotes, "" for a call both take.
var literalCases = []struct {
	name, body, refusal string
	// says is what the checker's message says where it quotes no
	// refusal (Lua numbers, whose refusal varies with the command).
	says string
}{
	{name: "timeout sent as its double, 2^63 milliseconds", body: "redis.call('BZMPOP', 9223372036854775, 1, KEYS[1], 'MIN')", refusal: "ERR timeout is negative"},
	{name: "timeout just under 2^63 milliseconds", body: "redis.call('BZMPOP', 9223372036854774, 1, KEYS[1], 'MIN')"},
	{name: "timeout negative", body: "redis.call('BLMPOP', -0.5, 1, KEYS[1], 'LEFT')", refusal: "ERR timeout is negative"},
	{name: "timeout -0", body: "redis.call('BLMPOP', -0, 1, KEYS[1], 'LEFT')"},
	{name: "bit offset 2^32", body: "redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u8', 4294967296)", refusal: "ERR bit offset is not an integer or out of range"},
	{name: "bit offset 2^32 - 1", body: "redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u8', '4294967295')"},
	{name: "bit offset 2^32 after a GET in range", body: "redis.call('BITFIELD', KEYS[1], 'GET', 'u8', 0, 'OVERFLOW', 'SAT', 'INCRBY', 'i5', '4294967296', 1)", refusal: "ERR bit offset is not an integer or out of range"},
	{name: "bit offset #N of u8 at 2^32", body: "redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u8', '#536870912')", refusal: "ERR bit offset is not an integer or out of range"},
	{name: "bit offset #N of u8 under 2^32", body: "redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u8', '#536870911')"},
	{name: "bit offset #N of i64 at 2^32", body: "redis.call('BITFIELD', KEYS[1], 'GET', 'i64', '#67108864')", refusal: "ERR bit offset is not an integer or out of range"},
	{name: "bit offset #N of i64 under 2^32", body: "redis.call('BITFIELD', KEYS[1], 'GET', 'i64', '#67108863')"},
	{name: "bit offset #N of i1 at 2^32", body: "redis.call('BITFIELD', KEYS[1], 'GET', 'i1', '#4294967296')", refusal: "ERR bit offset is not an integer or out of range"},
	{name: "SETBIT offset 2^32 as a Lua number", body: "redis.call('SETBIT', KEYS[1], 4294967296, 1)", refusal: "ERR bit offset is not an integer or out of range"},
	{name: "GETBIT offset 2^32 as a Lua number", body: "redis.call('GETBIT', KEYS[1], 4294967296)", refusal: "ERR bit offset is not an integer or out of range"},
	{name: "GETBIT offset 2^32 - 1 as a Lua number", body: "redis.call('GETBIT', KEYS[1], 4294967295)"},
	{name: "SETBIT value 2", body: "redis.call('SETBIT', KEYS[1], 0, 2)", refusal: "ERR bit is not an integer or out of range"},
	{name: "SETBIT value -1 on a key that is missing", body: "redis.call('SETBIT', KEYS[1], 0, '-1')", refusal: "ERR bit is not an integer or out of range"},
	{name: "SETBIT value 1", body: "redis.call('SETBIT', KEYS[1], 0, 1)"},
	{name: "BITPOS bit 2 on a key that is missing", body: "redis.call('BITPOS', KEYS[1], 2)", refusal: "ERR The bit argument must be 1 or 0."},
	{name: "BITPOS bit -1", body: "redis.call('BITPOS', KEYS[1], -1, 0, -1)", refusal: "ERR The bit argument must be 1 or 0."},
	{name: "BITPOS bit 1", body: "redis.call('BITPOS', KEYS[1], 1, 0, -1)"},
	{name: "SETRANGE of a byte at 512 MB", body: "redis.call('SETRANGE', KEYS[1], 536870912, 'x')", refusal: "ERR string exceeds maximum allowed size (proto-max-bulk-len)"},
	{name: "SETRANGE of two bytes at 512 MB - 1", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('SETRANGE', KEYS[1], '536870911', 'xy')", refusal: "ERR string exceeds maximum allowed size (proto-max-bulk-len)"},
	{name: "SETRANGE of a byte at 2^63 - 1", body: "redis.call('SETRANGE', KEYS[1], '9223372036854775807', 'x')", refusal: "ERR string exceeds maximum allowed size (proto-max-bulk-len)"},
	// (Not run at 512 MB - 1, which would grow the string to 512 MB.)
	{name: "SETRANGE of nothing past 512 MB", body: "redis.call('SETRANGE', KEYS[1], 536870912, '')"},
	{name: "SETRANGE of nothing at 2^63 - 1", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('SETRANGE', KEYS[1], '9223372036854775807', '')"},
	{name: "BITCOUNT of a start alone", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITCOUNT', KEYS[1], 0)", refusal: "ERR syntax error"},
	{name: "BITCOUNT of a unit that is neither BIT nor BYTE", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITCOUNT', KEYS[1], 0, -1, 'BOT')", refusal: "ERR syntax error"},
	{name: "BITCOUNT of 4 words of range", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITCOUNT', KEYS[1], 'x', -1, 'BIT', 1)", refusal: "ERR syntax error"},
	{name: "BITCOUNT of an end that is no integer", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITCOUNT', KEYS[1], 0, 'BIT')", refusal: "ERR value is not an integer or out of range"},
	{name: "BITCOUNT of a range in bits", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITCOUNT', KEYS[1], 0, -1, 'bit')\nredis.call('BITCOUNT', KEYS[1], '0', -1, 'BYTE')"},
	{name: "BITPOS of an end that is no integer", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITPOS', KEYS[1], 1, 0, 'BIT')", refusal: "ERR value is not an integer or out of range"},
	{name: "BITPOS of a start that is no integer, before the unit", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITPOS', KEYS[1], 1, 'x', -1, 'BOT')", refusal: "ERR value is not an integer or out of range"},
	{name: "BITPOS of a unit that is neither, before the end", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITPOS', KEYS[1], 1, 0, 'x', 'BOT')", refusal: "ERR syntax error"},
	{name: "BITPOS of 4 words of range", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITPOS', KEYS[1], 1, 'x', -1, 'BIT', 1)", refusal: "ERR syntax error"},
	{name: "BITPOS of a range in bits", body: "redis.call('SET', KEYS[1], 'v')\nredis.call('BITPOS', KEYS[1], 0, 2, -1, 'BIT')\nredis.call('BITPOS', KEYS[1], 1, 0)"},
	{name: "Lua number 1e17 as an integer", body: "redis.call('EXPIRE', KEYS[1], 1e17)", refusal: "ERR value is not an integer or out of range", says: "is no integer: Redis refuses the call at run time"},
	{name: "Lua number from 1e17 on as an integer", body: "redis.call('SET', KEYS[1], 'v', 'PX', 123456789012345678)", refusal: "ERR value is not an integer or out of range", says: "is no integer: Redis refuses the call at run time"},
	{name: "Lua number -1.5e17 as an integer", body: "redis.call('LRANGE', KEYS[1], -1.5e17, 0)", refusal: "ERR value is not an integer or out of range", says: "is no integer: Redis refuses the call at run time"},
	{name: "Lua number 1e17 as a bit offset", body: "redis.call('GETBIT', KEYS[1], 1e17)", refusal: "ERR bit offset is not an integer or out of range", says: "is no integer: Redis refuses the call at run time"},
	{name: "Lua number 1e17 as a BITFIELD offset", body: "redis.call('BITFIELD', KEYS[1], 'GET', 'u8', 1e17)", refusal: "ERR bit offset is not an integer or out of range", says: "is no integer: Redis refuses the call at run time"},
	{name: "Lua number 1e17 as SORT's LIMIT", body: "redis.call('SORT', KEYS[1], 'LIMIT', 0, 1e17)", refusal: "ERR value is not an integer or out of range", says: "is no integer: Redis refuses the call at run time"},
	{name: "Lua number 1e17 as LMPOP's COUNT", body: "redis.call('LMPOP', 1, KEYS[1], 'LEFT', 'COUNT', 1e17)", refusal: "ERR count should be greater than 0", says: "is no integer: Redis refuses the call at run time"},
	{name: "Lua number 1e17 as XADD's MAXLEN", body: "redis.call('XADD', KEYS[1], 'MAXLEN', '~', 1e17, '*', 'f', 'v')", refusal: "ERR value is not an integer or out of range", says: "is no integer: Redis refuses the call at run time"},
	{name: "Lua number -0 as XTRIM's MAXLEN", body: "redis.call('XTRIM', KEYS[1], 'MAXLEN', -0)", refusal: "ERR value is not an integer or out of range", says: "which Redis reads as no integer"},
	{name: "Lua number -0 as an integer", body: "redis.call('INCRBY', KEYS[1], -0)", refusal: "ERR value is not an integer or out of range", says: "which Redis reads as no integer"},
	{name: "Lua number -0.0 as an integer", body: "redis.call('INCRBY', KEYS[1], -0.0)", refusal: "ERR value is not an integer or out of range", says: "which Redis reads as no integer"},
	{name: "Lua number -0 as a count", body: "redis.call('LPOP', KEYS[1], -0)", refusal: "ERR value is out of range, must be positive", says: "which Redis reads as no integer"},
	{name: "Lua number -0 as a key count", body: "redis.call('ZUNIONSTORE', KEYS[1], -0, KEYS[1])", refusal: "ERR value is not an integer or out of range", says: "which Redis reads as no integer"},
	{name: "Lua number -0 as a BITFIELD offset", body: "redis.call('BITFIELD', KEYS[1], 'GET', 'u8', -0)", refusal: "ERR bit offset is not an integer or out of range", says: "which Redis reads as no integer"},
	{name: "Lua number -0 as SORT's LIMIT", body: "redis.call('SORT', KEYS[1], 'LIMIT', -0, 1)", refusal: "ERR value is not an integer or out of range", says: "which Redis reads as no integer"},
	{name: "Lua number just under 1e17", body: "redis.call('INCRBY', KEYS[1], 99999999999999984)"},
	{name: "Lua number 1e16", body: "redis.call('INCRBY', KEYS[1], 1e16)"},
	{name: "Lua number 2^53", body: "redis.call('INCRBY', KEYS[1], -9007199254740992)"},
	{name: "Lua number 1e17 where a double or a value is read", body: "redis.call('INCRBYFLOAT', KEYS[1], 1e17)\nredis.call('SET', KEYS[1], 1e17)"},
	{name: "Lua number -0 where a double or a cursor is read", body: "redis.call('ZINCRBY', KEYS[1], -0, 'm')\nredis.call('SCAN', -0)"},
	{name: "bit offset #N of u8 wrapping negative", body: "redis.call('BITFIELD', KEYS[1], 'GET', 'u8', '#1152921504606846976')", refusal: "ERR bit offset is not an integer or out of range"},
}

// TestBitfieldOffsetWrapsOnServer shows what checkBitfieldOffsets refuses
// though Redis takes it: a #N offset whose product with the type's width
// overflows 64 bits is read as what it wraps around to (#2305843009213693953
// of u8: 2^64 + 8, so offset 8).
func TestBitfieldOffsetWrapsOnServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	set := "redis.call('BITFIELD', KEYS[1], 'SET', 'u8', '#2305843009213693953', 255)"
	body := set + "\nreturn redis.call('BITFIELD', KEYS[1], 'GET', 'u8', 8)"
	got := checkUsed(t, "-- @key k\n-- @return none\n"+set+"\nreturn nil\n")
	if len(got) != 1 || !strings.Contains(got[0], "wraps around to 8") {
		t.Errorf("the checker answers %q, want one error saying the offset wraps around to 8", got)
	}
	reply, err := rc.Do(ctx, rc.B().Eval().Script(body).Numkeys(1).Key("{l}k").Build()).AsIntSlice()
	if err != nil || len(reply) != 1 || reply[0] != 255 {
		t.Errorf("Redis answers %v, %v; want [255]: the value set at offset 8", reply, err)
	}
}

// TestBitRangeMissingKeyOnServer shows what checkBitRange refuses though
// Redis 7.0 takes it on a key that is missing: it answers 0 (BITCOUNT) or
// -1 (BITPOS of 1) before it reads the range.
func TestBitRangeMissingKeyOnServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		body string
		want int64
	}{
		{"return redis.call('BITCOUNT', KEYS[1], 0)", 0},
		{"return redis.call('BITPOS', KEYS[1], 1, 0, -1, 'BOT')", -1},
	} {
		if got := checkUsed(t, "-- @key k\n-- @return int64\n"+tc.body+"\n"); len(got) != 1 || !strings.Contains(got[0], "when the key holds a string") {
			t.Errorf("%q: the checker answers %q, want one error saying Redis refuses it when the key holds a string", tc.body, got)
		}
		if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		reply, err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{l}k").Build()).AsInt64()
		if err != nil || reply != tc.want {
			t.Errorf("%q: Redis answers %v, %v; want %d", tc.body, reply, err, tc.want)
		}
	}
}

// TestLiteralsAgreeWithServer runs literalCases through the checker and on
// the test server: both must refuse each call with a refusal, with the
// same error (the checker's message quotes it), and take the others.
func TestLiteralsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range literalCases {
		src := "-- @key k\n-- @return none\n" + tc.body + "\nreturn nil\n"
		got := checkUsed(t, src)
		switch {
		case tc.refusal == "" && len(got) > 0:
			t.Errorf("%s: the checker refuses it: %q", tc.name, got)
		case tc.refusal != "" && tc.says == "" && (len(got) != 1 || !strings.Contains(got[0], "\""+tc.refusal)):
			t.Errorf("%s: the checker answers %q, want one error quoting %q", tc.name, got, tc.refusal)
		case tc.says != "" && (len(got) != 1 || !strings.Contains(got[0], tc.says)):
			t.Errorf("%s: the checker answers %q, want one error saying %q", tc.name, got, tc.says)
		}
		if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{l}k").Build()).Error()
		if rueidis.IsRedisNil(err) {
			err = nil
		}
		switch {
		case tc.refusal == "" && err != nil:
			t.Errorf("%s: Redis refuses it: %v", tc.name, err)
		case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.refusal, "ERR "))):
			t.Errorf("%s: Redis answers %v, want %q", tc.name, err, tc.refusal)
		}
	}
}

// TestLuaNumbersSentOnServer shows what luaIntegerProblem refuses though
// Redis may take it: an integer above 2^53 that a double cannot hold is
// sent as the double's (12345678901234567 as 12345678901234568), and -0
// is sent as 0 when the script has a 0 literal before it.
func TestLuaNumbersSentOnServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		body, says string
		want       int64
	}{
		{"return redis.call('INCRBY', KEYS[1], 12345678901234567)", `Redis gets "12345678901234568"`, 12345678901234568},
		{"local zero = 0\nreturn redis.call('INCRBY', KEYS[1], -0)", `or as 0 when the script has a 0 literal before it`, 0},
	} {
		got := checkUsed(t, "-- @key k\n-- @return int64\n"+tc.body+"\n")
		if len(got) != 1 || !strings.Contains(got[0], tc.says) {
			t.Errorf("%q: the checker answers %q, want one error saying %q", tc.body, got, tc.says)
		}
		if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		reply, err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{l}k").Build()).AsInt64()
		if err != nil || reply != tc.want {
			t.Errorf("%q: Redis answers %v, %v; want %d", tc.body, reply, err, tc.want)
		}
	}
}
