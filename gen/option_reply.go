package gen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// optionReply says how a command's reply shape depends on the words of the
// call, where its reply schema only lists the alternatives (oneOf) and says
// which option gives which in prose: a test runs every entry on the server.
type optionReply struct {
	// count is the position (1-based, after the command name) of the count
	// argument; 0 for none. Without it the reply is single, with it multi.
	count         int
	single, multi replyKind
	// pairs is the option that makes the reply list pairs (member, score;
	// field, value), "" for none; always is set when it always does.
	pairs  string
	always bool
	// fixed is how many words (after the name) come before the options.
	fixed int
}

// optionReplies are the commands whose reply is one value or a list by
// their count (LPOP key vs LPOP key 5: a string or nil, or an array), or a
// list of values or of pairs by an option (ZRANGE ... WITHSCORES).
var optionReplies = map[string]optionReply{
	"LPOP":             {count: 2, single: replyStr | replyNil, multi: replyArr | replyNil},
	"RPOP":             {count: 2, single: replyStr | replyNil, multi: replyArr | replyNil},
	"SPOP":             {count: 2, single: replyStr | replyNil, multi: replyArr},
	"SRANDMEMBER":      {count: 2, single: replyStr | replyNil, multi: replyArr},
	"HRANDFIELD":       {count: 2, single: replyStr | replyNil, multi: replyArr, pairs: "WITHVALUES", fixed: 2},
	"ZRANDMEMBER":      {count: 2, single: replyStr | replyNil, multi: replyArr, pairs: "WITHSCORES", fixed: 2},
	"ZPOPMIN":          {count: 2, single: replyArr, multi: replyArr, always: true},
	"ZPOPMAX":          {count: 2, single: replyArr, multi: replyArr, always: true},
	"ZRANGE":           {pairs: "WITHSCORES", fixed: 3},
	"ZRANGEBYSCORE":    {pairs: "WITHSCORES", fixed: 3},
	"ZREVRANGE":        {pairs: "WITHSCORES", fixed: 3},
	"ZREVRANGEBYSCORE": {pairs: "WITHSCORES", fixed: 3},
	"ZUNION":           {pairs: "WITHSCORES", fixed: 1},
	"ZINTER":           {pairs: "WITHSCORES", fixed: 1},
	"ZDIFF":            {pairs: "WITHSCORES", fixed: 1},
}

// callShape is what a call of an optionReplies command gives, as far as the
// checker can read its words.
type callShape struct {
	known      bool      // the words say which alternative
	kind       replyKind // its reply shapes
	note       string    // "with a count", "without a count", for messages
	pairs      bool      // the list holds pairs
	pairsKnown bool      // whether it does is certain
	max        int       // the most values the list holds, 0 when unknown
	count      string    // the count's literal, "" when none or not a literal
}

// shapeOfCall reads the words of call c of command name (upper case).
func shapeOfCall(name string, c *parse.Call) callShape {
	o, ok := optionReplies[name]
	if !ok || c == nil {
		return callShape{}
	}
	n := len(c.Args)
	expands := n > 0 && c.Args[n-1].Expands
	var s callShape
	s.pairs = o.always
	s.pairsKnown = o.always || !expands
	if !o.always && o.pairs != "" {
		for i, a := range c.Args {
			if i < o.fixed || a.Value.Source == parse.SourceKey {
				continue // the key and the words before the options
			}
			if !a.Exact {
				s.pairsKnown = false // a word the checker cannot read may be the option
				continue
			}
			if strings.EqualFold(*a.Literal, o.pairs) {
				s.pairs, s.pairsKnown = true, true
				break
			}
		}
	}
	if o.count == 0 {
		return s
	}
	switch {
	case n >= o.count:
		s.known, s.kind, s.note = true, o.multi, " with a count"
		if a := c.Args[o.count-1]; a.Exact {
			if v, ok := literalInt(a); ok {
				s.count = *a.Literal
				s.max = int(max(v, -v))
			}
		}
		if s.max > 0 && s.pairs {
			s.max *= 2
		}
		if o.count == n && expands {
			s.known, s.max, s.count = false, 0, ""
		}
	case !expands:
		s.known, s.kind, s.note = true, o.single, " without a count"
		if o.always {
			s.max = 2
		}
	}
	return s
}

// checkOptionReply checks the return of a call whose reply shape its words
// choose against t, beyond the shapes replyOf gives: a list of values read
// as pairs (map[string]string), and a record too short for the values the
// call's count lets come. about starts the message as checkReturn does.
func checkOptionReply(ret parse.Return, call *parse.Call, t Type, about func(string) string, at func(parse.Pos, string, ...any)) bool {
	info, ok := lookupCommand(ret.Command)
	if !ok {
		return false
	}
	o, ok := optionReplies[info.name]
	if !ok {
		return false
	}
	s := shapeOfCall(info.name, call)
	if s.known && s.kind&replyArr == 0 {
		return false // a single value: replyOf's shapes say it all
	}
	if t.Kind == StringMap && !s.pairs && s.pairsKnown && o.pairs != "" {
		fix := "add " + o.pairs + " to the call"
		if s.known && s.note == " without a count" {
			fix = "pass a count and " + o.pairs
		}
		at(ret.Pos, "%s, but @return %s reads field-value pairs: the callers get a *DecodeError for an odd number of values, and pair the values among themselves otherwise; %s, or declare @return []string",
			about(fmt.Sprintf("%s without %s replies a list of values, not pairs", info.name, o.pairs)), t.String(), fix)
		return true
	}
	if t.Kind == Record && s.max > len(t.Fields) {
		what := fmt.Sprintf("%s replies up to %d values", info.name, s.max)
		switch {
		case s.count != "" && s.pairs:
			what = fmt.Sprintf("%s with the count %s replies up to %d values (%s pairs)", info.name, s.count, s.max, s.count)
		case s.count != "":
			what = fmt.Sprintf("%s with the count %s replies up to %d values", info.name, s.count, s.max)
		case s.pairs:
			what = fmt.Sprintf("%s replies up to %d values (a pair)", info.name, s.max)
		}
		at(ret.Pos, "%s, but @return %s has %d fields: the callers get a *DecodeError whenever more values come; lower the count, or return a list (@return []string)",
			about(what), t.String(), len(t.Fields))
		return true
	}
	return false
}

// wordReply says how an option of a command's call chooses the shape of its
// reply, which its reply schema lists as alternatives (oneOf) and says only
// in prose which option gives which: ZADD with INCR replies the score (a
// string, nil when NX, XX, GT or LT stops it), without it a count; LPOS
// with COUNT a list, without it an index or nil; SORT and GEORADIUS with
// STORE (STOREDIST) the count stored, without it a list; LCS with LEN a
// length, with IDX a list, without either the string. A test runs each with
// and without its options on the server.
type wordReply struct {
	options map[string]replyKind // an option given → the reply's shapes
	without replyKind            // none of them given
}

var wordReplies = map[string]wordReply{
	"ZADD":              {map[string]replyKind{"INCR": replyStr}, replyInt},
	"LPOS":              {map[string]replyKind{"COUNT": replyArr}, replyInt | replyNil},
	"SORT":              {map[string]replyKind{"STORE": replyInt}, replyArr},
	"GEORADIUS":         {map[string]replyKind{"STORE": replyInt, "STOREDIST": replyInt}, replyArr},
	"GEORADIUSBYMEMBER": {map[string]replyKind{"STORE": replyInt, "STOREDIST": replyInt}, replyArr},
	"LCS":               {map[string]replyKind{"LEN": replyInt, "IDX": replyArr}, replyStr},
}

// zaddAborts are ZADD's options that make INCR reply nil when they stop it.
var zaddAborts = []string{"NX", "XX", "GT", "LT"}

// wordShape is the reply shapes of call c of a wordReplies command name
// (upper case), with a note for messages (" with INCR"); ok is false when
// a word the checker cannot read, where an option may be, leaves it open.
func wordShape(name string, c *parse.Call) (kind replyKind, note string, ok bool) {
	o, known := wordReplies[name]
	if !known || c == nil {
		return 0, "", false
	}
	// The options given, read as Redis reads them; open is set when a
	// word the checker cannot read may be an option.
	given := map[string]bool{}
	open := false
	word := func(i int) (string, bool) {
		a := c.Args[i]
		if !a.Exact || a.Expands {
			return "", false
		}
		return strings.ToUpper(*a.Literal), true
	}
	switch name {
	case "ZADD":
		// Options come first, up to the first score.
		for i := 1; i < len(c.Args); i++ {
			w, ok := word(i)
			if !ok {
				open = true
				break
			}
			if w != "INCR" && w != "CH" && !slices.Contains(zaddAborts, w) {
				break
			}
			given[w] = true
		}
	case "SORT":
		// As sortGetKeys: LIMIT takes two words, BY, GET and STORE one.
		for i := 1; i < len(c.Args); i++ {
			w, ok := word(i)
			if !ok {
				open = true
				break
			}
			given[w] = true
			switch w {
			case "LIMIT":
				i += 2
			case "BY", "GET", "STORE":
				i++
			}
		}
	default:
		sig, ok := optionArgs[name]
		if !ok {
			return 0, "", false
		}
		for i := sig.fixed; i < len(c.Args); {
			w, ok := word(i)
			if !ok {
				open = true
				break
			}
			t, ok := sig.tokens[w]
			if !ok {
				return 0, "", false // no option: the call is refused anyway
			}
			given[w] = true
			i += 1 + t.values
		}
	}
	for _, opt := range slices.Sorted(maps.Keys(o.options)) {
		if given[opt] {
			kind = o.options[opt]
			if name == "ZADD" && (open || slices.ContainsFunc(zaddAborts, func(a string) bool { return given[a] })) {
				kind |= replyNil
			}
			return kind, " with " + opt, true
		}
	}
	if open {
		return 0, "", false
	}
	return o.without, " without " + orList(slices.Sorted(maps.Keys(o.options))), true
}
