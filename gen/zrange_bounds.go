package gen

import (
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// zrangeBounds are the commands whose range bounds the specifications type
// as strings though Redis reads them in one form (or, for ZRANGE and
// ZRANGESTORE, in the form their BYSCORE or BYLEX option says): the index
// in Args of the first bound (the second follows it), and where the
// options start (0: none, the bounds are member bounds).
var zrangeBounds = map[string]struct{ at, opts int }{
	"ZRANGE": {1, 3}, "ZRANGESTORE": {2, 4},
	"ZRANGEBYLEX": {1, 0}, "ZREVRANGEBYLEX": {1, 0}, "ZLEXCOUNT": {1, 0}, "ZREMRANGEBYLEX": {1, 0},
}

// checkZRangeBounds refuses a literal range bound of the wrong form for
// the way the command reads it: an index that is no integer (ZRANGE
// without BYSCORE or BYLEX), a score that is no number, or a member bound
// that is not [a, (a, - or +. Redis refuses the call whatever the key
// holds. When a word among the options cannot be read, it may be BYSCORE or
// BYLEX, and the bounds are not checked. TestZRangeBoundsAgreeWithServer
// runs each form on the server.
func checkZRangeBounds(c parse.Call, name string, at func(parse.Pos, string, ...any)) {
	z, ok := zrangeBounds[name]
	if !ok || len(c.Args) < z.at+2 {
		return
	}
	mode := "BYLEX"
	if z.opts > 0 {
		mode = ""
		for i := z.opts; i < len(c.Args); i++ {
			a := c.Args[i]
			if !a.Exact || a.Expands {
				if mode == "" {
					return // it may be BYSCORE or BYLEX
				}
				continue
			}
			switch w := strings.ToUpper(*a.Literal); w {
			case "BYSCORE", "BYLEX":
				mode = w
			case "LIMIT":
				i += 2 // its offset and count, which may be any value
			}
		}
	}
	names := [2]string{"min", "max"}
	if mode == "" {
		names = [2]string{"start", "stop"}
	}
	for i, a := range c.Args[z.at : z.at+2] {
		if !a.Exact || a.Expands || a.NotString != "" {
			continue
		}
		s := *a.Literal
		var what, refusal, fix string
		switch mode {
		case "":
			if !notInteger(a) {
				continue
			}
			what, refusal, fix = "an index (an integer)", "ERR value is not an integer or out of range", "pass an integer (0 is the first member, -1 the last), or add BYSCORE or BYLEX for a range of scores or members"
		case "BYSCORE":
			if a.Number || numberText(s, true) {
				continue
			}
			what, refusal, fix = "a score (a number)", "ERR min or max is not a float", "write a number, ( before one for an exclusive bound, or -inf or +inf"
		case "BYLEX":
			if !a.Number && (s == "-" || s == "+" || strings.HasPrefix(s, "[") || strings.HasPrefix(s, "(")) {
				continue
			}
			what, refusal, fix = "a member bound ([a, (a, - or +)", "ERR min or max not valid string range item", "write [a to take the member a, (a to leave it out, or - and + for the ends"
		}
		shown := name
		if mode != "" && z.opts > 0 {
			shown += " ... " + mode
		}
		at(a.Pos, "%s reads %s there (%s), and %s is none: Redis refuses the call at run time (%q), after the script's earlier writes; %s", shown, what, names[i], quoteLiteral(a), refusal, fix)
	}
}

// quoteLiteral shows a literal argument as written: a string quoted, a Lua
// number as is.
func quoteLiteral(a parse.Arg) string {
	if a.Number {
		return *a.Literal
	}
	return `"` + strings.ReplaceAll(*a.Literal, `"`, `\"`) + `"`
}
