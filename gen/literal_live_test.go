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
		case tc.refusal != "" && (len(got) != 1 || !strings.Contains(got[0], "\""+tc.refusal)):
			t.Errorf("%s: the checker answers %q, want one error quoting %q", tc.name, got, tc.refusal)
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
