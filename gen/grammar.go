package gen

import (
	"fmt"
	mathbits "math/bits"
	"slices"
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// checkGrammar matches the words of a call of a grammarArgs command against
// its argument specification and refuses a call no reading of which fits
// (SORT k LIMIT 0, XADD k * f v g): Redis refuses it at run time, after the
// script's earlier writes.
//
// The match reads the words as Redis's parsers do, and gives the benefit of
// the doubt wherever it cannot know: a word the checker cannot read may be
// anything (a keyword or a value); optional arguments that follow each other
// may come in any order and repeat (Redis reads such options in a loop, the
// last one winning), but once in onceOptions' commands; an optional keyword
// at the end of an optional block (XADD's LIMIT) may come anywhere among
// them; a call whose last argument gives any number of words (unpack(t)) is
// not checked.
//
// It reports whether the call fits (or is not checked).
func checkGrammar(c parse.Call, name string, at func(parse.Pos, string, ...any)) bool {
	args, ok := grammarArgs[name]
	if !ok {
		return true
	}
	for _, a := range c.Args {
		if a.Expands {
			return true
		}
	}
	m := grammarMatch{cmd: name, words: c.Args, far: -1, numkeys: -1}
	ends := m.seq(args, []int{0})
	n := len(c.Args)
	if slices.Contains(ends, n) {
		return true
	}
	for _, e := range ends {
		m.fail(e, "")
	}
	shown := strings.ReplaceAll(name, "|", " ")
	syntax := shown + " " + syntaxText(args)
	want := make([]string, 0, len(m.want))
	end := false
	for _, w := range m.want {
		if w == "" {
			end = true
			continue
		}
		want = append(want, w)
	}
	if end {
		want = append(want, "nothing more")
	}
	const refused = "so Redis refuses the call at run time, after the script's earlier writes"
	if m.far < n && onceOptions[name] {
		if tok, again := repeatedOption(c.Args, m.far, args); again {
			at(c.Args[m.far].Pos, "%s takes %s once, and the call gives it again: Redis refuses the call at run time (\"ERR syntax error\"), after the script's earlier writes; give one %s", shown, tok, tok)
			return false
		}
	}
	if m.far >= n {
		pos := c.CommandPos
		after := ""
		if n > 0 {
			pos = c.Args[n-1].Pos
			after = fmt.Sprintf(" (after %s)", wordText(c.Args[n-1]))
		}
		at(pos, "%s reads %s there%s, and the call ends: its words do not fit %s, %s", shown, orList(want), after, syntax, refused)
		return false
	}
	if p := luaIntegerProblem(c.Args[m.far]); p != "" {
		at(c.Args[m.far].Pos, "%s reads %s there, and %s", shown, orList(want), p)
		return false
	}
	at(c.Args[m.far].Pos, "%s reads %s there, and the call gives %s: its words do not fit %s, %s", shown, orList(want), wordText(c.Args[m.far]), syntax, refused)
	return false
}

// onceOptions are the commands whose optional arguments Redis reads at most
// once each, refusing another ("ERR syntax error"): their runs of options
// are single ones (LMPOP's [COUNT count]), so a run is matched once.
var onceOptions = map[string]bool{"LMPOP": true, "BLMPOP": true, "ZMPOP": true, "BZMPOP": true}

// repeatedOption reports whether word i, where a call stopped fitting, is
// the keyword of an optional argument the call gave before (with its value
// after it), and which.
func repeatedOption(words []parse.Arg, i int, args []argNode) (string, bool) {
	w, ok := sentText(words[i])
	if !ok {
		return "", false
	}
	for _, n := range args {
		if !n.optional || n.token == "" || !strings.EqualFold(w, n.token) {
			continue
		}
		for j := 0; j+1 < i; j++ {
			if p, ok := sentText(words[j]); ok && strings.EqualFold(p, n.token) {
				return n.token, true
			}
		}
	}
	return "", false
}

// wordText shows a call's argument in a message.
func wordText(a parse.Arg) string {
	if a.Exact {
		return fmt.Sprintf("%q", *a.Literal)
	}
	if a.Value.Text != "" {
		return a.Value.Text
	}
	return "an expression"
}

// grammarMatch matches a call's words against argument specifications. A
// match goes from a set of word indexes (where readings so far have got to)
// to the set where they get to next; far is the furthest index a reading
// failed at, and want what it wanted there ("" for the end of the call).
type grammarMatch struct {
	cmd   string
	words []parse.Arg
	far   int
	want  []string
	// numkeys is the literal key count of the call (-1: none, or one the
	// checker cannot read): the keys, and WEIGHTS' values, come that many
	// times.
	numkeys int
}

// grammarWords check the words of arguments the specifications type
// loosely, or otherwise than Redis reads them ("COMMAND argument-name"):
// ok reports whether Redis may take the word, want what it reads there.
// (integer: Redis reads an integer there, which a Lua number may not be:
// luaIntegerProblem).
var grammarWords = map[string]struct {
	want    string
	ok      func(string) bool
	integer bool
}{
	"BITFIELD encoding":    {"encoding (i1 to i64, u1 to u63)", bitfieldType, false},
	"BITFIELD_RO encoding": {"encoding (i1 to i64, u1 to u63)", bitfieldType, false},
	"BITFIELD offset":      {"offset (an integer of 0 or more, or # and one)", bitfieldOffset, true},
	"BITFIELD_RO offset":   {"offset (an integer of 0 or more, or # and one)", bitfieldOffset, true},
	"ZUNIONSTORE weight":   {"weight (a number)", weightText, false},
	"ZINTERSTORE weight":   {"weight (a number)", weightText, false},
	"ZUNION weight":        {"weight (a number)", weightText, false},
	"ZINTER weight":        {"weight (a number)", weightText, false},
}

// checkBitop refuses BITOP NOT with other than one source key, which
// Redis refuses at run time ("BITOP NOT must be called with a single source
// key"), after the script's earlier writes. It reports whether it refused
// nothing.
func checkBitop(c parse.Call, name string, at func(parse.Pos, string, ...any)) bool {
	if name != "BITOP" || len(c.Args) < 3 || c.Args[len(c.Args)-1].Expands {
		return true
	}
	if op, ok := sentText(c.Args[0]); !ok || !strings.EqualFold(op, "NOT") {
		return true
	}
	if n := len(c.Args) - 2; n != 1 {
		at(c.Args[3].Pos, "BITOP NOT takes one source key, and the call gives %d: Redis refuses the call at run time (\"ERR BITOP NOT must be called with a single source key.\"), after the script's earlier writes", n)
		return false
	}
	return true
}

// checkBitRange reads the range of BITCOUNT (key [start end [BIT|BYTE]])
// and BITPOS (key bit [start [end [BIT|BYTE]]]) as Redis 7.0 reads it, and
// refuses what it refuses: words in a number it takes no range of, a start
// or end that is no integer, and a unit other than BIT or BYTE. Redis 7.0
// reads the range only when the key holds a string (a missing key is
// answered 0, or -1, first; later versions read it first), so the call
// fails whenever there are bits to count. It reports whether it refused
// nothing.
func checkBitRange(c parse.Call, name string, at func(parse.Pos, string, ...any)) bool {
	from := 1 // the range's first word
	if name == "BITPOS" {
		from = 2
	} else if name != "BITCOUNT" {
		return true
	}
	if len(c.Args) < from || c.Args[len(c.Args)-1].Expands {
		return true
	}
	const when = "Redis refuses the call at run time when the key holds a string"
	spec := map[string]string{"BITCOUNT": "BITCOUNT key [start end [BIT|BYTE]]", "BITPOS": "BITPOS key bit [start [end [BIT|BYTE]]]"}[name]
	words := c.Args[from:]
	if n := len(words); n > 3 || name == "BITCOUNT" && n == 1 {
		if n == 1 {
			at(words[0].Pos, "%s takes a start only with an end (%s), and the call passes a start alone: %s (\"ERR syntax error\"), after the script's earlier writes", name, spec, when)
		} else {
			at(words[3].Pos, "%s takes up to 3 words of range, start, end and BIT or BYTE (%s), and the call passes %d: %s (\"ERR syntax error\"), after the script's earlier writes", name, spec, n, when)
		}
		return false
	}
	// Redis reads the start, then (BITPOS) the unit, then the end.
	order := []int{0, 1, 2}
	if name == "BITPOS" {
		order = []int{0, 2, 1}
	}
	for _, i := range order {
		if i >= len(words) || !words[i].Exact {
			continue
		}
		a := words[i]
		if i == 2 {
			if u, ok := sentText(a); ok && !strings.EqualFold(u, "BIT") && !strings.EqualFold(u, "BYTE") {
				at(a.Pos, "%s reads BIT or BYTE there (%s), and %q is neither: %s (\"ERR syntax error\"), after the script's earlier writes", name, spec, u, when)
				return false
			}
			continue
		}
		what := []string{"a start", "an end"}[i]
		if p := luaIntegerProblem(a); p != "" {
			at(a.Pos, "%s reads %s there (an integer; %s), and %s", name, what, spec, p)
			return false
		}
		if notInteger(a) {
			at(a.Pos, "%s reads %s there (an integer; %s), and %q is none%s: %s (\"ERR value is not an integer or out of range\"), after the script's earlier writes", name, what, spec, *a.Literal, strictHint(a), when)
			return false
		}
	}
	return true
}

// numericFixed reports whether the number checks (numericArgs) place the
// argument name of command cmd among its fixed words, and report a word
// there that is no integer themselves.
func numericFixed(cmd, name string) bool {
	return slices.ContainsFunc(numericArgs[cmd].fixed, func(w argWord) bool { return w.name == name })
}

// bitfieldType reports whether Redis reads s as a BITFIELD type
// (getBitfieldTypeFromArgument): i1 to i64, u1 to u63, lower case.
func bitfieldType(s string) bool {
	if s == "" || s[0] != 'i' && s[0] != 'u' {
		return false
	}
	bits, ok := string2ll(s[1:])
	return ok && bits >= 1 && (bits <= 63 || s[0] == 'i' && bits == 64)
}

// bitfieldOffset reports whether Redis reads s as a BITFIELD offset: an
// integer of 0 or more, with a leading # to count in units of the type.
func bitfieldOffset(s string) bool {
	v, ok := string2ll(strings.TrimPrefix(s, "#"))
	return ok && v >= 0
}

// maxBitOffset is the least bit offset Redis refuses
// (getBitOffsetFromArgument: offset >> 3 must be under proto-max-bulk-len,
// 512 MB unless the server's configuration raises it).
const maxBitOffset = 1 << 32

// checkBitfieldOffsets reads the operations of BITFIELD and BITFIELD_RO as
// Redis does, up to the first word the checker cannot read, and refuses a
// literal offset Redis refuses as out of range, or reads as another offset:
// the #N form is multiplied by the type's width in 64 bits, which wraps
// around unchecked (#2305843009213693953 of u8 is offset 8). It reports
// whether it refused nothing.
func checkBitfieldOffsets(c parse.Call, name string, at func(parse.Pos, string, ...any)) bool {
	if name != "BITFIELD" && name != "BITFIELD_RO" {
		return true
	}
	for j := 1; j < len(c.Args) && !c.Args[j].Expands; {
		op, ok := sentText(c.Args[j])
		if !ok {
			return true
		}
		switch strings.ToUpper(op) {
		case "OVERFLOW":
			j += 2
			continue
		case "GET":
		case "SET", "INCRBY":
		default:
			return true
		}
		if j+2 >= len(c.Args) || c.Args[j+2].Expands {
			return true
		}
		off := c.Args[j+2]
		text, ok := sentText(off)
		if !ok {
			return true
		}
		hash := strings.HasPrefix(text, "#")
		v, ok := string2ll(strings.TrimPrefix(text, "#"))
		if !ok || v < 0 {
			return true // the grammar's
		}
		const refused = "Redis refuses the call at run time (\"ERR bit offset is not an integer or out of range\"), after the script's earlier writes"
		where := name + " " + strings.ToUpper(op)
		if hash {
			typ, ok := sentText(c.Args[j+1])
			if !ok || !bitfieldType(typ) {
				return true
			}
			bits, _ := string2ll(typ[1:])
			hi, lo := mathbits.Mul64(uint64(v), uint64(bits))
			wrapped := int64(lo)
			switch {
			case (hi != 0 || lo >= 1<<63) && (wrapped < 0 || wrapped >= maxBitOffset):
				at(off.Pos, "%s reads a bit offset there under 2^32 (4294967296), and %q of %s is %s times %d, which overflows 64 bits: %s", where, text, typ, text[1:], bits, refused)
				return false
			case hi != 0 || lo >= 1<<63:
				at(off.Pos, "%s reads a bit offset there, and %q of %s is %s times %d, which overflows 64 bits and wraps around to %d: Redis reads that offset instead, without a word; pass the offset Redis should read", where, text, typ, text[1:], bits, wrapped)
				return false
			}
			v = wrapped
			if v >= maxBitOffset {
				at(off.Pos, "%s reads a bit offset there under 2^32 (4294967296), and %q of %s is %d: %s", where, text, typ, v, refused)
				return false
			}
		} else if v >= maxBitOffset {
			at(off.Pos, "%s reads a bit offset there under 2^32 (4294967296), and %s is not: %s", where, text, refused)
			return false
		}
		j += 3
		if !strings.EqualFold(op, "GET") {
			j++
		}
	}
	return true
}

// weightText reports whether Redis reads s as a weight (a double, not NaN;
// the specifications type it as an integer): string2d also refuses a number
// beyond a double, or so small that it rounds to 0.
func weightText(s string) bool { return numberText(s, false) && outOfDouble(s) == "" }

func (m *grammarMatch) fail(i int, want string) {
	if i > m.far {
		m.far, m.want = i, nil
	}
	if i == m.far && !slices.Contains(m.want, want) {
		m.want = append(m.want, want)
	}
}

// keyword reports whether word i may be the keyword tok.
func (m *grammarMatch) keyword(i int, tok string) bool {
	if i < len(m.words) && (!m.words[i].Exact || strings.EqualFold(*m.words[i].Literal, tok)) {
		return true
	}
	m.fail(i, tok)
	return false
}

// value reports whether word i may be the value n.
func (m *grammarMatch) value(i int, n argNode) bool {
	if i >= len(m.words) {
		m.fail(i, n.name)
		return false
	}
	a := m.words[i]
	if w, ok := grammarWords[m.cmd+" "+n.name]; ok {
		if w.integer && luaIntegerProblem(a) != "" {
			m.fail(i, w.want)
			return false
		}
		if t, known := sentText(a); known && !w.ok(t) {
			m.fail(i, w.want)
			return false
		}
		return true
	}
	if n.kind == 'i' && (notInteger(a) || luaIntegerProblem(a) != "") && !numericFixed(m.cmd, n.name) {
		m.fail(i, n.name+" (an integer)")
		return false
	}
	if n.name == "numkeys" {
		if v, ok := literalInt(a); ok && v >= 1 && v < int64(len(m.words)-i) {
			m.numkeys = int(v)
		}
	}
	return true
}

// seq matches arguments one after the other; a run of optional ones in any
// order, any number of times.
func (m *grammarMatch) seq(args []argNode, from []int) []int {
	cur := from
	for i := 0; i < len(args); {
		if !args[i].optional {
			cur = m.required(args[i], cur)
			i++
			continue
		}
		j := i
		for j < len(args) && args[j].optional {
			j++
		}
		run := hoist(args[i:j])
		out := slices.Clone(cur)
		frontier := cur
		if onceOptions[m.cmd] {
			for _, n := range run {
				for _, e := range m.required(n, cur) {
					if !slices.Contains(out, e) {
						out = append(out, e)
					}
				}
			}
			frontier = nil
		}
		for len(frontier) > 0 {
			var next []int
			for _, n := range run {
				for _, e := range m.required(n, frontier) {
					if !slices.Contains(out, e) && !slices.Contains(next, e) {
						next = append(next, e)
					}
				}
			}
			out = append(out, next...)
			frontier = next
		}
		cur = out
		i = j
	}
	return cur
}

// hoist takes the optional keywords at the end of the optional blocks of a
// run out into the run (XADD's [MAXLEN|MINID [=|~] threshold [LIMIT count]]):
// Redis reads them wherever options go.
func hoist(run []argNode) []argNode {
	var out, lifted []argNode
	for _, n := range run {
		k := len(n.args)
		for n.kind == 'b' && n.token == "" && k > 0 && n.args[k-1].optional && n.args[k-1].token != "" {
			k--
		}
		if k < len(n.args) {
			lifted = append(lifted, n.args[k:]...)
			n.args = n.args[:k]
		}
		out = append(out, n)
	}
	return append(out, lifted...)
}

// required matches n once (not left out), or more times if it repeats:
// the keys after a literal key count, and WEIGHTS' values, as many times as
// it says.
func (m *grammarMatch) required(n argNode, from []int) []int {
	out := m.once(n, from, true)
	if !n.multiple {
		return out
	}
	if m.numkeys > 0 && (n.name == "key" || n.name == "weight") {
		for range m.numkeys - 1 {
			out = m.once(n, out, n.multiToken || n.token == "")
		}
		return out
	}
	frontier := out
	for len(frontier) > 0 {
		var next []int
		for _, e := range m.once(n, frontier, n.multiToken || n.token == "") {
			if !slices.Contains(out, e) && !slices.Contains(next, e) {
				next = append(next, e)
			}
		}
		out = append(out, next...)
		frontier = next
	}
	return out
}

// once matches one occurrence of n, its keyword first when withToken.
func (m *grammarMatch) once(n argNode, from []int, withToken bool) []int {
	var out []int
	add := func(e ...int) {
		for _, x := range e {
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	for _, i := range from {
		if withToken && n.token != "" {
			if !m.keyword(i, n.token) {
				continue
			}
			i++
		}
		switch n.kind {
		case 't':
			add(i)
		case 'o':
			for _, alt := range n.args {
				add(m.seq([]argNode{alt}, []int{i})...)
				// An optional keyword that opens a block may come alone
				// (BITFIELD's OVERFLOW, which sets what follows).
				if alt.kind == 'b' && alt.token == "" && len(alt.args) > 1 && alt.args[0].optional && alt.args[0].token != "" {
					lone := alt.args[0]
					lone.optional = false
					add(m.seq([]argNode{lone}, []int{i})...)
				}
			}
		case 'b':
			add(m.seq(n.args, []int{i})...)
		default:
			if m.value(i, n) {
				add(i + 1)
			}
		}
	}
	return out
}

// syntaxText renders argument specifications as Redis's documentation
// writes them: key [BY pattern] [ASC|DESC].
func syntaxText(args []argNode) string {
	parts := make([]string, len(args))
	for i, n := range args {
		parts[i] = nodeText(n)
	}
	return strings.Join(parts, " ")
}

func nodeText(n argNode) string {
	var s string
	switch n.kind {
	case 't':
		s = n.token
	case 'o':
		alts := make([]string, len(n.args))
		for i, a := range n.args {
			alts[i] = nodeText(a)
		}
		s = strings.Join(alts, "|")
	case 'b':
		s = syntaxText(n.args)
	default:
		s = n.name
	}
	if n.token != "" && n.kind != 't' {
		s = n.token + " " + s
		if n.multiple && !n.multiToken {
			s += " [" + strings.TrimPrefix(s, n.token+" ") + " ...]"
		}
	}
	if n.multiple && (n.multiToken || n.token == "") {
		s += " [" + s + " ...]"
	}
	if n.optional {
		s = "[" + s + "]"
	}
	return s
}

// checkKeyCount refuses a call whose key count (numkeys) is a literal below
// 1, or above the number of words after it (ZINTERSTORE dst 2 k): Redis
// refuses it at run time, after the script's earlier writes. A call whose
// last argument gives any number of words (unpack(t)) has its count checked
// only against 1. It reports whether the count passed: the key positions
// of a call with a wrong one are not checked, to report only the cause.
func checkKeyCount(c parse.Call, info *commandInfo, shown string, at func(parse.Pos, string, ...any)) bool {
	ok := true
	for _, ks := range info.keys {
		if !ks.keynum || ks.unknownBegin || ks.beginIndex <= 0 {
			continue
		}
		i := ks.beginIndex + ks.keynumIdx - 1 // in c.Args
		if i >= len(c.Args) || !c.Args[i].Exact {
			continue
		}
		a := c.Args[i]
		count, isInt := literalInt(a)
		if !isInt {
			continue // not a count Redis reads: checkNumeric's
		}
		after := len(c.Args) - i - 1
		expands := c.Args[len(c.Args)-1].Expands
		switch {
		case count < 1:
			at(a.Pos, "%s reads a count of keys there (numkeys), and the call passes %d: Redis takes 1 or more and refuses the call at run time, after the script's earlier writes", shown, count)
			ok = false
		case count > int64(after) && !expands:
			at(a.Pos, "%s reads a count of keys there (numkeys), and the call passes %d but gives %d %s after it: Redis refuses the call at run time, after the script's earlier writes; pass as many keys as the count says", shown, count, after, "word"+plural(after))
			ok = false
		}
	}
	return ok
}

// optionNeeds are the options Redis refuses without one of some other
// words among the options (the specifications do not say so), with the
// number of words before the options: TestOptionNeedsAgreeWithServer runs
// each.
var optionNeeds = map[string]struct {
	fixed int
	needs map[string][]string
}{
	"ZRANGE":      {3, map[string][]string{"LIMIT": {"BYSCORE", "BYLEX"}}},
	"ZRANGESTORE": {4, map[string][]string{"LIMIT": {"BYSCORE", "BYLEX"}}},
	"XADD":        {1, map[string][]string{"LIMIT": {"~"}}},
	"XTRIM":       {1, map[string][]string{"LIMIT": {"~"}}},
}

// optionConflicts are the options Redis refuses together though the
// specifications give them in separate groups: TestOptionNeedsAgreeWithServer
// runs each pair.
var optionConflicts = map[string][][2]string{
	"ZRANGE": {{"BYLEX", "WITHSCORES"}},
}

// checkOptionNeeds refuses a call that gives an option without one of the
// words it needs (ZRANGE's LIMIT without BYSCORE or BYLEX, XADD's LIMIT
// without ~), when every word among the options is a literal (one the
// checker cannot read may be the word needed), or two options Redis refuses
// together (ZRANGE's BYLEX and WITHSCORES). The options of XADD end at its
// ID "*".
func checkOptionNeeds(c parse.Call, name string, at func(parse.Pos, string, ...any)) {
	spec, ok := optionNeeds[name]
	conflicts := optionConflicts[name]
	if !ok && conflicts == nil {
		return
	}
	given := map[string]parse.Arg{}
	var order []string
	all := true
	for i := spec.fixed; i < len(c.Args); i++ {
		a := c.Args[i]
		if !a.Exact {
			all = false
			continue
		}
		w := strings.ToUpper(*a.Literal)
		if name == "XADD" && w == "*" {
			break
		}
		if _, seen := given[w]; !seen {
			given[w] = a
			order = append(order, w)
		}
	}
	for _, pair := range conflicts {
		a, okA := given[pair[0]]
		b, okB := given[pair[1]]
		if okA && okB {
			later := b
			if b.Pos.Line < a.Pos.Line || b.Pos.Line == a.Pos.Line && b.Pos.Col < a.Pos.Col {
				later = a
			}
			at(later.Pos, "%s takes %s or %s, not both: Redis refuses the call at run time (\"ERR syntax error, %s not supported in combination with %s\"), after the script's earlier writes", name, pair[0], pair[1], pair[1], pair[0])
			return
		}
	}
	if !all {
		return
	}
	for _, w := range order {
		needs, ok := spec.needs[w]
		if !ok || slices.ContainsFunc(needs, func(n string) bool { _, ok := given[n]; return ok }) {
			continue
		}
		at(given[w].Pos, "%s's option %s needs %s among the options, and the call gives none: Redis refuses the call at run time (\"ERR syntax error, ...\"), after the script's earlier writes", name, w, orList(needs))
	}
}

// checkSortCluster refuses SORT's and SORT_RO's GET, and BY with a pattern
// (a "*" in it; BY nosort sorts nothing and is fine), in a script that may
// run on Redis Cluster (not @cluster-unsafe, no flag no-cluster): they read
// keys the pattern names, in any slot, so Redis Cluster refuses them ("BY
// option of SORT denied in Cluster mode."). The words are read as Redis
// reads them, up to the first the checker cannot read.
func checkSortCluster(c parse.Call, name string, at func(parse.Pos, string, ...any)) {
	if name != "SORT" && name != "SORT_RO" {
		return
	}
	const fix = "sort by the values themselves and read the other keys in the script (passed in KEYS), or mark the script @cluster-unsafe if it never runs on Redis Cluster"
	n := len(c.Args)
	if n > 0 && c.Args[n-1].Expands {
		n--
	}
	for j := 1; j < n; j++ {
		w, ok := sentText(c.Args[j])
		if !ok {
			return
		}
		left := len(c.Args) - j - 1
		switch opt := strings.ToUpper(w); {
		case opt == "ASC" || opt == "DESC" || opt == "ALPHA":
		case opt == "LIMIT" && left >= 2:
			j += 2
		case opt == "STORE" && left >= 1 && name == "SORT":
			j++
		case opt == "BY" && left >= 1:
			j++
			if j >= n {
				return
			}
			p, ok := sentText(c.Args[j])
			if !ok {
				return
			}
			if strings.Contains(p, "*") {
				at(c.Args[j-1].Pos, "%s BY %q reads keys the pattern names, which Redis Cluster refuses (\"ERR BY option of SORT denied in Cluster mode.\"), after the script's earlier writes: %s", name, p, fix)
				return
			}
		case opt == "GET" && left >= 1:
			at(c.Args[j].Pos, "%s GET reads keys a pattern names, which Redis Cluster refuses (\"ERR GET option of SORT denied in Cluster mode.\"), after the script's earlier writes: %s", name, fix)
			return
		default:
			return
		}
	}
}

// checkDBCluster refuses, in a script that may run on Redis Cluster, a call
// Redis Cluster refuses for its one database: MOVE and SWAPDB, SELECT of a
// database other than 0, and COPY's DB option naming another one (a literal
// the checker reads; an argument may be 0).
func checkDBCluster(c parse.Call, name string, at func(parse.Pos, string, ...any)) {
	const fix = "Redis Cluster has database 0 alone; mark the script @cluster-unsafe if it never runs on Redis Cluster"
	other := func(a parse.Arg) bool {
		w, ok := sentText(a)
		return ok && w != "0"
	}
	switch name {
	case "MOVE", "SWAPDB":
		at(c.CommandPos, "%s is refused on Redis Cluster (\"ERR %s is not allowed in cluster mode\"), after the script's earlier writes: %s", name, name, fix)
	case "SELECT":
		if len(c.Args) == 1 && other(c.Args[0]) {
			at(c.Args[0].Pos, "SELECT of database %s is refused on Redis Cluster (\"ERR SELECT is not allowed in cluster mode\"), after the script's earlier writes: %s", *c.Args[0].Literal, fix)
		}
	case "COPY":
		for j := 2; j+1 < len(c.Args); j++ {
			if w, ok := sentText(c.Args[j]); ok && strings.EqualFold(w, "DB") && other(c.Args[j+1]) {
				at(c.Args[j].Pos, "COPY to database %s is refused on Redis Cluster (\"ERR Copying to another database is not allowed in cluster mode\"), after the script's earlier writes: %s", *c.Args[j+1].Literal, fix)
				return
			}
		}
	}
}
