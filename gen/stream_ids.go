package gen

import (
	"math"
	"strconv"
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// The stream ID rules below are those of Redis 7.0's t_stream.c, each
// function named where it is followed. An ID is read by
// streamGenericParseIDOrReply: at most 127 bytes; "-" (0-0) and "+"
// (2^64-1-2^64-1) unless strict; else ms or ms-seq split at the first "-",
// each part read by string2ull (util.c). string2ull takes what string2ll
// takes if it is 0 or more (a negative one is refused, not read again), else
// what strtoull(s, 10) reads whole: so leading zeros ("007"), a "+" ("+5"),
// leading spaces (" 5") and, after the "-", "-0" are taken, while a
// trailing space, a negative part ("1--1") or one past 2^64-1 are not.
// An ID without its sequence number takes 0, or 2^64-1 for the end of a
// range. streamParseStrictIDOrReply refuses "-" and "+", and only XADD's ID
// may be ms-* (streamID's strict reading, checkStreamArgs').

// idRefused is Redis's reply to a word that is no stream ID.
const idRefused = "ERR Invalid stream ID specified as stream command argument"

// Kinds of stream ID a command reads at one place.
const (
	idStrict   = iota // streamParseStrictIDOrReply: ms or ms-seq
	idLoose           // streamParseIDOrReply: also - and +
	idInterval        // streamParseIntervalIDOrReply: also ( before a strict ID
)

// idForms is what a message suggests for each kind.
var idForms = [...]string{
	idStrict:   "ms-seq (1700000000000-0) or ms",
	idLoose:    "-, +, ms-seq (1700000000000-0) or ms",
	idInterval: "-, +, ms-seq (1700000000000-0) or ms, or ( before ms-seq or ms for an exclusive bound",
}

// readStreamID reads s as a stream ID of the given kind (no ms-*), an ID
// without its sequence number taking missingSeq; excl reports a "(" before
// it (streamParseIntervalIDOrReply: a word of two bytes or more starting with
// "(", the rest read strictly).
func readStreamID(s string, kind int, missingSeq uint64) (ms, seq uint64, excl, ok bool) {
	if kind == idInterval && len(s) > 1 && s[0] == '(' {
		excl, s, kind = true, s[1:], idStrict
	}
	if _, seqText, dash := strings.Cut(s, "-"); dash && seqText == "*" {
		return 0, 0, excl, false // ms-* is XADD's alone
	}
	strict := kind == idStrict
	if ms, seq, ok = streamID(s, strict); !ok {
		return 0, 0, excl, false
	}
	if s != "-" && s != "+" && !strings.Contains(s, "-") {
		seq = missingSeq
	}
	return ms, seq, excl, true
}

// streamCall walks the words of one call of a stream command.
type streamCall struct {
	c    parse.Call
	name string // as shown: XGROUP CREATE
	at   func(parse.Pos, string, ...any)
	n    int  // the arguments at known positions (before an unpack(...))
	open bool // the last argument gives any number of words
	when string
}

// word is the text Redis gets at argument i, ok false when the checker
// cannot tell (no literal, or past the known positions).
func (s *streamCall) word(i int) (string, bool) {
	if i < 0 || i >= s.n {
		return "", false
	}
	return sentText(s.c.Args[i])
}

// more is the number of words after argument i (any number after an
// unpack(...)).
func (s *streamCall) more(i int) int {
	if s.open {
		return math.MaxInt
	}
	return s.n - 1 - i
}

// refuse reports a refusal at argument i: what Redis reads there, then its
// error reply and fix ("" for none).
func (s *streamCall) refuse(i int, reply, fix, format string, args ...any) bool {
	args = append(args, reply, s.when)
	if fix != "" {
		fix = "; " + fix
	}
	s.at(s.c.Args[i].Pos, format+": Redis refuses the call at run time (%q)%s, after the script's earlier writes"+fix, args...)
	return false
}

// id checks a stream ID of the given kind at argument i (what names it in
// the message); extra lists other words Redis takes there ("$"). It returns
// the ID read and whether it is known, and false in ok when it refused.
func (s *streamCall) id(i, kind int, what string, missingSeq uint64, extra string) (ms, seq uint64, known, ok bool) {
	forms := idForms[kind]
	if extra != "" {
		forms = extra + ", " + forms
	}
	w, lit := s.word(i)
	if !lit {
		if i < s.n && notInteger(s.c.Args[i]) && s.c.Args[i].Number {
			// Redis gets a Lua number as %.17g writes it: one with a
			// fraction or an exponent (from 1e17 on) is no ID.
			f, _ := luaNumber(*s.c.Args[i].Literal)
			return 0, 0, false, s.refuse(i, idRefused, "write the ID as a string ('1700000000000-0')", "%s reads a stream ID there (%s), and the Lua number %s is sent as %q, which is none", s.name, what, *s.c.Args[i].Literal, strconv.FormatFloat(f, 'g', 17, 64))
		}
		return 0, 0, false, true
	}
	ms, seq, excl, valid := readStreamID(w, kind, missingSeq)
	if !valid {
		s.refuse(i, idRefused, "write "+forms, "%s reads a stream ID there (%s), and %q is none", s.name, what, w)
		return 0, 0, false, false
	}
	if excl && what == "start" && ms == math.MaxUint64 && seq == math.MaxUint64 {
		s.refuse(i, "ERR invalid start ID for the interval", "", "%s's exclusive start %q leaves no ID after it", s.name, w)
		return 0, 0, false, false
	}
	if excl && what == "end" && ms == 0 && seq == 0 {
		s.refuse(i, "ERR invalid end ID for the interval", "", "%s's exclusive end %q leaves no ID before it", s.name, w)
		return 0, 0, false, false
	}
	return ms, seq, true, true
}

// integer checks an integer Redis reads at argument i with
// getLongLongFromObjectOrReply (string2ll), reply its error for a word that
// is none. It returns the value and whether it is known, and false in ok
// when it refused.
func (s *streamCall) integer(i int, what, reply string) (v int64, known, ok bool) {
	if i >= s.n {
		return 0, false, true
	}
	a := s.c.Args[i]
	if p := luaIntegerProblem(a); p != "" {
		s.at(a.Pos, "%s reads an integer there (%s), and %s", s.name, what, p)
		return 0, false, false
	}
	if notInteger(a) {
		return 0, false, s.refuse(i, reply, "", "%s reads an integer there (%s), and %q is none", s.name, what, *a.Literal)
	}
	v, known = literalInt(a)
	return v, known, true
}

// literalInt is the integer Redis reads at argument i, known false when the
// checker cannot tell or Redis reads none.
func (s *streamCall) literalInt(i int) (int64, bool) {
	if i >= s.n {
		return 0, false
	}
	return literalInt(s.c.Args[i])
}

// checkStreamIDs checks the literal stream IDs, and the counts and times
// beside them, of the stream commands but XADD and XTRIM (checkStreamArgs'),
// as Redis 7.0 reads them (t_stream.c: xrangeGenericCommand, xreadCommand,
// xdelCommand, xackCommand, xclaimCommand, xautoclaimCommand, xsetidCommand,
// xgroupCommand, xpendingCommand): a word that is no ID where Redis reads
// one, "$" or ">" where the command takes none, an exclusive bound past the
// last ID, and what Redis refuses among the numbers and options it reads
// with them. A word the checker cannot read is taken; where it may shift
// the words after it (an option name), the check ends there. Redis refuses
// each at run time, after the script's earlier writes. It reports whether
// it refused nothing.
func checkStreamIDs(c parse.Call, name string, at func(parse.Pos, string, ...any)) bool {
	s := &streamCall{c: c, name: strings.ReplaceAll(name, "|", " "), at: at, n: len(c.Args)}
	if s.n > 0 && c.Args[s.n-1].Expands {
		s.n--
		s.open = true
	}
	switch name {
	case "XRANGE":
		return s.interval(1, 2)
	case "XREVRANGE":
		return s.interval(2, 1)
	case "XDEL":
		// xdelCommand answers 0 for a missing key before it reads the IDs.
		s.when = " whenever the stream exists"
		return s.ids(1)
	case "XACK":
		s.when = " whenever the stream and the group exist"
		return s.ids(2)
	case "XCLAIM":
		s.when = " whenever the stream and the group exist"
		return s.xclaim()
	case "XAUTOCLAIM":
		return s.xautoclaim()
	case "XSETID":
		return s.xsetid()
	case "XGROUP|CREATE", "XGROUP|SETID":
		return s.xgroup(name == "XGROUP|CREATE")
	case "XPENDING":
		return s.xpending()
	case "XREAD", "XREADGROUP":
		return s.xread(name == "XREADGROUP")
	}
	return true
}

// interval checks a range's start and end as xrangeGenericCommand reads
// them, the start first.
func (s *streamCall) interval(start, end int) bool {
	if _, _, _, ok := s.id(start, idInterval, "start", 0, ""); !ok {
		return false
	}
	_, _, _, ok := s.id(end, idInterval, "end", math.MaxUint64, "")
	return ok
}

// ids checks that every word from argument i on is a strict ID.
func (s *streamCall) ids(i int) bool {
	for ; i < s.n; i++ {
		if _, _, _, ok := s.id(i, idStrict, "ID", 0, ""); !ok {
			return false
		}
	}
	return true
}

// xclaim: XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms]
// [TIME ms] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]. The IDs end at
// the first word that is no strict ID; every word from there is an option.
func (s *streamCall) xclaim() bool {
	if _, _, ok := s.integer(3, "min-idle-time", "ERR Invalid min-idle-time argument for XCLAIM"); !ok {
		return false
	}
	j := 4
	for ; j < s.n; j++ {
		w, ok := s.word(j)
		if !ok {
			return true // an ID or an option
		}
		if _, _, _, valid := readStreamID(w, idStrict, 0); !valid {
			break
		}
	}
	for ; j < s.n; j++ {
		w, ok := s.word(j)
		if !ok {
			return true
		}
		up := strings.ToUpper(w)
		switch {
		case up == "FORCE" || up == "JUSTID":
		case (up == "IDLE" || up == "TIME" || up == "RETRYCOUNT") && s.more(j) > 0:
			j++
			if _, _, ok := s.integer(j, strings.ToLower(up), "ERR Invalid "+up+" option argument for XCLAIM"); !ok {
				return false
			}
		case up == "LASTID" && s.more(j) > 0:
			j++
			if _, _, _, ok := s.id(j, idStrict, "LASTID", 0, ""); !ok {
				return false
			}
		default:
			return s.refuse(j, "ERR Unrecognized XCLAIM option '"+w+"'", "write the IDs first, then the options",
				"XCLAIM reads an ID (%s) or an option (FORCE, IDLE, JUSTID, LASTID, RETRYCOUNT, TIME) there, and %q is neither", idForms[idStrict], w)
		}
	}
	return true
}

// xautoclaim: XAUTOCLAIM key group consumer min-idle-time start [COUNT
// count] [JUSTID]; Redis reads them before it looks for the group.
func (s *streamCall) xautoclaim() bool {
	if _, _, ok := s.integer(3, "min-idle-time", "ERR Invalid min-idle-time argument for XAUTOCLAIM"); !ok {
		return false
	}
	if _, _, _, ok := s.id(4, idInterval, "start", 0, ""); !ok {
		return false
	}
	for j := 5; j < s.n; j++ {
		w, ok := s.word(j)
		if !ok {
			return true
		}
		switch up := strings.ToUpper(w); {
		case up == "COUNT" && s.more(j) > 0:
			j++
			// getRangeLongFromObjectOrReply(1, LONG_MAX / 16); a word that
			// is no integer is checkNumeric's.
			const most = math.MaxInt64 / 16
			if v, known := s.literalInt(j); known && (v < 1 || v > most) {
				return s.refuse(j, "ERR COUNT must be > 0", "", "XAUTOCLAIM reads a COUNT of 1 to %d there, and the call passes %d", int64(most), v)
			}
		case up == "JUSTID":
		default:
			return true // the option checks'
		}
	}
	return true
}

// xsetid: XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID
// max-deleted-id].
func (s *streamCall) xsetid() bool {
	lastMs, lastSeq, lastKnown, ok := s.id(1, idStrict, "last-id", 0, "")
	if !ok {
		return false
	}
	for j := 2; j < s.n; j++ {
		w, ok := s.word(j)
		if !ok {
			return true
		}
		switch up := strings.ToUpper(w); {
		case up == "ENTRIESADDED" && s.more(j) > 0:
			j++
			if v, known := s.literalInt(j); known && v < 0 {
				return s.refuse(j, "ERR entries_added must be positive", "", "XSETID reads a count of 0 or more there (entries-added), and the call passes %d", v)
			}
		case up == "MAXDELETEDID" && s.more(j) > 0:
			j++
			ms, seq, known, ok := s.id(j, idStrict, "max-deleted-id", 0, "")
			if !ok {
				return false
			}
			if known && lastKnown && (ms > lastMs || ms == lastMs && seq > lastSeq) {
				w, _ := s.word(j)
				last, _ := s.word(1)
				return s.refuse(j, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id", "", "XSETID's max-deleted-id %q is past its last-id %q", w, last)
			}
		default:
			return true
		}
	}
	return true
}

// xgroup: XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD
// entries-read] and XGROUP SETID key group id|$ [ENTRIESREAD entries-read];
// Redis reads the options first. CREATE reads a strict ID, SETID one that
// may be - or +.
func (s *streamCall) xgroup(create bool) bool {
	for j := 4; j < s.n; j++ {
		w, ok := s.word(j)
		if !ok {
			break
		}
		up := strings.ToUpper(w)
		if create && up == "MKSTREAM" {
			continue
		}
		if up != "ENTRIESREAD" || s.more(j) == 0 {
			break // the option checks'
		}
		j++
		if v, known := s.literalInt(j); known && v < -1 {
			return s.refuse(j, "ERR value for ENTRIESREAD must be positive or -1", "", "%s reads a count of 0 or more, or -1 (unknown), there (entries-read), and the call passes %d", s.name, v)
		}
	}
	if w, ok := s.word(3); ok && w == "$" {
		return true
	}
	kind := idLoose
	if create {
		kind = idStrict
	}
	_, _, _, ok := s.id(3, kind, "id", 0, "$ for the stream's last entry")
	return ok
}

// xpending: XPENDING key group [[IDLE min-idle-time] start end count
// [consumer]]; Redis reads the count, then the start, then the end.
func (s *streamCall) xpending() bool {
	if s.n <= 2 {
		return true
	}
	start := 2
	w, ok := s.word(2)
	if !ok {
		return true // IDLE or the start
	}
	if strings.EqualFold(w, "IDLE") {
		start = 4 // IDLE's integer is checkNumeric's
	}
	if _, _, ok := s.integer(start+2, "count", "ERR value is not an integer or out of range"); !ok {
		return false
	}
	return s.interval(start, start+1)
}

// xread: XREAD [COUNT count] [BLOCK ms] STREAMS key [key ...] id [id ...]
// and XREADGROUP GROUP group consumer [COUNT count] [BLOCK ms] [NOACK]
// STREAMS key [key ...] id [id ...], read as xreadCommand does.
func (s *streamCall) xread(group bool) bool {
	for i := 0; i < s.n; i++ {
		w, ok := s.word(i)
		if !ok {
			return true // which option it is is unknown
		}
		switch up := strings.ToUpper(w); {
		case up == "BLOCK" && s.more(i) > 0:
			// xreadCommand refuses BLOCK from a script (CLIENT_LUA) before
			// it reads the time.
			return s.refuse(i, "ERR "+s.c.Command+" command is not allowed with BLOCK option from scripts", "leave BLOCK out: a script cannot wait, and reads what is there",
				"%s's BLOCK is refused in scripts", s.name)
		case up == "COUNT" && s.more(i) > 0:
			i++
			// A negative count reads as 0, no limit.
			if _, _, ok := s.integer(i, "count", "ERR value is not an integer or out of range"); !ok {
				return false
			}
		case up == "GROUP" && s.more(i) >= 2:
			i += 2
		case up == "NOACK":
		case up == "STREAMS" && s.more(i) > 0:
			return s.streams(i+1, group)
		default:
			return true // the option checks'
		}
	}
	return true
}

// streams checks the keys and IDs after STREAMS, from argument i: as many
// IDs as keys, each "$" (XREAD), ">" (XREADGROUP) or a strict ID.
func (s *streamCall) streams(i int, group bool) bool {
	if s.open {
		return true // where the IDs start is unknown
	}
	words := s.n - i
	if words%2 != 0 {
		return s.refuse(i, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.", "give each key its ID",
			"%s reads as many IDs as keys after STREAMS, and the call gives %d words there", s.name, words)
	}
	for j := i + words/2; j < s.n; j++ {
		w, ok := s.word(j)
		if !ok {
			continue
		}
		switch {
		case w == "$" && group:
			return s.refuse(j, "ERR The $ ID is meaningless in the context of XREADGROUP: ...", "write > for entries never delivered to the group, or an ID to read the consumer's pending entries",
				"XREADGROUP takes no $ ID")
		case w == ">" && !group:
			return s.refuse(j, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.", "write $ for entries added from now on, or an ID",
				"XREAD takes no > ID")
		case w == "$" || w == ">":
		default:
			extra := "$"
			if group {
				extra = ">"
			}
			if _, _, _, ok := s.id(j, idStrict, "ID", 0, extra); !ok {
				return false
			}
		}
	}
	return true
}
