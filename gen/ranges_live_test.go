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
// must report it), and at its bound run it (and the checker accept it), at
// each end. SETBIT is not run at 2^32 - 1, which would grow the string to
// 512 MB: GETBIT reads the offset the same way (getBitOffsetFromArgument).
func TestRangeArgsAgreeWithServer(t *testing.T) {
	setup := map[string][]string{
		"LPOP": {"RPUSH", "k", "a"}, "RPOP": {"RPUSH", "k", "a"}, "LPOS": {"RPUSH", "k", "a"},
		"SPOP": {"SADD", "k", "a"}, "ZPOPMIN": {"ZADD", "k", "1", "a"}, "ZPOPMAX": {"ZADD", "k", "1", "a"},
		"SETRANGE": {"SET", "k", "v"}, "BITPOS": {"SET", "k", "v"}, "SETBIT": {"SET", "k", "v"}, "GETBIT": {"SET", "k", "v"}, "SCAN": {"SET", "k", "v"},
	}
	run := commandRunner(t, setup)
	base := map[string][]string{
		"LPOP": {"k"}, "RPOP": {"k"}, "SPOP": {"k"}, "ZPOPMIN": {"k"}, "ZPOPMAX": {"k"},
		"SCAN": {"0"}, "LPOS": {"k", "a"}, "RESTORE": {"k", "0", "x"},
	}
	// The words of a command whose range arguments are at positions: each
	// is run with one of them replaced.
	words0 := map[string][]string{"RESTORE": {"k", "0", "x"}, "SETRANGE": {"k", "0", "x"}, "SETBIT": {"k", "0", "1"}, "GETBIT": {"k", "0"}, "BITPOS": {"k", "0"}}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range rangeArgs {
			if !yield(n) {
				return
			}
		}
	}) {
		for _, r := range rangeArgs[name] {
			type side struct{ out, at int64 }
			sides := []side{{r.min - 1, r.min}}
			if r.nonZero {
				sides = []side{{0, 1}}
			}
			if r.below != 0 {
				sides = append(sides, side{r.below, r.below - 1})
			}
			for _, sd := range sides {
				out, at := sd.out, sd.at
				for _, v := range []int64{out, at} {
					if name == "SETBIT" && v == maxBitOffset-1 {
						continue
					}
					var words []string
					if w, ok := words0[name]; ok && r.pos > 0 {
						words = append([]string{name}, w...)
						words[r.pos] = strconv.FormatInt(v, 10)
					} else {
						words = append([]string{name}, base[name]...)
						if r.keyword != "" {
							words = append(words, r.keyword)
						}
						words = append(words, strconv.FormatInt(v, 10))
					}
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
					case v == at && err != nil && !(name == "RESTORE" && strings.Contains(err.Error(), "payload")):
						// RESTORE reads the payload "x" (and refuses it) after the numbers.
						t.Errorf("%v: Redis refused it (%v), but the checker takes it", words, err)
					case v == at && len(msgs) != 0:
						t.Errorf("%v: the checker refused it, but Redis runs it", words)
					}
				}
			}
		}
	}
}
