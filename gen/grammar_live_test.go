package gen

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// grammarRefuses runs checkGrammar (then checkStreamArgs and checkBitop) on a call of literal words (the command
// name first) and returns its message, "" when it takes the call.
func grammarRefuses(words []string) string {
	var msg string
	at := func(_ parse.Pos, format string, args ...any) { msg = format }
	name := strings.ToUpper(words[0])
	if checkGrammar(literalCall(words), name, at) && checkStreamArgs(literalCall(words), name, at) {
		checkBitop(literalCall(words), name, at)
	}
	return msg
}

// literalCall is a call of literal words, the command name first.
func literalCall(words []string) parse.Call {
	c := parse.Call{Command: words[0]}
	for _, w := range words[1:] {
		c.Args = append(c.Args, parse.Arg{Literal: &w, Exact: true, Value: parse.Value{Source: parse.SourceLiteral, Text: w}})
	}
	return c
}

// TestKeyCountAgreesWithServer checks checkKeyCount against the test
// server: for every command with a key count a script may run, a call
// with a count of 1 and one key is taken by both; with a count of 0, -1, or
// one more than the words after it, or written as no integer Redis reads
// ("01", "+1", "1.0"), refused by both.
func TestKeyCountAgreesWithServer(t *testing.T) {
	run := commandRunner(t, nil)
	plain := map[string][]string{
		"BLMPOP": {"BLMPOP", "0", "1", "k", "LEFT"}, "BZMPOP": {"BZMPOP", "0", "1", "k", "MIN"},
		"LMPOP": {"LMPOP", "1", "k", "LEFT"}, "ZMPOP": {"ZMPOP", "1", "k", "MIN"},
		"SINTERCARD": {"SINTERCARD", "1", "k"}, "ZINTERCARD": {"ZINTERCARD", "1", "k"},
		"ZDIFF": {"ZDIFF", "1", "k"}, "ZINTER": {"ZINTER", "1", "k"}, "ZUNION": {"ZUNION", "1", "k"},
		"ZDIFFSTORE": {"ZDIFFSTORE", "d", "1", "k"}, "ZINTERSTORE": {"ZINTERSTORE", "d", "1", "k"}, "ZUNIONSTORE": {"ZUNIONSTORE", "d", "1", "k"},
	}
	refuses := func(words []string) string {
		info := commandIndex[words[0]]
		var msg string
		at := func(_ parse.Pos, format string, args ...any) { msg = format }
		checkKeyCount(literalCall(words), info, words[0], at)
		checkNumeric(literalCall(words), words[0], nil, at, at)
		return msg
	}
	for _, info := range commandTable {
		if info.flags&flagNoscript != 0 || noscriptOn70[info.name] || newerThan70(info.since) || !slices.ContainsFunc(info.keys, func(k keySpec) bool { return k.keynum }) {
			continue
		}
		words, ok := plain[info.name]
		if !ok {
			t.Errorf("%s has a key count and scripts may run it: add a plain call of it here", info.name)
			continue
		}
		if msg := refuses(words); msg != "" {
			t.Errorf("%v: the checker refuses it", words)
		}
		if err := run(words); err != nil {
			t.Errorf("%v: Redis refuses it: %v", words, err)
		}
		i := slices.Index(words, "1")
		for _, count := range []string{"0", "-1", strconv.Itoa(len(words) - i), "01", "+1", "1.0"} {
			bad := slices.Clone(words)
			bad[i] = count
			if refuses(bad) == "" {
				t.Errorf("%v: the checker takes it", bad)
			}
			if run(bad) == nil {
				t.Errorf("%v: Redis takes it", bad)
			}
		}
	}
}

// TestGrammarAgreesWithServer checks checkGrammar against the test server
// (Redis 7.0): every call it refuses Redis must refuse, over every sequence
// of a few words from each command's keywords and plain values; the calls of
// TestCheckRules' cases must be refused by both, and those of
// TestCheckAccepts' taken by both.
func TestGrammarAgreesWithServer(t *testing.T) {
	run := commandRunner(t, nil)
	type alphabet struct {
		head  []string
		words []string
		max   int
		tail  []string
	}
	alphabets := []alphabet{
		{[]string{"SORT", "k"}, []string{"BY", "LIMIT", "GET", "ASC", "ALPHA", "STORE", "1", "01", "x"}, 3, nil},
		{[]string{"SORT_RO", "k"}, []string{"BY", "LIMIT", "GET", "DESC", "STORE", "1", "x"}, 3, nil},
		{[]string{"XADD", "k"}, []string{"NOMKSTREAM", "MAXLEN", "~", "LIMIT", "*", "1", "f"}, 4, nil},
		{[]string{"XADD", "k"}, []string{"MINID", "MAXLEN", "LIMIT", "~", "0-0", "0", "abc", "-1", "01", "*"}, 3, []string{"f", "v"}},
		{[]string{"XTRIM", "k"}, []string{"MINID", "MAXLEN", "LIMIT", "~", "0-0", "1-*", "abc", "-1", "01", "+"}, 3, nil},
		{[]string{"XTRIM", "k"}, []string{"MINID", "MAXLEN", "LIMIT", "~", "1", "FOO"}, 4, nil},
		{[]string{"XADD", "k"}, []string{"MINID", "maxlen", "=", "1", "*"}, 4, []string{"f", "v"}},
		{[]string{"BITOP"}, []string{"AND", "NOT", "NAND", "d", "k"}, 4, nil},
		{[]string{"BITFIELD", "k"}, []string{"GET", "SET", "INCRBY", "OVERFLOW", "SAT", "u8", "i64", "u64", "x8", "0", "#1", "-1"}, 3, nil},
		{[]string{"BITFIELD", "k", "OVERFLOW", "FAIL"}, []string{"GET", "SET", "INCRBY", "OVERFLOW", "WRAP", "i8", "U8", "0", "01"}, 3, nil},
		{[]string{"BITFIELD_RO", "k"}, []string{"GET", "SET", "u8", "u63", "i65", "x8", "0", "#1", "-1"}, 3, nil},
		{[]string{"BITFIELD_RO", "k", "GET"}, []string{"GET", "u8", "u64", "#1", "1.5"}, 4, nil},
		{[]string{"LMPOP"}, []string{"1", "2", "k", "LEFT", "MIN", "COUNT"}, 4, nil},
		{[]string{"LMPOP", "1", "k"}, []string{"LEFT", "RIGHT", "COUNT", "1", "0", "x"}, 3, nil},
		{[]string{"BLMPOP", "0"}, []string{"1", "2", "k", "RIGHT", "COUNT"}, 4, nil},
		{[]string{"ZMPOP"}, []string{"1", "2", "k", "MAX", "LEFT", "COUNT"}, 4, nil},
		{[]string{"BZMPOP", "0", "1", "k"}, []string{"MIN", "MAX", "COUNT", "1", "x"}, 3, nil},
		{[]string{"ZUNIONSTORE", "d"}, []string{"1", "2", "k", "WEIGHTS", "AGGREGATE", "SUM", "1.5"}, 4, nil},
		{[]string{"ZINTERSTORE", "d", "2", "k", "j"}, []string{"WEIGHTS", "AGGREGATE", "MIN", "AVG", "WITHSCORES", "1", "x"}, 3, nil},
		{[]string{"ZUNION"}, []string{"1", "2", "k", "WEIGHTS", "AGGREGATE", "WITHSCORES"}, 4, nil},
		{[]string{"ZINTER", "1", "k"}, []string{"WEIGHTS", "AGGREGATE", "MAX", "WITHSCORES", "1", "x"}, 3, nil},
		{[]string{"ZDIFF"}, []string{"1", "2", "k", "WITHSCORES", "WEIGHTS", "AGGREGATE"}, 4, nil},
		{[]string{"ZDIFFSTORE", "d"}, []string{"1", "2", "k", "WITHSCORES", "WEIGHTS"}, 3, nil},
	}
	for _, name := range slices.Sorted(maps.Keys(grammarArgs)) {
		if !slices.ContainsFunc(alphabets, func(a alphabet) bool { return a.head[0] == name }) {
			t.Errorf("%s is in grammarArgs but not run here: add its words", name)
		}
	}
	refused, calls, missed := 0, 0, 0
	for _, a := range alphabets {
		var seqs [][]string
		seqs = append(seqs, nil)
		for l := 1; l <= a.max; l++ {
			var next [][]string
			for _, s := range seqs {
				if len(s) == l-1 {
					for _, w := range a.words {
						next = append(next, append(slices.Clone(s), w))
					}
				}
			}
			seqs = append(seqs, next...)
		}
		for _, s := range seqs {
			words := slices.Concat(a.head, s, a.tail)
			info := commandIndex[words[0]]
			if !arityOK(info.arity, len(words), false) {
				continue
			}
			calls++
			checker := grammarRefuses(words)
			err := run(words)
			switch {
			case checker != "" && err == nil:
				t.Errorf("%v: the checker refuses it, Redis takes it", words)
			case checker != "":
				refused++
			case err != nil:
				missed++
			}
		}
	}
	t.Logf("%d calls: the checker and Redis refuse %d; Redis alone %d (what the checker cannot tell from the syntax: stream IDs, values out of range)", calls, refused, missed)
	if refused == 0 {
		t.Error("the checker refused none of the calls")
	}

	for _, words := range [][]string{
		{"XADD", "k", "*", "f", "v", "g"},
		{"XADD", "k", "MAXLEN", "5", "f", "v"},
		{"XADD", "k", "MAXLEN", "*", "f", "v"},
		{"SORT", "k", "LIMIT", "0"},
		{"SORT", "k", "BY", "w_*", "GET"},
		{"SORT", "k", "ALPHA", "STORE"},
		{"SORT", "k", "LIMIT", "x", "10"},
		{"SORT", "k", "LIMIT", "0", "1.0"},
		{"SORT", "k", "LIMIT", "+0", "1"},
		{"SORT", "k", "REVERSE"},
		{"SORT_RO", "k", "STORE", "d"},
		{"XADD", "k", "LIMIT", "x", "*", "f", "v"},
		{"XADD", "k", "foo", "f", "v"},
		{"XADD", "k", "0-0", "f", "v"},
		{"XADD", "k", "0", "f", "v"},
		{"XADD", "k", "1-x", "f", "v"},
		{"XADD", "k", "MINID", "abc", "*", "f", "v"},
		{"XADD", "k", "MINID", "~", "1-*", "*", "f", "v"},
		{"XADD", "k", "MAXLEN", "=", "1.5", "*", "f", "v"},
		{"XADD", "k", "MAXLEN", "01", "*", "f", "v"},
		{"XADD", "k", "MAXLEN", "-1", "*", "f", "v"},
		{"XADD", "k", "MAXLEN", "~", "5", "LIMIT", "-1", "*", "f", "v"},
		{"BITOP", "NAND", "d", "k"},
		{"BITOP", "NOT", "d", "k", "j"},
		{"BITFIELD", "k", "GET", "u8"},
		{"BITFIELD", "k", "GET", "x8", "0"},
		{"BITFIELD", "k", "SET", "u64", "0", "1"},
		{"BITFIELD", "k", "OVERFLOW", "NONE"},
		{"BITFIELD_RO", "k", "GET", "i8", "-1"},
		{"LMPOP", "1", "k", "UP"},
		{"LMPOP", "1", "k", "LEFT", "COUNT"},
		{"BZMPOP", "0", "1", "k", "LEFT"},
		{"ZMPOP", "2", "k", "j", "MIN", "COUNT"},
		{"LMPOP", "1", "k", "LEFT", "COUNT", "1", "COUNT", "2"},
		{"BLMPOP", "0", "1", "k", "LEFT", "COUNT", "1", "count", "1"},
		{"ZMPOP", "1", "k", "MIN", "COUNT", "2", "COUNT", "1"},
		{"BZMPOP", "0", "1", "k", "MAX", "COUNT", "1", "COUNT", "1"},
		{"ZUNIONSTORE", "d", "2", "k", "j", "WEIGHTS", "1"},
		{"ZUNIONSTORE", "d", "1", "k", "WEIGHTS", "1", "2"},
		{"ZINTERSTORE", "d", "1", "k", "WEIGHTS", "x"},
		{"ZUNION", "1", "k", "AGGREGATE", "AVG"},
		{"ZINTER", "1", "k", "j"},
		{"ZDIFF", "1", "k", "WEIGHTS", "1"},
		{"XTRIM", "k", "MINID", "abc"},
		{"XTRIM", "k", "MINID", "-"},
		{"XADD", "k", "MINID", "+", "*", "f", "v"},
		{"XADD", "k", "MAXLEN", "MAXLEN", "1", "*", "f", "v"},
		{"XTRIM", "k", "MAXLEN", "~", "x"},
		{"XADD", "k", "MAXLEN", "1", "MINID", "1", "*", "f", "v"},
		{"XADD", "k", "MINID", "~", "1-1", "minid", "2", "*", "f", "v"},
		{"XTRIM", "k", "MINID", "~", "1", "MAXLEN", "2"},
		{"XTRIM", "k", "MAXLEN", "1", "FOO"},
	} {
		if grammarRefuses(words) == "" {
			t.Errorf("%v: the checker takes it", words)
		}
		if run(words) == nil {
			t.Errorf("%v: Redis takes it", words)
		}
	}
	for _, words := range [][]string{
		{"XADD", "k", "*", "f", "v", "g", "w"},
		{"XADD", "k", "nomkstream", "MAXLEN", "~", "1000", "LIMIT", "10", "*", "f", "v"},
		{"XADD", "k", "MAXLEN", "5", "NOMKSTREAM", "1-1", "f", "v"},
		{"XADD", "k", "LIMIT", "10", "MINID", "~", "0-1", "1-*", "f", "v"},
		{"SORT", "k", "BY", "nosort", "LIMIT", "0", "10", "GET", "#", "GET", "o_*", "DESC", "ALPHA", "STORE", "d"},
		{"SORT", "k", "alpha", "limit", "0", "10", "ASC", "DESC", "ALPHA"},
		{"SORT", "k", "STORE", "d", "LIMIT", "0", "1"},
		{"SORT_RO", "k", "BY", "ALPHA", "ALPHA"},
		{"BITOP", "not", "d", "k"},
		{"BITOP", "XOR", "d", "k", "j", "NOT"},
		{"BITFIELD", "k", "OVERFLOW", "SAT"},
		{"BITFIELD", "k", "GET", "i64", "#2", "OVERFLOW", "fail", "INCRBY", "u63", "0", "-1"},
		{"BITFIELD", "k"},
		{"BITFIELD_RO", "k", "GET", "u8", "0", "GET", "i1", "7"},
		{"LMPOP", "2", "k", "LEFT", "RIGHT"},
		{"BLMPOP", "0", "1", "k", "right", "COUNT", "2"},
		{"ZMPOP", "1", "COUNT", "MAX"},
		{"ZUNIONSTORE", "d", "2", "k", "j", "WEIGHTS", "1.5", "-2", "AGGREGATE", "min", "WEIGHTS", "1", "inf"},
		{"ZINTER", "2", "k", "WEIGHTS", "WEIGHTS", "1", "2", "WITHSCORES"},
		{"ZDIFF", "2", "k", "WITHSCORES"},
		{"XADD", "k", "0-*", "f", "v"},
		{"XADD", "k", "01", "f", "v"},
		{"XADD", "k", " 1-+2", "f", "v"},
		{"XADD", "k", "0-1", "f", "v"},
		{"XADD", "k", "MINID", "=", "5", "1-1", "f", "v"},
		{"XADD", "k", "MAXLEN", "0", "NOMKSTREAM", "*", "f", "v"},
		{"XTRIM", "k", "MINID", "~", "0"},
		{"XTRIM", "k", "MAXLEN", "0"},
		{"XTRIM", "k", "MINID", "~", "+5", "LIMIT", "10"},
		{"XTRIM", "k", "LIMIT", "10", "maxlen", "~", "0"},
		{"XADD", "k", "MAXLEN", "~", "1", "LIMIT", "0", "NOMKSTREAM", "*", "f", "v"},
		{"XADD", "k", "MINID", " 007-0", "*", "f", "v"},
	} {
		if msg := grammarRefuses(words); msg != "" {
			t.Errorf("%v: the checker refuses it", words)
		}
		if err := run(words); err != nil {
			t.Errorf("%v: Redis refuses it: %v", words, err)
		}
	}
}

// TestOptionNeedsAgreeWithServer checks optionNeeds and optionConflicts
// against the test server: each option without what it needs, and each
// pair of conflicting options, is refused by both the checker and Redis;
// the option with each word it may need is taken by both.
func TestOptionNeedsAgreeWithServer(t *testing.T) {
	run := commandRunner(t, map[string][]string{"ZRANGESTORE": {"ZADD", "k", "0", "a"}})
	base := map[string][]string{
		"ZRANGE": {"ZRANGE", "k", "0", "1"}, "ZRANGESTORE": {"ZRANGESTORE", "d", "k", "0", "1"},
		"XADD": {"XADD", "k", "MAXLEN", "5"}, "XTRIM": {"XTRIM", "k", "MAXLEN", "5"},
	}
	tail := map[string][]string{"XADD": {"*", "f", "v"}}
	refuses := func(words []string) string {
		var msg string
		checkOptionNeeds(literalCall(words), words[0], func(_ parse.Pos, format string, args ...any) {
			msg = format
		})
		return msg
	}
	try := func(words []string, refused bool) {
		t.Helper()
		if got := refuses(words) != ""; got != refused {
			t.Errorf("%v: the checker refuses it: %v, want %v", words, got, refused)
		}
		if err := run(words); (err != nil) != refused {
			t.Errorf("%v: Redis answers %v, want refused: %v", words, err, refused)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(optionNeeds)) {
		b, ok := base[name]
		if !ok {
			t.Errorf("%s is in optionNeeds but has no plain call here", name)
			continue
		}
		for opt, needs := range optionNeeds[name].needs {
			words := append(append(slices.Clone(b), opt, "1"), tail[name]...)
			if opt != "LIMIT" || name == "XADD" || name == "XTRIM" {
				words = append(append(slices.Clone(b), opt, "10"), tail[name]...)
			}
			if name == "ZRANGE" || name == "ZRANGESTORE" {
				words = append(append(slices.Clone(b), opt, "0", "1"), tail[name]...)
			}
			try(words, true)
			for _, n := range needs {
				with := slices.Clone(words)
				if name == "XADD" || name == "XTRIM" {
					with = slices.Insert(with, 3, n) // MAXLEN ~ 5
				} else {
					with = slices.Insert(with, len(b), n)
				}
				if n == "BYLEX" {
					with[len(b)-2], with[len(b)-1] = "-", "+"
				}
				try(with, false)
			}
		}
	}
	for name, pairs := range optionConflicts {
		b := slices.Clone(base[name])
		b[len(b)-2], b[len(b)-1] = "-", "+" // a range BYLEX reads
		base[name] = b
		for _, p := range pairs {
			try(append(slices.Clone(base[name]), p[0], p[1]), true)
			try(append(slices.Clone(base[name]), p[1], p[0]), true)
			try(append(slices.Clone(base[name]), p[0]), false)
		}
	}
}
