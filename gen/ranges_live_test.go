package gen

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// TestRangeArgsAgreeWithServer runs every entry of rangeArgs on the server
// from a script, on a key that holds a value: just out of its range Redis
// must refuse the call with the message the checker quotes (and the checker
// must report it), and at its bound run it (and the checker accept it).
func TestRangeArgsAgreeWithServer(t *testing.T) {
	setup := map[string][]string{
		"LPOP": {"RPUSH", "k", "a"}, "RPOP": {"RPUSH", "k", "a"}, "LPOS": {"RPUSH", "k", "a"},
		"SPOP": {"SADD", "k", "a"}, "ZPOPMIN": {"ZADD", "k", "1", "a"}, "ZPOPMAX": {"ZADD", "k", "1", "a"},
		"SETRANGE": {"SET", "k", "v"}, "SETBIT": {"SET", "k", "v"}, "GETBIT": {"SET", "k", "v"}, "SCAN": {"SET", "k", "v"},
	}
	run := commandRunner(t, setup)
	base := map[string][]string{
		"LPOP": {"k"}, "RPOP": {"k"}, "SPOP": {"k"}, "ZPOPMIN": {"k"}, "ZPOPMAX": {"k"},
		"SETRANGE": {"k"}, "SETBIT": {"k"}, "GETBIT": {"k"}, "SCAN": {"0"}, "LPOS": {"k", "a"},
	}
	after := map[string][]string{"SETRANGE": {"x"}, "SETBIT": {"1"}}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range rangeArgs {
			if !yield(n) {
				return
			}
		}
	}) {
		for _, r := range rangeArgs[name] {
			out, at := r.min-1, r.min
			if r.nonZero {
				out, at = 0, 1
			}
			for _, v := range []int64{out, at} {
				words := append([]string{name}, base[name]...)
				if r.keyword != "" {
					words = append(words, r.keyword)
				}
				words = append(append(words, strconv.FormatInt(v, 10)), after[name]...)
				err := run(words)
				call := parse.Call{Command: name}
				for _, w := range words[1:] {
					call.Args = append(call.Args, parse.Arg{Literal: &w, Exact: true})
				}
				var msgs []string
				checkRanges(call, name, func(_ parse.Pos, format string, args ...any) { msgs = append(msgs, format) })
				refusal := strings.TrimPrefix(r.refusal, "ERR ")
				switch {
				case v == out && (err == nil || !strings.Contains(err.Error(), refusal)):
					t.Errorf("%v: Redis answered %v, want %q", words, err, r.refusal)
				case v == out && len(msgs) != 1:
					t.Errorf("%v: the checker reported %d problems, want 1", words, len(msgs))
				case v == at && err != nil:
					t.Errorf("%v: Redis refused it (%v), but the checker takes it", words, err)
				case v == at && len(msgs) != 0:
					t.Errorf("%v: the checker refused it, but Redis runs it", words)
				}
			}
		}
	}
}
