package gen

import (
	"math"
	"strconv"
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// checkStreamArgs reads the options of XADD and XTRIM as Redis's parser
// does (streamParseAddOrTrimArgsOrReply), word by word until the first word
// the checker cannot read, and refuses what it refuses: a MAXLEN threshold
// or a LIMIT count that is no integer or is negative, a MINID threshold that
// is no stream ID, and for XADD an entry ID that is no stream ID (a word
// where the options end: XADD k LIMIT x * f v reads LIMIT's count "x") or
// is 0-0. Redis refuses such a call at run time, after the script's earlier
// writes. It reports whether it refused nothing.
func checkStreamArgs(c parse.Call, name string, at func(parse.Pos, string, ...any)) bool {
	xadd := name == "XADD"
	if !xadd && name != "XTRIM" {
		return true
	}
	const after = "Redis refuses the call at run time (%q), after the script's earlier writes"
	n := len(c.Args)
	if n > 0 && c.Args[n-1].Expands {
		n-- // the words it gives may be options
	}
	trim := ""
	for i := 1; i < n; i++ {
		opt, ok := sentText(c.Args[i])
		if !ok {
			return true
		}
		more := len(c.Args) - 1 - i // Redis counts every word after it
		if c.Args[len(c.Args)-1].Expands {
			more = math.MaxInt // unpack(...) gives any number of words
		}
		upper := strings.ToUpper(opt)
		switch {
		case xadd && opt == "*":
			return true
		case (upper == "MAXLEN" || upper == "MINID") && more > 0 && trim != "":
			// One trimming strategy: a second one, even the same, is refused.
			at(c.Args[i].Pos, "%s takes one trimming strategy, and the call gives %s after %s: "+after+"; keep one", name, upper, trim, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
			return false
		case (upper == "MAXLEN" || upper == "MINID" || upper == "LIMIT") && more > 0:
			if upper != "LIMIT" {
				trim = upper
			}
			j := i + 1
			if upper != "LIMIT" && more >= 2 {
				if w, ok := sentText(c.Args[j]); !ok {
					return true
				} else if w == "~" || w == "=" {
					j++
				}
			}
			if j >= n {
				return true
			}
			where := name + " " + upper
			v, ok := sentText(c.Args[j])
			if p := luaIntegerProblem(c.Args[j]); !ok && p != "" && upper != "MINID" && (xadd || upper != "LIMIT") {
				at(c.Args[j].Pos, "%s reads an integer there, and %s", where, p)
				return false
			}
			if !ok {
				return true
			}
			switch {
			case upper == "MINID":
				if _, _, valid := streamID(v, false); !valid || v == "-" || v == "+" {
					at(c.Args[j].Pos, "%s reads a stream ID there (threshold), and %q is none: "+after+"; write ms-seq (1700000000000-0) or ms", where, v, "ERR Invalid stream ID specified as stream command argument")
					return false
				}
			case upper == "LIMIT" && !xadd:
				// XTRIM's LIMIT count is checked with the numbers.
			default:
				what := "threshold"
				if upper == "LIMIT" {
					what = "count"
				}
				x, ok := string2ll(v)
				if !ok {
					at(c.Args[j].Pos, "%s reads an integer there (%s), and %q is none: "+after, where, what, v, "ERR value is not an integer or out of range")
					return false
				}
				if x < 0 {
					at(c.Args[j].Pos, "%s reads an integer of 0 or more there (%s), and the call passes %s: "+after, where, what, v, "ERR The "+upper+" argument must be >= 0.")
					return false
				}
			}
			i = j
		case xadd && upper == "NOMKSTREAM":
		case xadd:
			ms, seq, valid := streamID(opt, true)
			if !valid {
				at(c.Args[i].Pos, "XADD reads the entry's ID there (* or ms-seq, as 1700000000000-0, or ms-*), or an option, and %q is neither: "+after, opt, "ERR Invalid stream ID specified as stream command argument")
			} else if ms == 0 && seq == 0 {
				at(c.Args[i].Pos, "XADD's entry ID %q is 0-0, which no entry may have: "+after+"; give * for an ID Redis picks", opt, "ERR The ID specified in XADD must be greater than 0-0")
			}
			return valid && (ms != 0 || seq != 0)
		case upper == "MAXLEN" || upper == "MINID" || upper == "LIMIT":
			return true // no value after it: the option checks'
		default:
			// xtrimCommand's parser answers any other word with a syntax error.
			at(c.Args[i].Pos, "XTRIM reads MAXLEN, MINID or LIMIT there, and the call gives %q: "+after, opt, "ERR syntax error")
			return false
		}
	}
	return true
}

// sentText is the text Redis gets for a literal argument: a string as it
// is, a Lua number as Redis formats it (integers only here); ok is false
// when the checker cannot tell.
func sentText(a parse.Arg) (string, bool) {
	if !a.Exact {
		return "", false
	}
	if !a.Number {
		return *a.Literal, !strings.ContainsRune(*a.Literal, 0)
	}
	v, ok := literalInt(a)
	if !ok {
		return "", false
	}
	return strconv.FormatInt(v, 10), true
}

// streamID reads s as Redis reads a stream ID (streamGenericParseIDOrReply):
// ms-seq or ms (seq 0), ms-* where strict (XADD's ID, seq reported as 1 so
// that it is not 0-0), and - or + where not strict.
func streamID(s string, strict bool) (ms, seq uint64, ok bool) {
	if len(s) > 127 {
		return 0, 0, false
	}
	if s == "-" || s == "+" {
		if strict {
			return 0, 0, false
		}
		if s == "+" {
			return math.MaxUint64, math.MaxUint64, true
		}
		return 0, 0, true
	}
	msText, seqText, dash := strings.Cut(s, "-")
	if ms, ok = string2ull(msText); !ok {
		return 0, 0, false
	}
	if !dash {
		return ms, 0, true
	}
	if strict && seqText == "*" {
		return ms, 1, true
	}
	seq, ok = string2ull(seqText)
	return ms, seq, ok
}

// string2ull reads s as Redis's string2ull does: string2ll's integers of 0
// or more, else what strtoull takes whole (leading spaces, a sign, digits;
// a minus wraps around).
func string2ull(s string) (uint64, bool) {
	if v, ok := string2ll(s); ok {
		return uint64(v), v >= 0
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" || strings.TrimLeft(t, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}
