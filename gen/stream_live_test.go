package gen

import (
	"slices"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// streamRefuses runs checkStreamArgs and checkStreamIDs on a call of
// literal words (the command name first, then an XGROUP subcommand) and
// returns its message, "" when it takes the call.
func streamRefuses(words []string) string {
	var msg string
	at := func(_ parse.Pos, format string, args ...any) { msg = format }
	name := strings.ToUpper(words[0])
	if name == "XGROUP" {
		name += "|" + strings.ToUpper(words[1])
	}
	if checkStreamArgs(literalCall(words), name, at) {
		checkStreamIDs(literalCall(words), name, at)
	}
	return msg
}

// TestStreamIDsAgreeWithServer checks the stream ID checks against the test
// server, on a stream s with a group g (so that Redis reads every ID: XDEL,
// XACK and XCLAIM read none on a missing key or group): each word of a list
// of IDs and near misses, in every place a stream command reads an ID, is
// refused by the checker exactly when Redis refuses it; then the counts,
// times and options read with the IDs, each refused call by both and each
// taken one by both.
func TestStreamIDsAgreeWithServer(t *testing.T) {
	setup := []string{"XGROUP", "CREATE", "s", "g", "0", "MKSTREAM"}
	setups := map[string][]string{}
	for _, name := range []string{"XADD", "XTRIM", "XRANGE", "XREVRANGE", "XDEL", "XACK", "XCLAIM", "XAUTOCLAIM", "XSETID", "XGROUP", "XPENDING", "XREAD", "XREADGROUP"} {
		setups[name] = setup
	}
	run := commandRunner(t, setups)
	ids := []string{
		"0", "0-0", "1", "1-1", "007", "+5", " 5", "5 ", "1--0", "1--1", "1-+2", "-5", "1-", "-1", "1-2-3", "1.5", "abc", "",
		"-", "+", "(", "(1", "(0", "(0-0", "(-", "(+", "((1", "(1-*", "1-*", "*", "$", ">",
		"18446744073709551615", "18446744073709551615-18446744073709551615", "18446744073709551616", "1-18446744073709551616",
		"(18446744073709551615-18446744073709551615", "(18446744073709551615", "(1-18446744073709551615",
		strings.Repeat("0", 127), strings.Repeat("0", 128), "(" + strings.Repeat("0", 127),
	}
	places := [][]string{
		{"XADD", "s", "_", "f", "v"},
		{"XADD", "s", "MINID", "_", "*", "f", "v"},
		{"XTRIM", "s", "MINID", "~", "_"},
		{"XRANGE", "s", "_", "+"}, {"XRANGE", "s", "-", "_"},
		{"XREVRANGE", "s", "_", "-"}, {"XREVRANGE", "s", "+", "_"},
		{"XDEL", "s", "1-1", "_"},
		{"XACK", "s", "g", "_"},
		{"XCLAIM", "s", "g", "c", "0", "_"}, {"XCLAIM", "s", "g", "c", "0", "1-1", "_", "FORCE"},
		{"XCLAIM", "s", "g", "c", "0", "1-1", "LASTID", "_"},
		{"XAUTOCLAIM", "s", "g", "c", "0", "_"},
		{"XSETID", "s", "_"}, {"XSETID", "s", "18446744073709551615-18446744073709551615", "MAXDELETEDID", "_"},
		{"XGROUP", "CREATE", "s", "g2", "_"}, {"XGROUP", "SETID", "s", "g", "_"},
		{"XPENDING", "s", "g", "_", "+", "5"}, {"XPENDING", "s", "g", "IDLE", "0", "-", "_", "5", "c"},
		{"XREAD", "STREAMS", "s", "_"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "_"},
	}
	calls, refused := 0, 0
	for _, p := range places {
		at := slices.Index(p, "_")
		for _, id := range ids {
			words := slices.Clone(p)
			words[at] = id
			msg := streamRefuses(words)
			err := run(words)
			calls++
			if err != nil {
				refused++
			}
			if (msg != "") != (err != nil) {
				t.Errorf("%q: the checker refuses it: %v; Redis answers %v", words, msg != "", err)
			}
		}
	}
	t.Logf("%d calls, %d refused by both", calls, refused)
	for _, words := range [][]string{
		{"XREAD", "COUNT", "x", "STREAMS", "s", "0"},
		{"XREAD", "BLOCK", "0", "STREAMS", "s", "0"},
		{"XREADGROUP", "GROUP", "g", "c", "block", "1", "STREAMS", "s", ">"},
		{"XREAD", "STREAMS", "s", "s", "0"},
		{"XREAD", "STREAMS", "s", "0", "0"},
		{"XREAD", "COUNT", "1", "STREAMS", "s", "t", "0", ">"},
		{"XDEL", "s", "1-1", "2-2", "-"},
		{"XACK", "s", "g", "1-1", "+"},
		{"XCLAIM", "s", "g", "c", "x", "1-1"},
		{"XCLAIM", "s", "g", "c", "1.5", "1-1"},
		{"XCLAIM", "s", "g", "c", "0", "1-1", "JUSTID", "2-2"},
		{"XCLAIM", "s", "g", "c", "0", "1-1", "IDLE", "x"},
		{"XCLAIM", "s", "g", "c", "0", "1-1", "TIME", "01"},
		{"XCLAIM", "s", "g", "c", "0", "1-1", "RETRYCOUNT", "+1"},
		{"XCLAIM", "s", "g", "c", "0", "1-1", "FOO"},
		{"XAUTOCLAIM", "s", "g", "c", "x", "0"},
		{"XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"},
		{"XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "-1"},
		{"XAUTOCLAIM", "s", "g", "c", "0", "0", "count", "576460752303423488"},
		{"XSETID", "s", "5-0", "ENTRIESADDED", "-1"},
		{"XSETID", "s", "5-0", "MAXDELETEDID", "5-1"},
		{"XSETID", "s", "5", "ENTRIESADDED", "0", "MAXDELETEDID", "6"},
		{"XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "-2"},
		{"XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "-5"},
		{"XPENDING", "s", "g", "-", "+", "x"},
		{"XPENDING", "s", "g", "IDLE", "5", "-", "+", "1.0"},
	} {
		if streamRefuses(words) == "" {
			t.Errorf("%q: the checker takes it", words)
		}
		if run(words) == nil {
			t.Errorf("%q: Redis takes it", words)
		}
	}
	for _, words := range [][]string{
		{"XRANGE", "s", "-", "+", "COUNT", "-5"},
		{"XRANGE", "s", "(1", "(2", "COUNT", "1", "COUNT", "2"},
		{"XREVRANGE", "s", "(+5", "(0"},
		{"XREAD", "COUNT", "-1", "STREAMS", "s", "$"},
		{"XREAD", "count", "1", "COUNT", "0", "STREAMS", "s", "t", "0", "$"},
		{"XREADGROUP", "GROUP", "g", "c", "COUNT", "-3", "NOACK", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"},
		{"XDEL", "s", "1-1", "007", "1--0"},
		{"XACK", "s", "g", "0", "0-0", "+5"},
		{"XCLAIM", "s", "g", "c", "-5", "1-1"},
		{"XCLAIM", "s", "g", "c", "0", "FORCE"},
		{"XCLAIM", "s", "g", "c", "0", "1-1", "2", "idle", "-5", "TIME", "-5", "RETRYCOUNT", "-1", "FORCE", "JUSTID", "LASTID", "5"},
		{"XAUTOCLAIM", "s", "g", "c", "-1", "-", "COUNT", "1", "JUSTID"},
		{"XAUTOCLAIM", "s", "g", "c", "0", "+", "COUNT", "1000"},
		{"XSETID", "s", "5-0", "ENTRIESADDED", "0", "MAXDELETEDID", "5"},
		{"XSETID", "s", "5", "MAXDELETEDID", "4-18446744073709551615"},
		{"XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "-1"},
		{"XGROUP", "CREATE", "s", "g2", "0-0", "MKSTREAM", "ENTRIESREAD", "0"},
		{"XGROUP", "SETID", "s", "g", "+", "ENTRIESREAD", "5"},
		{"XPENDING", "s", "g", "-", "+", "-5"},
		{"XPENDING", "s", "g", "IDLE", "-5", "(0", "(5", "0", "c"},
	} {
		if msg := streamRefuses(words); msg != "" {
			t.Errorf("%q: the checker refuses it: %s", words, msg)
		}
		if err := run(words); err != nil {
			t.Errorf("%q: Redis refuses it: %v", words, err)
		}
	}
}
