package gen

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// resp3Line returns, for a position in the script, the line of the
// redis.setresp(3) that may be in effect there (0 when none): the last call
// of redis.setresp above it, read from top to bottom, when that is
// redis.setresp(3) (in an if too: RESP3 on one path at least). A call with
// any other argument (2, or one the checker cannot read) ends it; in an if
// or a loop, which may not run it, only below it in that statement, or
// after it when the redis.setresp(3) is in it too.
//
// One written in a local function (funcs) runs when the function does: it
// holds below it in the function's body, and, as the last one there leaves
// the protocol, after each call of the function by name; not where the
// function is written, nor at all for a function never called. One in a
// function that may run out of sight (passed as a value, not a local
// function) is read where it is written.
//
// The body of a local function called by name starts in the protocol in
// effect at its calls (RESP3 when it is at one of them), not in the one
// where it is written: a helper written above redis.setresp(3) and called
// below it runs in RESP3.
func resp3Line(calls []parse.RedisLibCall, funcs []parse.Func) func(parse.Pos) int {
	return protocolLine(calls, funcs, false)
}

// maybeResp3Line is resp3Line with a call of redis.setresp whose argument
// the checker cannot read taken as redis.setresp(3): where RESP3 may be in
// effect, so that the RESP2 checks stay out.
func maybeResp3Line(calls []parse.RedisLibCall, funcs []parse.Func) func(parse.Pos) int {
	return protocolLine(calls, funcs, true)
}

func protocolLine(calls []parse.RedisLibCall, funcs []parse.Func, unknownIs3 bool) func(parse.Pos) int {
	type set struct {
		at          parse.Pos
		line        int         // of the redis.setresp(3), 0 for another call
		in          *parse.Func // nil: everywhere below; else in this function only
		from, until int         // the lines of the if or loop it is in, if any
		loops       [][2]int    // the loops it is written in (see parse.RedisLibCall)
		blocks      []int       // the blocks it is written in (see parse.RedisLibCall)
		exitOf      int         // for a call of a function: its Fn
	}
	lineOf := func(c parse.RedisLibCall) int {
		if v, ok := setrespVersion(c.First); ok && v == 3 || !ok && unknownIs3 {
			return c.Pos.Line
		}
		return 0
	}
	before := func(a, b parse.Pos) bool { return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col }
	var sets []set
	last := map[int]parse.RedisLibCall{} // the last one in each function, by Fn
	for _, c := range calls {
		if c.Name != "setresp" {
			continue
		}
		if c.Fn <= 0 || c.Fn > len(funcs) || funcs[c.Fn-1].Escaped {
			sets = append(sets, set{at: c.Pos, line: lineOf(c), from: c.From, until: c.Until, loops: c.Loops, blocks: c.Blocks})
			continue
		}
		sets = append(sets, set{at: c.Pos, line: lineOf(c), in: &funcs[c.Fn-1], from: c.From, until: c.Until, loops: c.Loops, blocks: c.Blocks})
		if l, ok := last[c.Fn]; !ok || before(l.Pos, c.Pos) {
			last[c.Fn] = c
		}
	}
	for fn, c := range last {
		f := funcs[fn-1]
		for i, at := range f.Calls {
			// A call in an if or a loop may not run: as a redis.setresp
			// written there.
			var in [2]int
			if i < len(f.CallsIn) {
				in = f.CallsIn[i]
			}
			// A call in a loop: the protocol the function leaves holds at
			// the loop's next iteration, as one of redis.setresp there.
			var loops [][2]int
			var blocks []int
			if i < len(f.CallsLoops) {
				loops, blocks = f.CallsLoops[i], f.CallsBlocks[i]
			}
			sets = append(sets, set{at: at, line: lineOf(c), from: in[0], until: in[1], loops: loops, blocks: blocks, exitOf: fn})
		}
	}
	sort.SliceStable(sets, func(i, j int) bool { return before(sets[i].at, sets[j].at) })
	// in is the innermost local function whose body holds p and that the
	// script calls by name, nil for none. (A function passed as a value
	// inside it runs where it is written, as far as the checker can tell.)
	in := func(p parse.Pos) *parse.Func {
		var f *parse.Func
		for i := range funcs {
			g := &funcs[i]
			if g.Escaped || len(g.Calls) == 0 || p.Line < g.Line || p.Line > g.LastLine {
				continue
			}
			if f == nil || g.Line >= f.Line && g.LastLine <= f.LastLine {
				f = g
			}
		}
		return f
	}
	// entries are the protocols each function's body starts in, once
	// found (a function called from functions called many times is not
	// walked again for each).
	entries := map[*parse.Func]int{}
	// cutAt is the least depth (in entering) of the functions whose calls
	// were left out as recursive while an entry was being found: an entry
	// found past a call of a function entered before it is not final; one
	// past a call of itself is (its other calls give what it starts in),
	// and is kept, or a recursive helper called by helpers would be walked
	// again for each of their calls (exponential time).
	cutAt := math.MaxInt
	var lineAt func(p parse.Pos, entering map[*parse.Func]int) int
	var loopedResp3 func(p parse.Pos) int
	lineAt = func(p parse.Pos, entering map[*parse.Func]int) int {
		// since is the line where RESP3 was set (of the call, for one
		// set by a call of a function): one set in the if or loop that
		// switches back switches back after it too. 0 for a function's
		// entry.
		line, since := 0, 0
		start := parse.Pos{}
		if f := in(p); f != nil {
			// The body runs at each call: in the protocol in effect there
			// (RESP3 at one of them at least), whatever holds where the
			// function is written; then as it switches in the body.
			start = parse.Pos{Line: f.Line}
			if l, ok := entries[f]; ok {
				line = l
			} else if d, ok := entering[f]; ok {
				cutAt = min(cutAt, d)
			} else {
				depth := len(entering)
				entering[f] = depth
				outer := cutAt
				cutAt = math.MaxInt
				for _, c := range f.Calls {
					if l := lineAt(c, entering); l != 0 {
						line = l
						break
					}
				}
				delete(entering, f)
				if cutAt >= depth {
					entries[f] = line
					cutAt = math.MaxInt
				}
				cutAt = min(cutAt, outer)
			}
		}
		for _, s := range sets {
			if !before(s.at, p) {
				break
			}
			if before(s.at, start) {
				continue
			}
			switch {
			case s.in != nil && (p.Line < s.in.Line || p.Line > s.in.LastLine):
			case s.line != 0:
				line, since = s.line, s.at.Line // RESP3, on one path at least
			case s.until == 0, p.Line <= s.until, line != 0 && since >= s.from:
				// Another protocol for sure: not in an if or a loop, or
				// in it below the call, or after it when RESP3 was set in
				// it too (if c then redis.setresp(3) ... redis.setresp(2) end).
				line = 0
			}
		}
		if line == 0 {
			line = loopedResp3(p)
		}
		return line
	}
	// loopedResp3 is the line of a redis.setresp(3) below p in a loop that
	// holds p, when the loop's next iteration reaches p in RESP3: no other
	// redis.setresp written in the loop's body itself (not in an if or a
	// loop in it) runs after it in the iteration, nor before p in the
	// next. 0 for none.
	loopedResp3 = func(p parse.Pos) int {
		for _, s := range sets {
			if s.line == 0 || !before(p, s.at) {
				continue
			}
			for _, l := range s.loops {
				if p.Line < l[0] || p.Line > l[1] {
					continue
				}
				back := false // switched back in the body itself
				for _, o := range sets {
					if o.line == 0 && o.from == l[0] && o.until == l[1] && (before(s.at, o.at) || before(o.at, p)) {
						back = true
					}
					// if c then redis.setresp(3) ... redis.setresp(2) end:
					// one below it in its own block (or one holding it
					// in the loop) runs whenever it does.
					if o.line == 0 && before(s.at, o.at) && o.at.Line <= l[1] && len(o.blocks) > 0 && slices.Contains(s.blocks, o.blocks[len(o.blocks)-1]) {
						back = true
					}
				}
				if !back {
					return s.line
				}
			}
		}
		return 0
	}
	// A function whose last redis.setresp switches back may return above
	// it, or after it in an if: in RESP3 when that holds at the return
	// (if c then return end redis.setresp(2)), and so after its call.
	early := map[int]int{} // by Fn, the line of the RESP3 a return may leave
	for fn, c := range last {
		if lineOf(c) != 0 {
			continue
		}
		for _, r := range funcs[fn-1].Returns {
			// The return ends its block: a position past its line's end.
			if l := lineAt(parse.Pos{Line: r, Col: math.MaxInt32}, map[*parse.Func]int{}); l != 0 {
				early[fn] = l
				break
			}
		}
	}
	if len(early) > 0 {
		for i := range sets {
			if l, ok := early[sets[i].exitOf]; ok {
				sets[i].line = l
			}
		}
		clear(entries) // found with the calls switching back
	}
	return func(p parse.Pos) int { return lineAt(p, map[*parse.Func]int{}) }
}

// luaDecimal and luaHex are the numbers Lua 5.1 reads in a string
// (luaO_str2d: strtod, then strtoul for a hexadecimal one), spaces around
// them aside.
var (
	luaDecimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
	luaHex     = regexp.MustCompile(`^[+-]?0[xX][0-9a-fA-F]+$`)
)

// setrespVersion is the protocol redis.setresp(f) asks for, as Redis reads
// its argument: Lua's tonumber (of a string too: 0 when it is no number),
// truncated to an integer (so 3.5 and '3' ask for 3). ok is false when the
// checker cannot tell.
func setrespVersion(f parse.Operand) (v int, ok bool) {
	var text string
	switch f.Type {
	case parse.OperandNumber:
		text = f.Text
	case parse.OperandString:
		text = strings.Trim(f.Literal, " \t\n\v\f\r")
		if !luaDecimal.MatchString(text) && !luaHex.MatchString(text) {
			return 0, true
		}
	default:
		return 0, false
	}
	var n float64
	if luaHex.MatchString(text) {
		neg := strings.HasPrefix(text, "-")
		u, err := strconv.ParseUint(strings.TrimLeft(text, "+-")[2:], 16, 64)
		if err != nil {
			return 0, false
		}
		n = float64(u)
		if neg {
			n = -n
		}
	} else {
		var err error
		if n, err = strconv.ParseFloat(text, 64); err != nil {
			return 0, false
		}
	}
	if math.IsNaN(n) || math.Abs(n) >= 1<<31 {
		return 0, false
	}
	return int(n), true // truncated toward zero, as C's (int) cast
}

// resp3Tokens are the options that give a reply of a resp3ElemsWith command
// its RESP3 shape (pairs in arrays, doubles).
var resp3Tokens = []string{"WITHSCORES", "WITHVALUES", "WITHSCORE"}

// verbatimReplies are the commands and subcommands whose string reply RESP3
// gives as a verbatim string, which a script switches to with
// redis.setresp(3): Redis's reply schemas call it a string.
var verbatimReplies = map[string]bool{
	"CLIENT|INFO": true, "CLIENT|LIST": true, "CLUSTER|INFO": true, "CLUSTER|NODES": true,
	"INFO": true, "LATENCY|DOCTOR": true, "LATENCY|GRAPH": true, "LOLWUT": true,
	"MEMORY|DOCTOR": true, "MEMORY|MALLOC-STATS": true,
}

// resp3Sets are the commands whose array reply RESP3 gives as a set (SPOP
// with a count), which reaches Lua as a table {set = {member = true, ...}}:
// the reply schemas mark it only as an array of unique items.
var resp3Sets = map[string]bool{
	"SDIFF": true, "SINTER": true, "SMEMBERS": true, "SPOP": true, "SUNION": true,
}

// resp3MapWith are the commands whose reply is a map in RESP3 only with one
// of these words: LCS with IDX (without it a string, with LEN an integer).
// The reply schemas list the map among the replies, whatever the words.
var resp3MapWith = map[string][]string{"LCS": {"IDX"}}

// resp3MapReply reports whether the reply of call c (command name, as in
// the table) is a map in RESP3.
func resp3MapReply(name string, c *parse.Call) bool {
	if resp3Replies[name]&resp3Map == 0 {
		return false
	}
	if words, ok := resp3MapWith[name]; ok {
		return hasToken(c, words)
	}
	return true
}

// resp3Reply says what the reply of call c (command name) is in RESP3 where
// that shape differs from RESP2 and the decoder for t does not read it; ""
// otherwise. The generated decoders read a RESP3 map as map[string]string
// and a double as float64.
func resp3Reply(name string, c *parse.Call, t Type) string {
	info, ok := calledCommand(name, c)
	if !ok || hasSubcommands[info.name] {
		return ""
	}
	shape := resp3Replies[info.name]
	switch {
	case verbatimReplies[info.name]:
		// No decoder reads it: rueidis does not take it for a string.
		return "a verbatim string (RESP3 \"=\" with a \"txt:\" prefix), not a plain string"
	case resp3MapReply(info.name, c) && t.Kind != StringMap:
		return "a map, not a flat array of field-value pairs"
	case shape&resp3Double != 0 && t.Kind != Float64 && (info.reply&^replyNil == replyStr || hasToken(c, []string{"INCR"})):
		return "a double, not a string"
	case shape&resp3Elems != 0, shape&resp3ElemsWith != 0 && c != nil && hasToken(c, resp3Tokens):
		return "an array of doubles or of arrays (scores as doubles, pairs in arrays of two), not a flat array of strings"
	case nilItems(info.name, c):
		return "an array that ends at its first missing element (RESP3 hands a missing value to Lua as nil, not false, and Lua ends an array at its first nil)"
	}
	return ""
}

// checkResp3Return refuses a return, after redis.setresp(3) (at line), of a
// value whose RESP3 reply the decoder for t does not read: a Lua boolean,
// which Redis then replies as a RESP3 boolean (false, not nil; true, not 1),
// and a command reply whose RESP3 shape differs (resp3Reply).
func checkResp3Return(ret parse.Return, calls []parse.Call, t Type, resp3 func(parse.Pos) int, at func(parse.Pos, string, ...any)) {
	vals := []parse.Return{ret}
	if ret.Kind == parse.ReturnOneOf || ret.Kind == parse.ReturnEither {
		vals = ret.Alts
	}
	for _, v := range vals {
		about := func(what string) string {
			if v.Local != "" {
				return fmt.Sprintf("returns %s, assigned at line %d: %s", v.Local, v.From.Line, what)
			}
			return "returns " + what
		}
		boolOK := func(t Type) bool { return t.Kind == Bool && !t.Nullable }
		const boolText = "Redis then replies a Lua boolean as a RESP3 boolean (false, not nil; true, not 1)"
		line := resp3(ret.Pos)
		switch {
		case line == 0:
		case v.Boolean && !boolOK(t):
			at(ret.Pos, "%s after redis.setresp(3) (line %d): %s, which @return %s does not read: the callers get a *DecodeError; return nil for a nil reply and 1 for true, or switch back with redis.setresp(2) before returning",
				about("a Lua boolean"), line, boolText, t.String())
			return
		case v.Kind == parse.ReturnArray:
			for i, el := range v.Elems {
				what := "a Lua boolean"
				if el.Kind == parse.ReturnEither {
					// Any of the values it gives (true from the left of an or).
					if !slices.ContainsFunc(givenAlts(el.Alts, calls), func(a parse.Return) bool { return a.Boolean }) {
						continue
					}
					what = "an and/or that may give a Lua boolean"
				} else if !el.Boolean {
					continue
				}
				if t.Kind == Record && i < len(t.Fields) && boolOK(t.Fields[i].Type) {
					continue
				}
				at(ret.Pos, "%s after redis.setresp(3) (line %d): %s, which @return %s does not read there: the callers get a *DecodeError; switch back with redis.setresp(2) before returning, or put 1 and 0 in the table",
					about(fmt.Sprintf("an array with %s at [%d]", what, i)), line, boolText, t.String())
				return
			}
		}
		if v.Kind == parse.ReturnArray && checkResp3Elems(v, calls, t, about, resp3, ret.Pos, at) {
			return
		}
		if v.Kind != parse.ReturnCall || v.Call < 0 || v.Call >= len(calls) {
			continue
		}
		// The reply has the shape of the protocol in effect at the call.
		c := &calls[v.Call]
		if line := resp3(c.Pos); line > 0 {
			if what := resp3Reply(v.Command, c, t); what != "" {
				at(ret.Pos, "%s, called after redis.setresp(3) (line %d): it is then %s, which @return %s does not read (the callers get a *DecodeError, or values are lost); call %s before redis.setresp(3), or build the reply in the script",
					about("the reply of "+calledName(v.Command, c)), line, what, t.String(), calledName(v.Command, c))
				return
			}
		}
	}
}

// checkResp3Elems refuses a returned table (v) holding the reply of a call
// made after redis.setresp(3) whose RESP3 shape the decoder of its place
// does not read (a double in a string field, a map): the reply keeps the
// shape it reached Lua in, whatever the protocol at the return. It reports
// whether it refused one.
func checkResp3Elems(v parse.Return, calls []parse.Call, t Type, about func(string) string, resp3 func(parse.Pos) int, pos parse.Pos, at func(parse.Pos, string, ...any)) bool {
	for i, el0 := range v.Elems {
		et, whose, ok := elemOf(t, i)
		if !ok {
			continue
		}
		// An and/or gives any of its values (those it never gives aside).
		alts, either := []parse.Return{el0}, el0.Kind == parse.ReturnEither
		if either {
			alts = givenAlts(el0.Alts, calls)
		}
		for _, el := range alts {
			if el.Kind != parse.ReturnCall || el.Call < 0 || el.Call >= len(calls) {
				continue
			}
			c := &calls[el.Call]
			line := resp3(c.Pos)
			if line == 0 {
				continue
			}
			what := resp3Reply(el.Command, c, et)
			if what == "" {
				continue
			}
			name := calledName(el.Command, c)
			reply := "the reply of " + name
			if el.Local != "" {
				reply = el.Local + ", " + reply
			}
			if either {
				reply = "an and/or that may give " + reply
			}
			at(pos, "%s, called after redis.setresp(3) (line %d): it is then %s, which %s does not read there (the callers get a *DecodeError); call %s before redis.setresp(3), or build the value in the script",
				about(fmt.Sprintf("an array with %s at [%d]", reply, i)), line, what, whose, name)
			return true
		}
	}
	return false
}

// calledName is the name of the command call c makes (command), as messages
// show it: with its subcommand (MEMORY DOCTOR).
func calledName(command string, c *parse.Call) string {
	if info, ok := calledCommand(command, c); ok {
		return shownName(info.name)
	}
	return strings.ToUpper(command)
}

// checkResp3Read refuses a read of the reply of a call made after
// redis.setresp(3) that is then a map or a set (an index, a field other than
// map or set, ipairs, pairs, unpack, table.concat: e.How is "index",
// "field name", "ipairs", "pairs", "unpack" or "table.concat"): RESP3
// hands it to Lua as a table {map = {...}} or {set = {...}} with nothing
// else in it, so each misses what the key holds.
func checkResp3Read(e parse.ElemRead, calls []parse.Call, resp3 func(parse.Pos) int, at func(parse.Pos, string, ...any)) {
	if e.Call < 0 || e.Call >= len(calls) {
		return
	}
	c := calls[e.Call]
	line := resp3(c.Pos)
	info, ok := calledCommand(c.Command, &c)
	if line == 0 || !ok {
		return
	}
	what, field, holds := "a map", "map", "field = value"
	switch {
	case resp3MapReply(info.name, &c):
	case resp3Sets[info.name] && (info.name != "SPOP" || len(c.Args) > 1):
		what, field, holds = "a set", "set", "member = true"
	default:
		return
	}
	var subject string
	switch {
	case e.How == "ipairs":
		subject = e.Text + " goes over nothing"
	case e.How == "pairs":
		subject = e.Text + " gives the one field " + field
	case e.How == "unpack":
		subject = e.Text + " gives nothing"
	case e.How == "table.concat":
		subject = e.Text + " is always an empty string"
	case e.How == "field "+field:
		return // h.map: the map itself
	default:
		subject = e.Text + " is always nil"
	}
	pos := e.Pos
	if pos == (parse.Pos{}) {
		pos = c.Pos
	}
	name := shownName(info.name)
	at(pos, "%s: after redis.setresp(3) (line %d) %s replies %s, handed to Lua as a table {%s = {...}} with nothing else in it; read it as %s.%s (%s), or call %s before redis.setresp(3)",
		subject, line, name, what, field, e.Obj, field, holds, name)
}
