package gen

import (
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// rangeArg is an integer argument Redis refuses out of a range, though the
// specifications only type it as an integer: at a position (1-based, after
// the command name) or after a keyword, its least value (min) or, with
// nonZero, any value but 0; refusal is Redis's error message.
type rangeArg struct {
	pos     int
	keyword string
	from    int    // the words (after the name) before the keywords
	what    string // what it is, for messages
	min     int64
	below   int64
	nonZero bool
	refusal string
	fix     string
}

// rangeArgs are the integer arguments Redis refuses out of a range, by
// command. A test runs each just out of its range, and at its bound, on
// the server.
var rangeArgs = map[string][]rangeArg{
	"LPOP":     {{pos: 2, what: "a count", refusal: "ERR value is out of range, must be positive", fix: "pass 0 or more"}},
	"RPOP":     {{pos: 2, what: "a count", refusal: "ERR value is out of range, must be positive", fix: "pass 0 or more"}},
	"SPOP":     {{pos: 2, what: "a count", refusal: "ERR value is out of range, must be positive", fix: "pass 0 or more (SRANDMEMBER takes a negative count, and pops nothing)"}},
	"ZPOPMIN":  {{pos: 2, what: "a count", refusal: "ERR value is out of range, must be positive", fix: "pass 0 or more (ZPOPMAX pops from the other end)"}},
	"ZPOPMAX":  {{pos: 2, what: "a count", refusal: "ERR value is out of range, must be positive", fix: "pass 0 or more (ZPOPMIN pops from the other end)"}},
	"SETRANGE": {{pos: 2, what: "an offset", refusal: "ERR offset is out of range", fix: "pass an offset of 0 or more, counted from the start of the string"}},
	// Redis refuses a bit offset whose byte is past proto-max-bulk-len
	// (512 MB unless the server's configuration raises it).
	"SETBIT": {
		{pos: 2, what: "a bit offset", below: maxBitOffset, refusal: "ERR bit offset is not an integer or out of range", fix: "pass an offset from 0 to 4294967295 (2^32 - 1), counted from the start of the string"},
		{pos: 3, what: "a bit", below: 2, refusal: "ERR bit is not an integer or out of range", fix: "pass 0 or 1"},
	},
	"GETBIT": {{pos: 2, what: "a bit offset", below: maxBitOffset, refusal: "ERR bit offset is not an integer or out of range", fix: "pass an offset from 0 to 4294967295 (2^32 - 1), counted from the start of the string"}},
	"BITPOS": {{pos: 2, what: "a bit", below: 2, refusal: "ERR The bit argument must be 1 or 0.", fix: "pass 0 or 1"}},
	"SCAN":   {{keyword: "COUNT", from: 1, what: "a count", min: 1, refusal: "ERR syntax error", fix: "pass 1 or more"}},
	// restoreCommand reads its options, then the ttl, then the payload.
	"RESTORE": {
		{pos: 2, what: "a ttl", refusal: "ERR Invalid TTL value, must be >= 0", fix: "pass 0 (no expiry) or more"},
		{keyword: "IDLETIME", from: 3, what: "an idle time", refusal: "ERR Invalid IDLETIME value, must be >= 0", fix: "pass 0 or more"},
		{keyword: "FREQ", from: 3, what: "a frequency", below: 256, refusal: "ERR Invalid FREQ value, must be >= 0 and <= 255", fix: "pass 0 to 255"},
	},
	"LPOS": {
		{keyword: "RANK", from: 2, what: "a rank", nonZero: true, refusal: "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list", fix: "pass 1 for the first match, -1 for the last"},
		{keyword: "COUNT", from: 2, what: "a count", refusal: "ERR COUNT can't be negative", fix: "pass 0 (every match) or more"},
		{keyword: "MAXLEN", from: 2, what: "a maximum length", refusal: "ERR MAXLEN can't be negative", fix: "pass 0 (the whole list) or more"},
	},
}

// checkRanges refuses a literal integer argument Redis refuses out of its
// range (rangeArgs): the call fails at run time, after the script's earlier
// writes.
func checkRanges(c parse.Call, name string, at func(parse.Pos, string, ...any)) {
	for _, r := range rangeArgs[name] {
		var a *parse.Arg
		switch {
		case r.pos > 0 && r.pos <= len(c.Args) && !(r.pos == len(c.Args) && c.Args[r.pos-1].Expands):
			a = &c.Args[r.pos-1]
		case r.keyword != "":
			for i := r.from; i+1 < len(c.Args); i++ {
				if !c.Args[i].Exact {
					break // an argument the checker cannot read may be a value or a keyword
				}
				if strings.EqualFold(*c.Args[i].Literal, r.keyword) {
					a = &c.Args[i+1]
					break
				}
			}
		}
		if a == nil || !a.Exact {
			continue
		}
		where := name
		if r.keyword != "" {
			where += " " + r.keyword
		}
		if p := luaIntegerProblem(*a); p != "" {
			if !numericPlaces(name, r) {
				at(a.Pos, "%s reads %s there, and %s", where, r.what, p)
			}
			continue
		}
		v, ok := literalInt(*a)
		if !ok {
			continue // no integer: checked with the numbers
		}
		switch {
		case r.nonZero && v == 0:
			at(a.Pos, "%s reads %s there that is not 0, and the call passes 0: Redis refuses it at run time (%q), after the script's earlier writes; %s", where, r.what, r.refusal, r.fix)
		case !r.nonZero && v < r.min:
			least := "0 or more"
			if r.min == 1 {
				least = "1 or more"
			}
			at(a.Pos, "%s reads %s of %s there, and the call passes %s: Redis refuses it at run time (%q), after the script's earlier writes; %s", where, r.what, least, *a.Literal, r.refusal, r.fix)
		case r.below != 0 && v >= r.below:
			at(a.Pos, "%s reads %s under %d there, and the call passes %s: Redis refuses it at run time (%q), after the script's earlier writes; %s", where, r.what, r.below, *a.Literal, r.refusal, r.fix)
		}
	}
}

// numericPlaces reports whether the number checks (numericArgs) place the
// integer r, and report a Lua number there that is not the integer written
// themselves.
func numericPlaces(name string, r rangeArg) bool {
	sig := numericArgs[name]
	if r.keyword != "" {
		_, ok := sig.tokens[r.keyword]
		return ok
	}
	return r.pos <= len(sig.fixed) && sig.fixed[r.pos-1].kind == 'i'
}

// maxBulkLen is proto-max-bulk-len's default (512 MB), the longest string
// Redis makes unless the server's configuration raises it.
const maxBulkLen = 512 << 20

// checkSetrangeLength refuses a SETRANGE whose literal offset and string
// literal value make a string longer than maxBulkLen: Redis refuses it
// before writing ("ERR string exceeds maximum allowed size
// (proto-max-bulk-len)"), whether the key exists or not. An empty value
// writes nothing, and Redis takes any offset of 0 or more with it. A Lua
// number value is sent as %.17g writes it, so it is left alone.
func checkSetrangeLength(c parse.Call, name string, at func(parse.Pos, string, ...any)) {
	if name != "SETRANGE" || len(c.Args) != 3 || c.Args[2].Expands {
		return
	}
	off, val := c.Args[1], c.Args[2]
	if !val.Exact || val.Number || len(*val.Literal) == 0 || luaIntegerProblem(off) != "" {
		return
	}
	v, ok := literalInt(off)
	if !ok || v < 0 || v <= maxBulkLen-int64(len(*val.Literal)) {
		return // a negative offset is checkRanges'
	}
	at(off.Pos, "SETRANGE writes its %d-byte value at offset %s, which ends past %d bytes (512 MB, proto-max-bulk-len's default): Redis refuses the call at run time (\"ERR string exceeds maximum allowed size (proto-max-bulk-len)\"), after the script's earlier writes; keep the offset at %d or under", len(*val.Literal), *off.Literal, maxBulkLen, maxBulkLen-int64(len(*val.Literal)))
}
