package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicIndexOnAPathAgreesWithServer: ARGV[n] past the fixed
// arguments that reaches redis.call on some paths only, the right of an
// and/or written in place (c and 'z' or ARGV[3]), is nil there when the
// list is short, and Redis fails the call after the script's earlier
// writes: the generated callers must refuse such a list, as for a local
// given ARGV[n] on a path. Not when the left side tests the element (ARGV[3]
// or 'z' gives 'z' for a short list) or is never false.
func TestVariadicIndexOnAPathAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"the right of an or", "redis.call('SET', KEYS[1], ARGV[1] == 'x' and 'z' or ARGV[3])", "if len(rest) < 2 {"},
		{"the right of an and", "redis.call('SET', KEYS[1], ARGV[1] ~= 'x' and ARGV[3])", "if len(rest) < 2 {"},
		{"tested on the left", "redis.call('SET', KEYS[1], ARGV[3] and ARGV[3] or 'z')", ""},
		{"a default", "redis.call('SET', KEYS[1], ARGV[3] or 'z')", ""},
		{"another element first", "redis.call('SET', KEYS[1], ARGV[2] or ARGV[3])", "if len(rest) == 0 {"},
		{"a literal first", "redis.call('SET', KEYS[1], 'z' or ARGV[3])", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "must be strings or integers")
			if refused != (tc.check == "if len(rest) < 2 {") {
				t.Errorf("a list of one: the server returned %v", err)
			}
		})
	}
}

// TestVariadicIndexPassedAgreesWithServer: ARGV[n] past the fixed
// arguments passed to a local function (f(ARGV[3])) whose parameter it
// gives redis.call untested is nil there when the list is short, and Redis
// fails the call after the script's earlier writes: the generated callers
// must refuse such a list, as for ARGV[n] written in the call. Not when the
// function tests its parameter first, nor when the script tests the
// element before the call.
func TestVariadicIndexPassedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"a parameter", "local function f(v) redis.call('SET', KEYS[1], v) end\nf(ARGV[3])", "if len(rest) < 2 {"},
		{"the second parameter", "local function f(a, v) redis.call('SET', KEYS[1] .. a, v) end\nf(':x', ARGV[3])", "if len(rest) < 2 {"},
		{"the parameter tested", "local function f(v) if v then redis.call('SET', KEYS[1], v) end end\nf(ARGV[3])", ""},
		{"the parameter given a default", "local function f(v) v = v or 'z'\nredis.call('SET', KEYS[1], v) end\nf(ARGV[3])", ""},
		{"the element tested", "local function f(v) redis.call('SET', KEYS[1], v) end\nif ARGV[3] then f(ARGV[3]) end", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "must be strings or integers")
			if refused != (tc.check != "") {
				t.Errorf("a list of one: the server returned %v", err)
			}
		})
	}
}

// TestVariadicIndexStringifiedAgreesWithServer: tostring of ARGV[n] past
// the fixed arguments is the string "nil" when the list is short, which
// Redis takes: the generated callers must send such a list, held by a
// local or written in place, and the server runs it.
func TestVariadicIndexStringifiedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct{ name, body string }{
		{"held by a local", "local v = tostring(ARGV[3])\nredis.call('SET', KEYS[1], v)"},
		{"given a local on a path", "local v = 'x'\nif redis.call('EXISTS', KEYS[1]) == 0 then v = tostring(ARGV[3]) end\nredis.call('SET', KEYS[1], v)"},
		{"written in place", "redis.call('SET', KEYS[1], tostring(ARGV[3]))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, "")
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "err"); refused {
				t.Errorf("a list of one: the server returned %v", err)
			}
		})
	}
}

// TestVariadicIndexAssertedAgreesWithServer: assert(ARGV[n]) past the
// fixed arguments fails the script when the list is short ("assertion
// failed!"), and gives the element otherwise: a local given it and passed
// to redis.call needs the element as one given ARGV[n] does, and the
// generated callers must refuse a list too short to hold it, which the
// server fails.
func TestVariadicIndexAssertedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct{ name, body string }{
		{"held by a local", "local v = assert(ARGV[3])\nredis.call('SET', KEYS[1], v)"},
		{"with a message", "local v = assert(ARGV[3], 'no value')\nredis.call('SET', KEYS[1], v)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, "if len(rest) < 2 {")
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "script"); !refused {
				t.Errorf("a list of one: the server returned %v", err)
			}
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a", "b"}, "script"); refused {
				t.Errorf("a list of two: the server returned %v", err)
			}
		})
	}
}

// TestAssertedKeyIsTheKey: assert(KEYS[1]) gives KEYS[1]: a key position
// given it holds that key, which Redis Cluster routes the script by.
func TestAssertedKeyIsTheKey(t *testing.T) {
	src := "-- X does it.\n-- @key k\n-- @return none\nlocal k = assert(KEYS[1])\nredis.call('SET', k, 'v')\n"
	if _, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}); err != nil {
		t.Errorf("Generate: %v, want no error", err)
	}
}

// TestVariadicIndexTableFieldAgreesWithServer: a table local listing
// ARGV[n] past the fixed arguments (local t = {ARGV[3]}) holds nil there
// when the list is short: t[1] passed to redis.call gets Redis's refusal
// after the script's earlier writes, and the generated callers must refuse
// such a list. Not when the script tests the field first.
func TestVariadicIndexTableFieldAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"by index", "local t = {ARGV[1], ARGV[3]}\nredis.call('SET', KEYS[1], t[2])", "if len(rest) < 2 {"},
		{"by name", "local t = {v = ARGV[3]}\nredis.call('SET', KEYS[1], t.v)", "if len(rest) < 2 {"},
		{"tested first", "local t = {ARGV[3]}\nif t[1] then redis.call('SET', KEYS[1], t[1]) end", ""},
		{"its length tested first", "local t = {ARGV[3]}\nif #t > 0 then redis.call('SET', KEYS[1], t[1]) end", ""},
		{"a fixed argument", "local t = {ARGV[1]}\nredis.call('SET', KEYS[1], t[1])\nredis.call('RPUSH', KEYS[1] .. ':l', 'x', unpack(ARGV, 2))", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "must be strings or integers")
			if refused != (tc.check != "") {
				t.Errorf("a list of one: the server returned %v", err)
			}
		})
	}
}

// TestVariadicIndexTonumberAgreesWithServer: tonumber(ARGV[n]) past the
// fixed arguments is nil when the list is short: passed to redis.call, in
// place or held by a local, Redis refuses the call after the script's
// earlier writes, and the generated callers must refuse such a list. Not
// when the script tests the local first.
func TestVariadicIndexTonumberAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"in place", "redis.call('SET', KEYS[1], tonumber(ARGV[3]))", "if len(rest) < 2 {"},
		{"held by a local", "local n = tonumber(ARGV[3])\nredis.call('SET', KEYS[1], n)", "if len(rest) < 2 {"},
		{"held by a local, tested", "local n = tonumber(ARGV[3])\nif n then redis.call('SET', KEYS[1], n) end", ""},
		{"in place, tested first", "if tonumber(ARGV[3]) then redis.call('SET', KEYS[1], tonumber(ARGV[3])) end", ""},
		{"held by a local, given a default", "local n = tonumber(ARGV[3]) or 0\nredis.call('SET', KEYS[1], n)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "must be strings or integers")
			if refused != (tc.check != "") {
				t.Errorf("a list of one: the server returned %v", err)
			}
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a", "5"}, "err"); refused {
				t.Errorf("a list of two: the server returned %v", err)
			}
		})
	}
}

// TestVariadicIndexOperandAgreesWithServer: ARGV[n] past the fixed
// arguments, or tonumber of it, as an operand of arithmetic or of a
// concatenation is nil when the list is short, and Lua fails the script
// there ("attempt to perform arithmetic on a nil value"), after its
// earlier writes: the generated callers must refuse such a list. Not when
// the script tests the element first, or reads it on the right of an
// and/or, nor in a function passed to pcall.
func TestVariadicIndexOperandAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"arithmetic", "redis.call('SET', KEYS[1], ARGV[3] + 1)", "if len(rest) < 2 {"},
		{"arithmetic on tonumber", "local n = tonumber(ARGV[3]) * 2\nredis.call('SET', KEYS[1], n)", "if len(rest) < 2 {"},
		{"a negation", "redis.call('SET', KEYS[1], -ARGV[3])", "if len(rest) < 2 {"},
		{"a concatenation", "redis.call('SET', KEYS[1], 'x' .. ARGV[3])", "if len(rest) < 2 {"},
		{"a local", "local v = ARGV[3]\nredis.call('SET', KEYS[1], v .. ':x')", "if len(rest) < 2 {"},
		{"tested first", "if ARGV[3] then redis.call('SET', KEYS[1], ARGV[3] + 1) end", ""},
		{"tested as a number first", "if tonumber(ARGV[3]) then redis.call('SET', KEYS[1], tonumber(ARGV[3]) + 1) end", ""},
		{"a local tested first", "local v = ARGV[3]\nif v then redis.call('SET', KEYS[1], v + 1) end", ""},
		{"the right of an and", "local n = ARGV[3] and ARGV[3] + 1 or 0\nredis.call('SET', KEYS[1], n)", ""},
		{"in pcall", "local ok, n = pcall(function() return ARGV[3] + 1 end)\nredis.call('SET', KEYS[1], ok and n or 0)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "script")
			if refused != (tc.check != "") {
				t.Errorf("a list of one: the server returned %v", err)
			}
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a", "5"}, "script"); refused {
				t.Errorf("a list of two: the server returned %v", err)
			}
		})
	}
}

// TestVariadicIndexAssertCalledAgreesWithServer: assert(ARGV[n]) past the
// fixed arguments, as a statement, fails the script when the list is
// short ("assertion failed!"), after its earlier writes: the generated
// callers must refuse such a list. Not on the right of an and/or.
func TestVariadicIndexAssertCalledAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"in place", "assert(ARGV[3], 'no value')\nredis.call('SET', KEYS[1], 'x')", "if len(rest) < 2 {"},
		{"a local", "local v = ARGV[3]\nassert(v)\nredis.call('SET', KEYS[1], 'x' .. v)", "if len(rest) < 2 {"},
		{"on the right of an or", "local v = ARGV[2] == 'x' or assert(ARGV[3])\nredis.call('SET', KEYS[1], 'x')", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "x"}, "script")
			if refused != (tc.check != "") {
				t.Errorf("a list of one: the server returned %v", err)
			}
		})
	}
}

// TestVariadicIndexTestedOnTheLeftAgreesWithServer: the right of an or
// whose left tests the same element (ARGV[3] == nil and 'z' or ARGV[3],
// not ARGV[3] and 'z' or ARGV[3]) is reached only when the element is
// there: the script gives Redis 'z' for a short list and runs, and the
// generated callers must send it, written in the call or passed to a local
// function.
func TestVariadicIndexTestedOnTheLeftAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct{ name, body string }{
		{"compared with nil", "redis.call('SET', KEYS[1], ARGV[3] == nil and 'z' or ARGV[3])"},
		{"negated", "redis.call('SET', KEYS[1], not ARGV[3] and 'z' or ARGV[3])"},
		{"its type", "redis.call('SET', KEYS[1], type(ARGV[3]) ~= 'string' and 'z' or ARGV[3])"},
		{"held by a local", "local v = ARGV[3] == nil and 'z' or ARGV[3]\nredis.call('SET', KEYS[1], v)"},
		{"passed to a function", "local function f(v) redis.call('SET', KEYS[1], v) end\nf(ARGV[3] == nil and 'z' or ARGV[3])"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, "")
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "err"); refused {
				t.Errorf("a list of one: the server returned %v", err)
			}
			if got, err := rc.Do(ctx, rc.B().Get().Key("{t}k").Build()).ToString(); err != nil || got != "z" {
				t.Errorf("the key holds %q (%v), want \"z\"", got, err)
			}
		})
	}
}

// TestVariadicIndexAndOperandAgreesWithServer: an and of ARGV[n] past the
// fixed arguments (ARGV[3] and 1, c and ARGV[3]) as an operand of
// arithmetic or a concatenation is nil or false when the list is short,
// whatever c, and Lua fails the script there after its earlier writes: the
// generated callers must refuse such a list. Not an or that gives a value
// for nil (ARGV[3] and 1 or 0).
func TestVariadicIndexAndOperandAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"the element on the left", "local n = (ARGV[3] and 1) + 1\nredis.call('SET', KEYS[1], n)", "if len(rest) < 2 {"},
		{"the element on the right", "local v = 'x' .. (ARGV[1] == 'm' and ARGV[3])\nredis.call('SET', KEYS[1], v)", "if len(rest) < 2 {"},
		{"a default", "local n = (ARGV[3] and 1 or 0) + 1\nredis.call('SET', KEYS[1], n)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "script")
			if refused != (tc.check != "") {
				t.Errorf("a list of one: the server returned %v", err)
			}
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a", "5"}, "script"); refused {
				t.Errorf("a list of two: the server returned %v", err)
			}
		})
	}
}
