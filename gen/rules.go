package gen

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// scriptRules are the directives the command checks read.
type scriptRules struct {
	readOnly bool
	// noWrites is the script flag no-writes: Redis refuses the script's
	// writes whatever command runs it.
	noWrites      bool
	clusterUnsafe bool
	// noCluster is the script flag no-cluster: Redis Cluster refuses the
	// script before it runs.
	noCluster   bool
	commands    []string // @commands: what a dynamic command name may be
	commandsPos parse.Pos
	errorPos    map[string]parse.Pos
	ret         Type
	haveReturn  bool // @return parsed without error
	// args are the @arg declarations; nil when they have errors.
	args []Param
	// keys are the @key declarations; keysKnown is set when they and the
	// @arg declarations have no errors (argsKnown).
	keys                 []Param
	keysKnown, argsKnown bool
	// changed holds KEYS and ARGV when the script may change them
	// (parse.File.Changed).
	changed map[string]bool
	// measured is, for KEYS and ARGV, the highest index of an element the
	// script tests, or parse.MeasuredAll when it reads their length
	// (parse.File.Measured).
	measured map[string]int
	// libMisses is set when the script reads a library field Lua 5.1 does
	// not have (table.unpack): a key position given what it expands to is
	// then not reported again.
	libMisses bool
	// groups collects, for KEYS and ARGV, the conditions the commands that
	// get a variadic list in groups put on its count (see settleGroups).
	groups map[string][]groupUse
	// mins and caps collect, for KEYS and ARGV, the fewest and most values
	// of a variadic list the commands that get it whole take (see
	// settleCaps).
	mins, caps map[string][]countUse
	// extended collects the indexes n of the keys KEYS[n] a key position
	// holds extended on the right (KEYS[n] .. ':x'); 0 when the checker
	// cannot tell which key.
	extended *[]int
}

// checkBody runs the checks that read the script body against Redis's
// command table and the script's directives. A script with a Lua syntax
// error is not checked: its facts are incomplete.
func checkBody(file string, pf *parse.File, r scriptRules) []Error {
	var errs []Error
	at := func(pos parse.Pos, format string, args ...any) {
		errs = append(errs, errAt(file, pos, format, args...))
	}
	warn := func(pos parse.Pos, format string, args ...any) {
		e := errAt(file, pos, format, args...)
		e.Warning = true
		errs = append(errs, e)
	}

	// After redis.setresp(3), replies reach Lua (and a return the caller)
	// in RESP3 shapes, which the RESP2 checks do not read: they are left to
	// the RESP3 ones. What RESP3 cannot reach (a reply of a call made
	// before it, a return above it) is checked as in any script.
	resp3, maybe3 := func(parse.Pos) int { return 0 }, func(parse.Pos) int { return 0 }
	if pf.SetResp {
		resp3, maybe3 = resp3Line(pf.RedisLibCalls, pf.Funcs), maybeResp3Line(pf.RedisLibCalls, pf.Funcs)
	}
	callIn3 := func(i int) bool { return i >= 0 && i < len(pf.Calls) && maybe3(pf.Calls[i].Pos) != 0 }
	// (A local holding one of several replies: any of them.)
	opIn3 := func(o parse.Operand) bool {
		return o.Type == parse.OperandReply && (callIn3(o.Call) || slices.ContainsFunc(o.Calls, callIn3))
	}
	var retIn3 func(ret parse.Return) bool
	retIn3 = func(ret parse.Return) bool {
		if maybe3(ret.Pos) != 0 {
			return true
		}
		if ret.Kind == parse.ReturnCall && (ret.Call < 0 || ret.Call >= len(pf.Calls)) {
			return pf.SetResp // a call the checker cannot place
		}
		if ret.Kind == parse.ReturnCall && callIn3(ret.Call) {
			return true
		}
		for _, list := range [][]parse.Return{ret.Elems, ret.Alts, ret.Unless} {
			if slices.ContainsFunc(list, retIn3) {
				return true
			}
		}
		return false
	}

	r.libMisses = len(pf.UnknownLibFields) > 0
	r.groups = map[string][]groupUse{}
	r.mins, r.caps = map[string][]countUse{}, map[string][]countUse{}
	dynamic := false
	for _, c := range pf.Calls {
		for i, a := range c.Args {
			if a.NotString != "" {
				at(a.Pos, "argument %d of %s is %s: Redis refuses it at run time (command arguments must be strings or numbers)", i+1, c.Func, a.NotString)
			}
			if a.Indexed > 0 && !handsError(c) {
				r.needIndexed(a, c)
			}
			if a.Unpacks != "" && a.UnpackTo >= max(a.UnpackFrom, 1) && !handsError(c) {
				// unpack(ARGV, 3, 3): nil past the list's end, as ARGV[3].
				r.needCount(a.Unpacks, a.UnpackTo, a, c)
			}
			if a.MayNotString != "" {
				warn(a.Pos, "argument %d of %s is %s: Redis refuses the call at run time on those paths (\"Lua redis lib command arguments must be strings or integers\")", i+1, c.Func, a.MayNotString)
			}
			if a.NilParam != "" && a.NilParamOf != "" {
				warn(a.Pos, "argument %d of %s is %s, a local given the parameter %s, which a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call (\"Lua redis lib command arguments must be strings or integers\"); pass a value, or test it first (if %s then ... end)",
					i+1, c.Func, a.NilParam, a.NilParamOf, a.NilParam)
			} else if a.NilParam != "" {
				warn(a.Pos, "argument %d of %s is %s, a parameter that a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call (\"Lua redis lib command arguments must be strings or integers\"); pass a value, or test it first (if %s then ... end)",
					i+1, c.Func, a.NilParam, a.NilParam)
			}
			if a.MayNil != "" {
				warn(a.Pos, "argument %d of %s is %s, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths (\"Lua redis lib command arguments must be strings or integers\"); give it a value on every path, or test it first (if %s then ... end)",
					i+1, c.Func, a.MayNil, a.MayNil)
			}
			if n, _, ok := r.unpacked(a.Unpacks, 1, 0); ok && a.UnpackTo >= max(a.UnpackFrom, 1) && a.UnpackTo > n && !r.variadic(a.Unpacks) {
				// unpack(t, i, j) gives nil for t[n+1] to t[j] (nothing
				// for j < i).
				at(a.Pos, "argument %d of %s is unpack(%s, %d, %d), but %s: it gives nil past them, and Redis refuses it at run time (\"Lua redis lib command arguments must be strings or integers\")",
					i+1, c.Func, a.Unpacks, max(a.UnpackFrom, 1), a.UnpackTo, declared(map[string]string{"KEYS": "key", "ARGV": "arg"}[a.Unpacks], n))
			}
			if a.IndexOf > 0 && a.IndexOf <= len(pf.Calls) && !callIn3(a.IndexOf-1) {
				checkIndexArg(a, c, pf.Calls[a.IndexOf-1], warn)
			}
		}
		if c.Command != "" {
			checkCall(c, c.Command, r, at, warn)
			checkHeldLiterals(c, c.Command, r, at, warn)
			continue
		}
		if c.NameNotString != "" {
			at(c.CommandPos, "the command name of %s is %s: Redis refuses it at run time (\"Lua redis lib command arguments must be strings or integers\"); name the command as a string", c.Func, c.NameNotString)
			continue
		}
		if c.NoName != "" {
			at(c.CommandPos, "unknown Redis command %s: Redis fails the script at run time (\"Unknown Redis command called from script\"); name the command as a string", c.NoName)
			continue
		}
		dynamic = true
		if len(r.commands) == 0 {
			at(c.CommandPos, "command name %s is not a literal: declare the commands it may be with @commands (e.g. -- @commands publish spublish)", c.Dynamic.Text)
			continue
		}
		for _, name := range r.commands {
			checkCall(c, name, r, at, warn)
		}
	}

	for _, op := range pf.ElemOps {
		if !op.Protected {
			r.needElem(op)
		}
	}
	for _, o := range pf.NilOperands {
		if !o.Protected {
			checkNilOperand(o, at, warn)
		}
	}
	settleGroups(r, at, warn)
	settleCaps(r, at, warn)

	if pf.SetResp {
		for _, o := range pf.Operations {
			if !o.Probed { // under if r.map ...: written for either protocol
				checkResp3Operation(o, pf.Calls, resp3, at)
			}
		}
		for _, c := range pf.Compares {
			checkResp3False(c, pf.Calls, resp3, at)
		}
		for _, f := range pf.Fields {
			obj, ok := strings.CutPrefix(f.Text, "redis.call(...)")
			if ok {
				obj = "redis.call(...)"
			} else if i := strings.IndexAny(f.Text, ".["); i > 0 {
				obj = f.Text[:i] // h of h.owner, h[f]
			}
			checkResp3Read(parse.ElemRead{Pos: f.Pos, How: "field " + f.Name, Text: f.Text, Obj: obj, Call: f.Call}, pf.Calls, resp3, at)
		}
		for _, e := range pf.ElemReads {
			if !e.Probed {
				checkResp3Read(e, pf.Calls, resp3, at)
			}
		}
	}
	for _, c := range pf.Compares {
		if !opIn3(c.Left) && !opIn3(c.Right) {
			checkCompare(c, pf.Calls, r.args, at)
			checkStringOrder(c, pf.Calls, r.args, warn)
		} else {
			checkNilCompareBefore3(c, pf.Calls, callIn3, warn)
		}
	}
	for _, f := range pf.Fields {
		if !callIn3(f.Call) {
			checkFieldRead(f, pf.Calls, at)
		}
	}
	for _, t := range pf.Truths {
		if !opIn3(t.Operand) {
			checkTruth(t, pf.Calls, r.args, at)
		}
	}
	for _, o := range pf.Operations {
		if !opIn3(o.Operand) {
			checkOperation(o, pf.Calls, at, warn)
		}
	}

	for _, v := range pf.RedisValues {
		at(v.Pos, "%s is used as a value, not called: the checker cannot see what it runs (command, keys, writes); call it directly: redis.call('CMD', ...), or redis.pcall('CMD', ...) for a protected call", v.Text)
	}

	for _, v := range pf.Escapes {
		at(v.Pos, "%s reaches redis.call, or runs code, out of the checker's sight (its command, keys and writes go unchecked): call redis.call('CMD', ...) directly", v.Text)
	}

	if len(r.commands) > 0 && !dynamic {
		warn(r.commandsPos, "@commands is declared but every redis.call names its command literally")
	}

	assigned := map[string]bool{}
	for _, g := range pf.Globals {
		assigned[g.Name] = true
		if g.Function {
			at(g.Pos, "global function %s: Redis refuses global variables in scripts; use local function %s", g.Name, g.Name)
		} else {
			at(g.Pos, "assignment to global variable %s: Redis refuses global variables in scripts; declare it local", g.Name)
		}
	}
	for _, g := range pf.UnknownGlobals {
		if assigned[g.Name] {
			continue // its assignment is reported
		}
		hint, ok := missingGlobalHints[g.Name]
		if !ok {
			hint = "declare it local, or check its name"
		}
		at(g.Pos, "%s is not a global of Redis's script sandbox: reading it fails at run time (\"Script attempted to access nonexistent global variable '%s'\"); %s", g.Name, g.Name, hint)
	}

	for _, f := range pf.UnknownRedisFields {
		hint := ""
		fields := parse.RedisFields()
		s := closest(f.Name, fields)
		for _, n := range fields {
			if s == "" && strings.HasPrefix(n, f.Name) {
				s = n // LOG_WARN: LOG_WARNING
			}
		}
		if s != "" {
			hint = "; did you mean redis." + s + "?"
		}
		switch {
		case f.Function:
			at(f.Pos, "redis.%s is not a function of the redis table in Redis 7.0 scripts: calling it fails at run time (\"attempt to call field '%s' (a nil value)\")%s", f.Name, f.Name, hint)
		case strings.HasPrefix(f.Name, "LOG_"):
			at(f.Pos, "redis.%s is not a field of the redis table in Redis 7.0 scripts: it is nil, and redis.log fails on it at run time (\"First argument must be a number (log level)\")%s", f.Name, hint)
		default:
			at(f.Pos, "redis.%s is not a field of the redis table in Redis 7.0 scripts: it is nil%s", f.Name, hint)
		}
	}

	for _, f := range pf.UnknownLibFields {
		lib, name, _ := strings.Cut(f.Name, ".")
		hint, ok := libFieldHints[f.Name]
		if !ok {
			hint = "check its name"
			if s := closest(name, parse.LibFields()[lib]); s != "" {
				hint = "did you mean " + lib + "." + s + "?"
			}
		}
		whose := "Lua 5.1's " + lib + " library, which Redis runs"
		if lib != "string" && lib != "table" && lib != "math" {
			whose = "the " + lib + " library of Redis's scripts"
		}
		at(f.Pos, "%s is not a field of %s: it is nil, and calling it fails at run time (\"attempt to call field '%s' (a nil value)\"); %s", f.Name, whose, name, hint)
	}
	for _, lc := range pf.RedisLibCalls {
		checkRedisLibCall(lc, at)
	}
	for _, u := range pf.Unpacks {
		if what, ok := everything[strings.ToLower(u.Command)]; ok && (u.Call >= len(pf.Calls) || !boundedReply(pf.Calls[u.Call])) {
			warn(u.Pos, "unpack of %s, which lists %s: Lua fails the script once that is about 8000 values (\"too many results to unpack\"); pass it in batches (for i = 1, #t, 1000 do ... unpack(t, i, math.min(i + 999, #t)) ... end)", u.Text, what)
		}
	}
	for _, g := range pf.IgnoredArgs {
		at(g.Pos, "%s", ignoredArgHints[g.Name])
	}
	for _, w := range pf.ReadOnlyWrites {
		at(w.Pos, "assignment to %s: Redis 7 makes the redis table and the libraries read-only, so it fails at run time (\"Attempt to modify a readonly table\"); keep the value in a local", w.Name)
	}
	for _, w := range pf.TableWrites {
		if w.Held {
			at(w.Pos, "%s held or passed on (a local, a table, a function's argument or result): a change made through it (t[1] = ...) escapes the checks of keys, arguments and commands, and Redis Cluster's routing, which take %s[n] for what the callers pass; read %s where it is used (%s[i], #%s, unpack(%s), ipairs(%s)) or copy it ({unpack(%s)})", w.Table, w.Table, w.Table, w.Table, w.Table, w.Table, w.Table, w.Table)
			continue
		}
		at(w.Pos, "%s changes %s: the checks of keys, arguments and commands, and Redis Cluster's routing, take %s[n] for what the callers pass, which a script that changed it no longer holds; copy the value to a local and change that", w.Name, w.Table, w.Table)
	}

	produced := map[string]bool{}
	dynamicErrors := false
	for _, e := range pf.ErrorSites {
		text := strings.TrimPrefix(e.Text, "-")
		code, _, spaced := strings.Cut(text, " ")
		if code == "" {
			dynamicErrors = dynamicErrors || e.Via != "error()"
			continue
		}
		_, declared := r.errorPos[code]
		// (A message passed to a local function that raises it: the call
		// is where it is written.)
		passed := ""
		if e.Fn != "" {
			passed = ", in the message passed to " + e.Fn + ","
		}
		if e.Via != "error()" && (declared || errorCodeRE.MatchString(code)) {
			// Redis takes the word before the first space as the code:
			// {err = ...} keeps a leading '-' in it (redis.error_reply
			// drops it), and a value joined to the code runs into it.
			if e.Via == "{err = ...}" && text != e.Text {
				produced[code] = true
				at(e.Pos, "{err = %q}%s keeps its '-' (only redis.error_reply drops it): the caller gets the code -%s, which matches no sentinel; write {err = %q}", e.Text, passed, code, text)
				continue
			}
			if !spaced && e.Joined != "" {
				produced[code] = true
				site := fmt.Sprintf("%s(%q .. ...)", e.Via, e.Text)
				if e.Via == "{err = ...}" {
					site = fmt.Sprintf("{err = %q .. ...}", e.Text)
				}
				site += passed
				const why = "Redis takes the word before the first space as the code, so the caller gets another code, which matches no sentinel; end the code with a space ('%s ' .. ...)"
				if e.Joined == "number" {
					at(e.Pos, "the code %s of %s runs into the value concatenated after it: "+why, code, site, code)
				} else {
					warn(e.Pos, "the code %s of %s runs into the value concatenated after it unless that starts with a space: "+why, code, site, code)
				}
				continue
			}
		}
		if e.Via == "error()" {
			if declared {
				at(e.Pos, "error(%q)%s reaches the caller as \"ERR user_script:...: %s\" and matches no sentinel: use return redis.error_reply(%q)", e.Text, passed, e.Text, e.Text)
			}
			continue
		}
		produced[code] = true
		if !declared {
			if !errorCodeRE.MatchString(code) {
				at(e.Pos, "error reply %q%s starts with no error code: start it with an UPPER_SNAKE_CASE code declared with @error (redis.error_reply('CODE message'))", e.Text, passed)
				continue
			}
			at(e.Pos, "error code %s%s is not declared with @error (-- @error %s <message>; callers get Err%s)", code, passed, code, camel(code))
		}
	}
	if !dynamicErrors {
		for code, pos := range r.errorPos {
			if !produced[code] {
				warn(pos, "@error %s is declared but the script never returns it (return redis.error_reply('%s ...'))", code, code)
			}
		}
	}

	for _, nt := range pf.NumberTexts {
		checkNumberText(nt, pf.Calls, r.args, warn)
	}
	for _, ret := range pf.Returns {
		if !retIn3(ret) {
			checkNamedFields(ret, at)
			for _, e := range ret.NilElems {
				if ret.Len < 0 {
					break
				}
				v, _, _ := strings.Cut(e.Text, " (")
				if strings.HasPrefix(e.Text, "tonumber of") {
					v = "tonumber(...)"
				}
				values := "values"
				if e.Index == 2 {
					values = "value"
				}
				warn(ret.Pos, "value %d of the returned table is %s, which is nil when %s replies nil: Redis ends an array at its first nil, so the caller then gets %d %s, not %d; give it a default where it is assigned (tonumber(...) or 0), or put (%s or false) in the table: false reaches the caller as nil",
					e.Index, e.Text, e.Command, e.Index-1, values, ret.Len, v)
			}
		}
	}
	for _, ret := range pf.Returns {
		checkEitherNilElems(ret, pf.Calls, warn)
	}
	if r.haveReturn && pf.SetResp {
		for _, ret := range pf.Returns {
			checkResp3Return(ret, pf.Calls, r.ret, resp3, at)
		}
	}
	if r.haveReturn {
		for _, ret := range pf.Returns {
			if retIn3(ret) {
				continue
			}
			checkReturnFraction(ret, r.ret, warn)
			if ret.Kind == parse.ReturnOneOf {
				checkOneOf(ret, pf.Calls, r.ret, at)
				continue
			}
			if ret.Kind == parse.ReturnEither {
				checkEither(ret, pf.Calls, r.ret, at)
				continue
			}
			checkReturn(ret, callOf(ret, pf.Calls), pf.Calls, r.ret, at)
		}
	}
	return errs
}

// checkEitherNilElems warns of an and/or among the values of a returned
// table, other than the last, that may give a literal nil ({v or nil, 5}):
// Redis ends the array there, and the values after it are lost. (The last
// one is the element checks' business: a missing value reads as nil.)
func checkEitherNilElems(ret parse.Return, calls []parse.Call, warn func(parse.Pos, string, ...any)) {
	if ret.Kind != parse.ReturnArray || ret.Len < 0 {
		return
	}
	for i, el := range ret.Elems {
		if i == ret.Len-1 {
			break
		}
		values := "values"
		if i == 1 {
			values = "value"
		}
		if el.LuaNil && el.Local != "" && el.Kind != parse.ReturnEither {
			warn(ret.Pos, "value %d of the returned table is %s, a local that may hold nil there (declared without a value, or assigned nil, and given one only on some paths): Redis ends an array at its first nil, so the caller then gets %d %s, not %d; give it a value on every path, or put false in place of nil (%s or false): false reaches the caller as nil",
				i+1, el.Local, i, values, ret.Len, el.Local)
			return
		}
		if el.Kind != parse.ReturnEither || !slices.ContainsFunc(givenAlts(el.Alts, calls), func(a parse.Return) bool { return a.LuaNil }) {
			continue
		}
		warn(ret.Pos, "value %d of the returned table is an and/or that may give nil: Redis ends an array at its first nil, so the caller then gets %d %s, not %d; put false in place of nil there (... or false): false reaches the caller as nil",
			i+1, i, values, ret.Len)
		return
	}
}

// everything are the commands whose reply lists every key, member, field
// or element there is (or every one in a range the data may fill), with
// what it lists: no bound the script sets.
var everything = map[string]string{
	"keys": "every key matching the pattern", "smembers": "every member of the set",
	"sinter": "every member of the result", "sunion": "every member of the result", "sdiff": "every member of the result",
	"hgetall": "every field and value of the hash", "hkeys": "every field of the hash", "hvals": "every value of the hash",
	"lrange": "every element in the range", "zrange": "every member in the range", "zrevrange": "every member in the range",
	"zrangebyscore": "every member in the range", "zrevrangebyscore": "every member in the range",
	"zrangebylex": "every member in the range", "zrevrangebylex": "every member in the range",
	"zinter": "every member of the result", "zunion": "every member of the result", "zdiff": "every member of the result",
	"xrange": "every entry in the range", "xrevrange": "every entry in the range",
	"sort": "every element of the result", "sort_ro": "every element of the result",
}

// redisLibArity is how many arguments the redis table's functions take
// (max -1: any number), with the error Redis fails the script with
// otherwise (set_repl's says two, though it takes one).
var redisLibArity = map[string]struct {
	min, max int
	fails    string
}{
	"log":           {2, -1, "redis.log() requires two arguments or more."},
	"setresp":       {1, 1, "redis.setresp() requires one argument."},
	"set_repl":      {1, 1, "redis.set_repl() requires two arguments."},
	"sha1hex":       {1, 1, "wrong number of arguments"},
	"error_reply":   {1, 1, "wrong number or type of arguments"},
	"status_reply":  {1, 1, "wrong number or type of arguments"},
	"acl_check_cmd": {1, -1, "Please specify at least one argument for this redis lib call"},
	"call":          {1, -1, "Please specify at least one argument for this redis lib call"},
	"pcall":         {1, -1, "Please specify at least one argument for this redis lib call"},
}

// checkRedisLibCall refuses a call of the redis table's functions that
// Redis fails every time: a wrong number of arguments, a log level that is
// a string or out of range, a RESP version but 2 or 3; and an error or
// status reply made of anything but one string, which gives an error reply
// of its own instead.
func checkRedisLibCall(lc parse.RedisLibCall, at func(parse.Pos, string, ...any)) {
	a, ok := redisLibArity[lc.Name]
	if !ok {
		return
	}
	reply := lc.Name == "error_reply" || lc.Name == "status_reply"
	if reply && (lc.Args >= 0 && lc.Args != 1 || lc.First.Type == parse.OperandNumber) {
		// These do not fail: they give an error reply of their own.
		given := fmt.Sprintf("%d arguments", lc.Args)
		if lc.Args == 1 {
			given = "the number " + lc.First.Text
		}
		at(lc.Pos, "redis.%s takes one string, and the call gives %s: it makes the error reply \"wrong number or type of arguments\" instead; give it one string", lc.Name, given)
		return
	}
	if lc.Name == "pcall" && lc.Args == 0 {
		// It does not fail: it gives that error as a table, every time.
		at(lc.Pos, "redis.pcall takes 1 or more arguments, the command first, and the call gives 0: it gives the error reply \"%s\" every time, running nothing; name the command", a.fails)
		return
	}
	if lc.Args >= 0 && (lc.Args < a.min || (a.max >= 0 && lc.Args > a.max)) {
		want := fmt.Sprintf("%d argument", a.min)
		switch {
		case a.max < 0:
			want = fmt.Sprintf("%d or more arguments", a.min)
		case a.min != 1:
			want += "s"
		}
		at(lc.Pos, "redis.%s takes %s, and the call gives %d: Redis fails the script at run time (\"%s\")", lc.Name, want, lc.Args, a.fails)
		return
	}
	f := lc.First
	switch lc.Name {
	case "log":
		if f.Type == parse.OperandString {
			at(lc.Pos, "the log level of redis.log is %s, a string: Redis fails the script at run time (\"First argument must be a number (log level)\"); use redis.LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE or LOG_WARNING", f.Text)
		} else if n, err := strconv.ParseFloat(f.Text, 64); f.Type == parse.OperandNumber && err == nil && (n < 0 || n > 3 || n != math.Trunc(n)) {
			at(lc.Pos, "the log level of redis.log is %s: Redis fails the script at run time (\"Invalid debug level.\"); use redis.LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE or LOG_WARNING", f.Text)
		}
	case "setresp":
		// Redis reads the argument as tonumber does, truncated: 3.5 and
		// '3' are 3.
		if v, ok := setrespVersion(f); ok && v != 2 && v != 3 {
			at(lc.Pos, "redis.setresp(%s): Redis fails the script at run time (\"RESP version must be 2 or 3.\")", f.Text)
		}
	}
}

// maxUnpack is how many values Lua's stack takes in one unpack, with room
// for the call's other arguments (Redis's Lua fails from 8000).
const maxUnpack = 7900

// boundedReply reports whether a call of an everything command lists fewer
// values than unpack takes, or as many as the script says: a LIMIT or COUNT
// that is no literal of maxUnpack or more (a computed one is the script's
// bound), or an index range (LRANGE, ZRANGE) with an end or a word the
// script computes, or of literal ends both counted from the same side and
// close enough. WITHSCORES counts each member twice.
func boundedReply(c parse.Call) bool {
	word := func(a parse.Arg) string {
		if a.Exact {
			return strings.ToUpper(*a.Literal)
		}
		return ""
	}
	per := int64(1)
	for _, a := range c.Args {
		if word(a) == "WITHSCORES" {
			per = 2
		}
	}
	for i, a := range c.Args {
		n := -1
		switch word(a) {
		case "LIMIT":
			n = i + 2
		case "COUNT":
			n = i + 1
		}
		if n < 0 || n >= len(c.Args) {
			continue
		}
		if !c.Args[n].Exact {
			return true
		}
		v, ok := literalInt(c.Args[n])
		return ok && v >= 0 && v*per < maxUnpack
	}
	switch strings.ToLower(c.Command) {
	case "lrange", "zrange", "zrevrange":
		if len(c.Args) < 3 {
			return false
		}
		for _, a := range c.Args[3:] {
			switch word(a) {
			case "BYSCORE", "BYLEX":
				return false
			case "":
				return true // a word the script computes: its own bound
			}
		}
		if !c.Args[1].Exact || !c.Args[2].Exact {
			return true
		}
		start, ok1 := literalInt(c.Args[1])
		stop, ok2 := literalInt(c.Args[2])
		return ok1 && ok2 && (start < 0) == (stop < 0) && (stop-start+1)*per < maxUnpack
	}
	return false
}

// ignoredArgHints are the errors for an argument Lua 5.1 ignores.
var ignoredArgHints = map[string]string{
	"math.log":   "math.log takes one argument in Lua 5.1, which Redis runs, and gives the natural logarithm: it ignores the base, so math.log(8, 2) is 2.08, not 3; divide instead: math.log(x) / math.log(base)",
	"math.atan":  "math.atan takes one argument in Lua 5.1, which Redis runs: it ignores the second, so math.atan(y, x) is the arc tangent of y alone; use math.atan2(y, x)",
	"string.rep": "string.rep takes two arguments in Lua 5.1, which Redis runs: it ignores the separator, so string.rep('a', 3, ',') is \"aaa\"; join the copies with table.concat instead",
}

// libFieldHints say what to use instead of a field of a later Lua's
// libraries that Lua 5.1 does not have.
var libFieldHints = map[string]string{
	"table.unpack":    "unpack is a global in Lua 5.1: use unpack(t)",
	"table.pack":      "build the table with {...} (and select('#', ...) for the count)",
	"table.move":      "copy the elements with a loop",
	"math.tointeger":  "Lua 5.1 numbers are doubles: round with math.floor",
	"math.type":       "test type(x) == 'number' (and x == math.floor(x) for an integer)",
	"math.maxinteger": "Lua 5.1 numbers are doubles, exact as integers up to 2^53",
	"math.mininteger": "Lua 5.1 numbers are doubles, exact as integers down to -2^53",
	"string.pack":     "use struct.pack",
	"string.unpack":   "use struct.unpack",
	"string.packsize": "use struct.size",
}

// missingGlobalHints say what to use instead of a global Redis's script
// sandbox does not define.
var missingGlobalHints = func() map[string]string {
	const libs = "Redis loads only the Lua libraries string, table, math, cjson, cmsgpack, bit and struct"
	m := map[string]string{
		"print":  "Redis 7 removed print: use redis.log(redis.LOG_NOTICE, ...)",
		"server": "server is Valkey's name for the redis table: use redis",
	}
	for _, lib := range []string{"os", "io", "debug", "package", "require", "module", "utf8", "jit", "ffi"} {
		m[lib] = libs
	}
	return m
}()

// checkCall checks one call against the command it runs (name: the literal
// name, or one of the @commands names of a dynamic one).
// checkHeldLiterals checks each argument that is a local holding a literal
// on some paths only (local n = '01'; if c then n = 5 end) as each such
// literal written in its place: Redis refuses the call on the paths that
// send a bad one. What that finds at the argument is reported, naming the
// local, unless the call's own check finds an error there already (a
// literal key position).
func checkHeldLiterals(c parse.Call, name string, r scriptRules, at, warn func(parse.Pos, string, ...any)) {
	for i, a := range c.Args {
		if len(a.Held) == 0 {
			continue
		}
		type found struct {
			msg     string
			warning bool
		}
		gather := func(c parse.Call) []found {
			var got []found
			collect := func(warning bool) func(parse.Pos, string, ...any) {
				return func(p parse.Pos, format string, args ...any) {
					if p == a.Pos {
						got = append(got, found{fmt.Sprintf(format, args...), warning})
					}
				}
			}
			checkCall(c, name, r, collect(false), collect(true))
			return got
		}
		if slices.ContainsFunc(gather(c), func(f found) bool { return !f.warning }) {
			continue // (a warning there, of a value the local holds on another path, is no reason)
		}
		// with is the call with lit (as Value.Text) written in the
		// argument's place.
		with := func(lit string) parse.Call {
			text, number := lit, true
			if s, err := strconv.Unquote(lit); err == nil && strings.HasPrefix(lit, `"`) {
				text, number = s, false
			}
			b := a
			b.Literal, b.Exact, b.Number, b.Held, b.HeldMore = &text, true, number, nil, false
			b.Value = parse.Value{Source: parse.SourceLiteral, Text: lit}
			alt := c
			alt.Args = slices.Clone(c.Args)
			alt.Args[i] = b
			return alt
		}
		// The literals past those held are not checked: say so where
		// Redis reads a literal there (an integer, an option word; not
		// where it takes any string, SET's value), or one it refuses
		// would be taken once enough others are given first.
		if a.HeldMore && (len(gather(with(`""`))) > 0 || len(gather(with(`"x"`))) > 0) {
			warn(a.Pos, "%s gets %s there, which holds more literals on some paths than the checker follows (%d): it checked those and not the rest, which Redis may refuse at run time; give %s fewer literals, or compute it",
				name, a.HeldBy, len(a.Held), a.HeldBy)
		}
		seen := map[found]bool{}
		for _, lit := range a.Held {
			for _, f := range gather(with(lit)) {
				if seen[f] {
					continue
				}
				seen[f] = true
				report := at
				if f.warning {
					report = warn
				}
				report(a.Pos, "%s (%s holds %s on some paths)", f.msg, a.HeldBy, lit)
			}
		}
	}
}

func checkCall(c parse.Call, name string, r scriptRules, at, warn func(parse.Pos, string, ...any)) {
	if k := len(c.Args) - 1; k >= 0 && c.Args[k].Nothing {
		// A call last that passes nothing: the command gets the
		// arguments before it alone, and every check reads them so (DEL
		// k, f() is DEL k; HSET k a b c, f() is HSET k a b c).
		c.Args = c.Args[:k]
	}
	info, ok := lookupCommand(name)
	if !ok {
		if c.Command == "" {
			return // @commands names are checked where they are declared
		}
		if h := splitSubcommandHint(name); h != "" {
			at(c.CommandPos, "unknown Redis command %q: %s", name, h)
		} else if s := suggestCommand(name); s != "" {
			at(c.CommandPos, "unknown Redis command %q: did you mean %s?", name, s)
		} else {
			at(c.CommandPos, "unknown Redis command %q", name)
		}
		return
	}
	checkRanges(c, info.name, at)
	checkSetrangeLength(c, info.name, at)
	shown := info.name
	if hasSubcommands[info.name] && len(c.Args) > 0 && !c.Args[0].Exact {
		// The container's own flags, arity and keys say nothing of its
		// subcommands' (every CLIENT subcommand but HELP is noscript).
		sub := c.Args[0].Value.Text
		if sub == "" {
			sub = "an expression"
		}
		switch {
		case r.noWrites:
			at(c.Args[0].Pos, "the script flag no-writes forbids writes, and the script calls %s with the subcommand %s, not a literal: the checker cannot tell whether it writes; write the subcommand as a string literal", info.name, sub)
		case r.readOnly:
			at(c.Args[0].Pos, "@readonly script calls %s with the subcommand %s, not a literal: the checker cannot tell whether it writes; write the subcommand as a string literal (or remove @readonly)", info.name, sub)
		default:
			warn(c.Args[0].Pos, "%s is called with the subcommand %s, not a literal: the checker cannot check what it runs (whether scripts may run it, its arguments, keys and writes); write the subcommand as a string literal", info.name, sub)
		}
		return
	}
	if hasSubcommands[info.name] && len(c.Args) > 0 && c.Args[0].Exact {
		sub := info.name + "|" + strings.ToUpper(*c.Args[0].Literal)
		si, ok := commandIndex[sub]
		if !ok {
			if s := suggestSubcommand(info.name, *c.Args[0].Literal); s != "" {
				at(c.Args[0].Pos, "unknown subcommand %s %s: did you mean %s %s?", info.name, strings.ToUpper(*c.Args[0].Literal), info.name, s)
			} else {
				at(c.Args[0].Pos, "unknown subcommand %s %s", info.name, strings.ToUpper(*c.Args[0].Literal))
			}
			return
		}
		info, shown = si, info.name+" "+strings.ToUpper(*c.Args[0].Literal)
	}
	if info.flags&flagNoscript != 0 {
		at(c.CommandPos, "%s is not allowed in scripts (flagged noscript in Redis's command table)", shown)
		return
	}
	if noscriptOn70[info.name] {
		at(c.CommandPos, "%s is not allowed in scripts on Redis 7.0 (flagged noscript there; later versions run it without blocking)", shown)
		return
	}
	if newerThan70(info.since) {
		at(c.CommandPos, "%s is not in Redis 7.0 (it is in the specifications since %s): scripts must run on Redis 7.0", shown, info.since)
		return
	}
	if (r.readOnly || r.noWrites) && info.flags&(flagWrite|flagMayReplicate) != 0 {
		kind := "a write command"
		if info.flags&flagWrite == 0 {
			kind = "a command Redis replicates"
		}
		if !r.noWrites {
			at(c.CommandPos, "@readonly script calls %s, %s: EVAL_RO refuses it at run time (remove @readonly or the call)", shown, kind)
		} else {
			fix := "remove the call or the flag"
			if r.readOnly {
				fix = "remove the call, or the flag and @readonly"
			}
			at(c.CommandPos, "the script flag no-writes forbids %s, %s: Redis refuses it at run time (\"ERR Write commands are not allowed from read-only scripts.\"); %s", shown, kind, fix)
		}
	}
	n := 1 + len(c.Args)
	expanding := len(c.Args) > 0 && c.Args[len(c.Args)-1].Expands
	if last := len(c.Args) - 1; last >= 0 && c.Args[last].Gsub {
		at(c.Args[last].Pos, "argument %d of %s is a call of gsub, which gives two values, the string and the count of its replacements: %s gets both, the count as one more argument; wrap the call in parentheses to pass the string alone ((s:gsub(...)))", last+1, shown, shown)
	}
	if expanding {
		// unpack(KEYS) and unpack(ARGV) give the keys or arguments the
		// callers pass: as many as declared, or at least the fixed ones
		// (one at least) before a variadic.
		last := c.Args[len(c.Args)-1]
		if counts := last.GivesOnPaths; last.Unpacks == "" && len(counts) > 1 {
			// A call of a local function whose paths return different
			// counts: the command gets each on some path.
			var bad []string
			for _, k := range counts {
				if !arityOK(info.arity, n+k-1, false) {
					bad = append(bad, strconv.Itoa(n+k-2))
				}
			}
			if len(bad) > 0 {
				passes := make([]string, len(counts))
				for i, k := range counts {
					passes[i] = strconv.Itoa(n + k - 2)
				}
				msg := fmt.Sprintf("wrong number of arguments for %s: it takes %s, the call passes %s (its last argument is a call of a local function whose paths return different numbers of values)", shown, arityText(info.arity), strings.Join(passes, " or "))
				if len(bad) == len(counts) {
					at(c.CommandPos, "%s", msg)
					return
				}
				warn(c.CommandPos, "%s: Redis refuses the call at run time on the paths that pass %s", msg, strings.Join(bad, " or "))
			}
		}
		if last.Unpacks == "" && last.Gives > 0 {
			// A call of a local function that returns as many values on
			// every path: the command gets them all.
			n += last.Gives - 1
			expanding = false
		}
		if m, exact, ok := r.unpacked(last.Unpacks, last.UnpackFrom, last.UnpackTo); ok {
			n += m - 1
			expanding = !exact
			// A variadic's unpack gives nothing of it when the callers
			// pass none: when the command then takes too few arguments,
			// the callers refuse an empty list (Redis would fail the
			// call, after the script's earlier writes). Not when the
			// script reads the list's length, which it may test first
			// (if #KEYS == 0 then return 0 end), or tests an element as
			// far as the command needs (if not ARGV[2] then return end:
			// a test of an element shows nothing of those after it), nor
			// through redis.pcall, which hands the script the error.
			//
			// An unpack from past the fixed ones (unpack(ARGV, 3) after
			// one @arg) skips the list's first values: the callers refuse
			// a list shorter than those and the values the command needs
			// (Param.Min), which an empty check alone let through.
			if params := r.paramsOf(last.Unpacks); !exact && !handsError(c) && arityOK(info.arity, n, true) {
				base := n - m + r.fixedAfter(last.Unpacks, last.UnpackFrom)
				need := 0
				for need <= maxMinCount && !arityOK(info.arity, base+need, false) {
					need++
				}
				skipped := max(max(last.UnpackFrom, 1)-1-(len(params)-1), 0)
				use := countUse{pos: c.CommandPos, sure: c.Sure, name: shown}
				if need > 0 && need <= maxMinCount && !r.measuredPast(last.Unpacks, skipped+need-1) {
					p := &params[len(params)-1]
					p.NonEmpty, p.Min = true, max(p.Min, skipped+need)
					if r.caps != nil {
						use.n = skipped + need
						r.mins[last.Unpacks] = append(r.mins[last.Unpacks], use)
					}
				}
				// A command that takes a fixed number of arguments fails
				// on a list longer than those left it, as on a shorter
				// one: the callers refuse it (Param.Max, see settleCaps).
				// (Not for a command named by a variable that @commands
				// lists several of: another may take any count.)
				// (Not when the script tests an element of the list or
				// reads its length: it may leave before a list that long.)
				if info.arity >= 0 && !(c.Command == "" && len(r.commands) > 1) && r.caps != nil && !r.measuredPast(last.Unpacks, 0) {
					use.n = skipped + info.arity - base
					r.caps[last.Unpacks] = append(r.caps[last.Unpacks], use)
				}
			}
		}
	}
	if a70, ok := arityOn70[info.name]; ok && arityOK(info.arity, n, expanding) && !arityOK(a70, n, expanding) {
		got := fmt.Sprintf("%d", n-1)
		if expanding {
			got = "at least " + got
		}
		at(c.CommandPos, "wrong number of arguments for %s on Redis 7.0: it takes %s there (later versions take %s), the call passes %s", shown, arityText(a70), arityText(info.arity), got)
		return
	}
	if !arityOK(info.arity, n, expanding) {
		got := fmt.Sprintf("%d", n-1)
		if expanding {
			got = "at least " + got
		}
		at(c.CommandPos, "wrong number of arguments for %s: it takes %s, the call passes %s", shown, arityText(info.arity), got)
		return
	}
	checkNumeric(c, info.name, r.args, at, warn)
	checkZRangeBounds(c, info.name, at)
	checkStreamTimes(c, info.name, r.args, at)
	checkOptions(c, info.name, at, warn)
	checkGroups(c, info.name, r, at)
	// One cause per call: the option checks run when the words fit.
	if fits := checkGrammar(c, info.name, at); !fits || checkStreamArgs(c, info.name, at) && checkStreamIDs(c, info.name, at) && checkBitop(c, info.name, at) && checkBitfieldOffsets(c, info.name, at) && checkBitRange(c, info.name, at) {
		checkOptionNeeds(c, info.name, at)
	}
	if !r.clusterUnsafe && !r.noCluster {
		checkSortCluster(c, info.name, at)
		checkDBCluster(c, info.name, at)
	}
	if !r.clusterUnsafe && (info.name == "FLUSHALL" || info.name == "FLUSHDB") {
		// No key spec names what it deletes: every key, those the script
		// never declared among them, which the key checks exist to keep it
		// from touching.
		at(c.CommandPos, "%s deletes every key of the database, keys the script does not declare (@key) among them: a script changes the keys it is passed; mark it @cluster-unsafe if it must clear the database", shown)
	}
	if !checkKeyCount(c, info, shown, at) || r.clusterUnsafe {
		return
	}
	n = 1 + len(c.Args)
	words := make([]string, n)
	literal := make([]bool, n)
	words[0], literal[0] = info.name, true
	for i, a := range c.Args {
		if a.Exact {
			words[i+1], literal[i+1] = *a.Literal, true
		} else if p, _ := argParam(a.Value, r.args); p != nil && !a.Expands {
			switch p.Type.Kind {
			case Int64, Float64, Bool, Duration, Time:
				// A number @arg (1 or 0 for a bool) is no keyword: the
				// words after it are read on (XREAD COUNT ARGV[1]
				// STREAMS ...); "" matches none and is no key count.
				words[i+1], literal[i+1] = "", true
			}
		}
	}
	positions, _ := info.keyPositions(words, literal)
	if i := unreadKeyword(info, words, literal); i > 0 {
		// A string @arg where the command looks for the keyword whose next
		// word is a key (SORT ... STORE, GEORADIUS ... STORE) may be that
		// keyword: a key the callers never declared, which neither the key
		// checks nor Redis Cluster's routing see.
		if p, n := argParam(c.Args[i-1].Value, r.args); p != nil && p.Type.Kind == String {
			at(c.Args[i-1].Pos, "ARGV[%d] (@arg %s string) stands where %s looks for %s, after which it reads a key: the callers may pass that keyword, and then a key they did not declare, which the key checks cannot see and Redis Cluster cannot route; write the options as literals (if ARGV[%d] == 'DESC' then ... else ... end), declare a count or other number int64, which is no keyword, or mark the script @cluster-unsafe", n, p.Name, shown, keyKeywords(info), n)
		}
	}
	for _, p := range positions {
		a := c.Args[p-1]
		if a.Value.Source == parse.SourceKeyChanged {
			at(a.Pos, "key position of %s holds %s, a key the script changed: it is not the key the callers passed, and may hash to another slot, where Redis Cluster fails the call (\"Script attempted to access a non local key in a cluster node\") after the script's earlier writes; pass the key itself in KEYS (declared with @key), extend one only on the right (KEYS[1] .. ':x' keeps its hash tag), or mark the script @cluster-unsafe", shown, a.Value.Text)
		} else if what := keySource(a); what != "" && !(a.Expands && a.Value.Source == parse.SourceUnknown && r.libMisses) {
			at(a.Pos, "key position of %s holds %s: pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe", shown, what)
		} else if a.Value.Source == parse.SourceKey && a.Value.Extended && r.extended != nil {
			*r.extended = append(*r.extended, keyIndex(a.Value.Text))
		}
		if a.Expands {
			break // positions from here on are unknown
		}
	}
}

// unpacked is how many values unpack of table (KEYS or ARGV) gives, from
// index from, to index to (0: to the end): exact when to is given or no
// @key or @arg of it is variadic, else the fixed ones from there (one at
// least, as for any unpack). ok is false for another table, or when the
// script may change the table or its declarations have errors.
func (r scriptRules) unpacked(table string, from, to int) (n int, exact, ok bool) {
	var params []Param
	switch {
	case table == "KEYS" && r.keysKnown:
		params = r.keys
	case table == "ARGV" && r.argsKnown:
		params = r.args
	default:
		return 0, false, false
	}
	if r.changed[table] {
		return 0, false, false
	}
	from = max(from, 1)
	if to > 0 {
		// unpack(t, i, j) gives j-i+1 values, nil for those past the end.
		return max(to-from+1, 0), true, true
	}
	if len(params) > 0 && params[len(params)-1].Variadic {
		return max(len(params)-1-(from-1), 1), false, true
	}
	return max(len(params)-(from-1), 0), true, true
}

// needIndexed makes the generated callers refuse a variadic key or argument
// list too short to hold a, KEYS[n] or ARGV[n] written in place as an
// argument of redis.call past the fixed ones: the script reads nil there
// when the list is shorter, and Redis refuses the call ("Lua redis lib
// command arguments must be strings or integers") after the script's
// earlier writes. Not when the script reads the list's length or tests an
// element of it (if ARGV[3] then), as it may do first, nor when it may
// change the table.
func (r scriptRules) needIndexed(a parse.Arg, c parse.Call) {
	table := "ARGV"
	if a.Value.Source == parse.SourceKey {
		table = "KEYS"
	}
	r.needCount(table, a.Indexed, a, c)
}

// needCount makes the generated callers refuse a variadic key or argument
// list too short to hold table[n] (see needIndexed), which the script
// passes to redis.call as a of c.
func (r scriptRules) needCount(table string, n int, a parse.Arg, c parse.Call) {
	if known := r.argsKnown && table == "ARGV" || r.keysKnown && table == "KEYS"; !known || r.changed[table] || n <= r.measured[table] || !r.variadic(table) {
		return
	}
	params := r.paramsOf(table)
	if fixed := len(params) - 1; n > fixed {
		p := &params[fixed]
		p.NonEmpty, p.Min = true, max(p.Min, n-fixed)
		// Weighed against the most a command that gets the list whole
		// takes (see settleCaps), as a command's fewest are.
		if r.mins != nil {
			name := strings.ToUpper(c.Command)
			if name == "" {
				name = c.Func
			}
			text := a.Value.Text
			if a.Unpacks != "" {
				text = fmt.Sprintf("unpack(%s, %d, %d)", a.Unpacks, max(a.UnpackFrom, 1), a.UnpackTo)
			}
			// (Made on every run, the call may still get the element on
			// some paths only: c and 'z' or ARGV[3].)
			r.mins[table] = append(r.mins[table], countUse{n: n - fixed, pos: a.Pos, sure: c.Sure && !a.IndexedOnPaths, name: text + " in " + name})
		}
	}
}

// needElem makes the generated callers refuse a variadic key or argument
// list too short to hold the element op reads as an operand of arithmetic
// or a concatenation past the fixed ones: Lua fails the script there on
// nil, after its earlier writes. Not when the script reads the list's
// length or tests an element of it, nor when it may change the table.
func (r scriptRules) needElem(op parse.ElemOp) {
	table, n := op.Table, op.N
	if known := r.argsKnown && table == "ARGV" || r.keysKnown && table == "KEYS"; !known || r.changed[table] || n <= r.measured[table] || !r.variadic(table) {
		return
	}
	params := r.paramsOf(table)
	if fixed := len(params) - 1; n > fixed {
		p := &params[fixed]
		p.NonEmpty, p.Min = true, max(p.Min, n-fixed)
		if r.mins != nil {
			r.mins[table] = append(r.mins[table], countUse{n: n - fixed, pos: op.Pos, sure: op.Sure && !op.OnPaths, name: op.Text})
		}
	}
}

// handsError reports whether c hands Redis's error to the script, which
// goes on: a call of redis.pcall, or one in a function passed to pcall
// (parse.Call.Protected); or is never made (parse.Call.Unreached), which
// fails nothing.
func handsError(c parse.Call) bool { return c.Func == "redis.pcall" || c.Protected || c.Unreached }

// maxMinCount bounds the values a command may need from a variadic list
// that the checker looks for (Param.Min); commands need a few at most.
const maxMinCount = 64

// measuredPast reports whether the script reads the length of KEYS or
// ARGV (table), or tests an element of it past its fixed ones and n
// values of the variadic list: it may then leave before a command gets a
// list that short. A test of a fixed one (if ARGV[1] == 'x' then) shows
// nothing of the list.
func (r scriptRules) measuredPast(table string, n int) bool {
	return r.measured[table] > len(r.paramsOf(table))-1+n
}

// paramsOf is the @key (table KEYS) or @arg (ARGV) declarations.
func (r scriptRules) paramsOf(table string) []Param {
	if table == "KEYS" {
		return r.keys
	}
	return r.args
}

// fixedAfter is how many values unpack(table, from) gives of the
// declarations before a variadic last one when the callers pass none
// of it.
func (r scriptRules) fixedAfter(table string, from int) int {
	params := r.paramsOf(table)
	return max(len(params)-1-(max(from, 1)-1), 0)
}

// variadic reports whether the last @key (table KEYS) or @arg (ARGV) is
// variadic.
func (r scriptRules) variadic(table string) bool {
	params := r.args
	if table == "KEYS" {
		params = r.keys
	}
	return len(params) > 0 && params[len(params)-1].Variadic
}

// keyIndex is n for "KEYS[n]", -1 for a dynamic index (KEYS[i], a key of
// ipairs(KEYS): any key), 0 when the text names no key (a local given
// several).
func keyIndex(text string) int {
	rest, ok := strings.CutPrefix(text, "KEYS[")
	if !ok {
		return 0
	}
	rest, ok = strings.CutSuffix(rest, "]")
	if !ok {
		return 0
	}
	if n, err := strconv.Atoi(rest); err == nil && n > 0 {
		return n
	}
	return -1
}

// keySource describes a value in a key position that is not a key, "" for a
// key or a value the checker does not follow.
func keySource(a parse.Arg) string {
	var what string
	switch a.Value.Source {
	case parse.SourceArgv:
		what = a.Value.Text + ", an argument"
		if strings.HasPrefix(a.Value.Text, "unpack(") {
			what = a.Value.Text + ", the arguments"
		}
	case parse.SourceLiteral:
		what = "the literal " + a.Value.Text
	case parse.SourceRedis:
		what = "data read from Redis"
		if a.Value.Text != "" {
			what += " (" + a.Value.Text + ")"
		}
	case parse.SourceNil:
		what = "nil"
	case parse.SourceUnknown:
		what = "a value"
		if a.Value.Text != "" {
			what = a.Value.Text
		}
		what += " the checker cannot trace to KEYS (a table's field, a parameter of a function called out of its sight or given other values, a function's result)"
	}
	return what
}

// accepts is the set of reply shapes a decoder for t reads.
// elemOf is the type the decoder of @return t reads a returned table's
// element i as, and whose it is for messages; ok false: no decoder reads it
// by place (a map of values, a list of records).
func elemOf(t Type, i int) (et Type, whose string, ok bool) {
	switch {
	case t.Kind == Record && i < len(t.Fields):
		return t.Fields[i].Type, fmt.Sprintf("field %s of @return %s", t.Fields[i].Name, t.String()), true
	case t.Kind == StringList || t.Kind == StringMap:
		return Type{Kind: String}, "@return " + t.String(), true
	case t.Kind == Int64List:
		return Type{Kind: Int64}, "@return " + t.String(), true
	}
	return Type{}, "", false
}

func accepts(t Type) replyKind {
	var k replyKind
	switch t.Kind {
	case None:
		return replyStr | replyNil
	case String, Bytes, Float64:
		k = replyStr
	case Int64:
		k = replyInt
	case Bool:
		return replyInt | replyNil
	default:
		k = replyArr
	}
	if t.Nullable {
		k |= replyNil
	}
	return k
}

func wantText(t Type) string {
	if t.Kind == None {
		return "a status, string or nil reply (it reads no value, but checks the shape)"
	}
	switch accepts(t) &^ replyNil {
	case replyInt:
		return "an integer reply"
	case replyStr:
		return "a string reply"
	case replyArr:
		return "an array reply"
	}
	return "a string or nil reply"
}

// callOf is the redis.call site of a ReturnCall, nil for other returns.
func callOf(ret parse.Return, calls []parse.Call) *parse.Call {
	if ret.Kind == parse.ReturnCall && ret.Call >= 0 && ret.Call < len(calls) {
		return &calls[ret.Call]
	}
	return nil
}

// checkOneOf checks the return of a local assigned in nested blocks, which
// may hold any of several values: only when none of them fits @return is it
// an error (which one it holds depends on the path taken).
func checkOneOf(ret parse.Return, calls []parse.Call, t Type, at func(parse.Pos, string, ...any)) {
	var msgs []string
	lines := make([]string, 0, len(ret.Alts))
	for _, alt := range ret.Alts {
		msg := ""
		checkReturn(alt, callOf(alt, calls), calls, t, func(_ parse.Pos, format string, args ...any) {
			if msg == "" {
				msg = fmt.Sprintf(format, args...)
			}
		})
		if msg == "" {
			return // this one fits, or the checker cannot tell
		}
		if slices.Contains(msgs, msg) {
			continue // the same value reached through another local
		}
		msgs = append(msgs, msg)
		if line := strconv.Itoa(alt.From.Line); !slices.Contains(lines, line) {
			lines = append(lines, line) // several values on one line (local a, b = 'x', 'y')
		}
	}
	at(ret.Pos, "%s holds the value assigned at line %s, depending on the path taken, and none fits: %s",
		ret.Local, orList(lines), strings.Join(msgs, "; "))
}

// givenAlts are the values of an and/or expression it may give: those not
// given only when one of the calls before them replies nil, which none does,
// left out.
func givenAlts(alts []parse.Return, calls []parse.Call) []parse.Return {
	var out []parse.Return
	for _, alt := range alts {
		if len(alt.Unless) > 0 && !slices.ContainsFunc(alt.Unless, func(u parse.Return) bool {
			got, _ := replyOf(u, callOf(u, calls), false)
			return got == replyUnknown || got&replyNil != 0
		}) {
			continue // never given: none of the calls before it replies nil
		}
		out = append(out, alt)
	}
	return out
}

// checkEither checks the return of an and/or expression, which gives any of
// its values as the data decides: each must fit @return (the first that
// does not is reported).
func checkEither(ret parse.Return, calls []parse.Call, t Type, at func(parse.Pos, string, ...any)) {
	for _, alt := range givenAlts(ret.Alts, calls) {
		msg := ""
		checkReturn(alt, callOf(alt, calls), calls, t, func(_ parse.Pos, format string, args ...any) {
			if msg == "" {
				msg = fmt.Sprintf(format, args...)
			}
		})
		if msg != "" {
			at(ret.Pos, "returns an and/or expression, which gives either of its values as the data decides, and one does not fit: %s", msg)
			return
		}
	}
}

// checkNumberText warns of an int64 @arg made a Lua number (a double) and
// written back as a string: its digits come back only while it is small;
// and of a float64 @arg so written by Lua (.., tostring), which keeps 14
// significant digits of the 17 the caller sent.
func checkNumberText(nt parse.NumberText, calls []parse.Call, params []Param, warn func(parse.Pos, string, ...any)) {
	p := paramOf(nt.Argv, params)
	if p != nil && p.Type.Kind == Float64 && nt.Op != "arg" {
		how := "concatenated (..)"
		if nt.Op == "tostring" {
			how = "given to tostring"
		}
		warn(nt.Pos, "%s is %s, which writes a number with 14 significant digits: @arg %s float64 1.2345678901234567 comes out as 1.2345678901235; use ARGV[%d] itself, a string, or string.format('%%.17g', ...), which keeps every digit",
			nt.Text, how, p.Name, nt.Argv)
		return
	}
	if p == nil || p.Type.Kind != Int64 {
		return
	}
	const lost = "and above 2^53 (9007199254740992) a Lua number has lost digits already"
	if nt.Op == "arg" {
		cmd := "redis.call"
		if nt.In < len(calls) && calls[nt.In].Command != "" {
			cmd = strings.ToUpper(calls[nt.In].Command)
		}
		warn(nt.Pos, "%s is passed to %s as a number, which Redis writes with 17 significant digits: @arg %s int64 from 1e17 on arrives as 1.2345678901234568e+17, which Redis reads as no integer, %s; pass ARGV[%d] itself, a string",
			nt.Text, cmd, p.Name, lost, nt.Argv)
		return
	}
	how := "concatenated (..)"
	if nt.Op == "tostring" {
		how = "given to tostring"
	}
	warn(nt.Pos, "%s is %s, which writes a number with 14 significant digits: @arg %s int64 from 1e14 on comes out as 1.2345678901235e+17, not its digits, %s; use ARGV[%d] itself, a string, there",
		nt.Text, how, p.Name, lost, nt.Argv)
}

// checkReturnFraction warns of a number that may have a fraction returned
// where @return reads an integer: Redis replies a Lua number as an integer,
// truncated toward zero, so the fraction is dropped without a word (and a
// negative one rounds the other way from math.floor).
func checkReturnFraction(ret parse.Return, t Type, warn func(parse.Pos, string, ...any)) {
	// why ends in what to declare for the string that keeps the fraction:
	// @return float64, []string for a list, or a float64 record field.
	why := func(declare string) string {
		return "which has a fraction unless it comes out even (7 / 2 is 3.5): Redis replies a Lua number as an integer, truncated toward zero (3.5 reaches the caller as 3, -3.5 as -3); round it with math.floor(...) or math.ceil(...), or return string.format('%.17g', ...) and declare " + declare + " to keep the fraction (tostring keeps 14 significant digits)"
	}
	switch t.Kind {
	case Int64:
		what := ret
		if ret.Kind == parse.ReturnOneOf {
			for _, a := range ret.Alts {
				if a.Fraction != "" {
					what = a
					break
				}
			}
		}
		switch {
		case what.Fraction == "":
		case ret.Local != "":
			warn(ret.Pos, "returns %s, assigned at line %d: %s, %s", ret.Local, what.From.Line, what.Fraction, why("@return float64"))
		default:
			warn(ret.Pos, "returns %s, %s", what.Fraction, why("@return float64"))
		}
	case Int64List, Record:
		for i, el := range ret.Elems {
			if el.Fraction == "" || (t.Kind == Record && (i >= len(t.Fields) || t.Fields[i].Type.Kind != Int64)) {
				continue
			}
			declare := "@return []string"
			if t.Kind == Record {
				declare = "field " + t.Fields[i].Name + " float64"
			}
			warn(ret.Pos, "returns an array with %s at [%d], %s", el.Fraction, i, why(declare))
		}
	}
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// checkReturn checks a return statement whose reply shape is known against
// @return; anything else is left alone rather than guessed.
// checkNamedFields refuses a return that gives several values, of which
// Redis replies the first alone, and a returned table with named fields:
// Redis replies the values at 1, 2, ... alone, so the caller never sees them.
func checkNamedFields(ret parse.Return, at func(parse.Pos, string, ...any)) {
	if ret.More > 0 {
		at(ret.Pos, "returns %d values, and Redis replies the first alone: return them in a table ({a, b, ...}) for an array reply", ret.More+1)
	}
	if len(ret.Named) == 0 || ret.Local != "" {
		return
	}
	arrives := "an empty array"
	if ret.Unnamed > 0 {
		arrives = "only the values listed without a name"
	}
	at(ret.Pos, "returns a table with named fields (%s), which Redis drops: it replies a Lua table as the array of its values at 1, 2, ..., so the caller gets %s; list field-value pairs ({'%s', value, ...}) for @return map[string]string, or return cjson.encode of the table",
		strings.Join(ret.Named, ", "), arrives, ret.Named[0])
}

func checkReturn(ret parse.Return, call *parse.Call, calls []parse.Call, t Type, at func(parse.Pos, string, ...any)) {
	want := accepts(t)
	got, what := replyOf(ret, call, false)
	if got == replyUnknown {
		return
	}
	// about starts a message about the value returned, described by what.
	about := func(what string) string {
		switch {
		case ret.End:
			return "can reach the end of the script without a return, which replies " + what
		case ret.Local != "":
			return fmt.Sprintf("returns %s, assigned at line %d: %s", ret.Local, ret.From.Line, what)
		case ret.Kind == parse.ReturnCall:
			return what
		}
		return "returns " + what
	}
	subject := about(what)
	// A reply of one shape (besides nil) must be readable; one whose shapes
	// depend on options (LPOP with a count, ZADD INCR) only needs one of them.
	nonNil := got &^ replyNil
	single := nonNil != 0 && nonNil&(nonNil-1) == 0
	if got&want == 0 || (single && nonNil&want == 0) {
		hint := ""
		switch {
		case got == replyInt && want&replyStr != 0 && ret.Kind == parse.ReturnInt:
			hint = ": Lua numbers reach the caller as integers; return tostring(...)"
		case got == replyStr && want&replyInt != 0 && ret.Kind == parse.ReturnString && (strings.HasPrefix(ret.Text, "ARGV[") || strings.HasPrefix(ret.Text, "KEYS[")):
			hint = ": ARGV and KEYS hold strings, whatever the @arg type; return tonumber(...)"
		case got == replyNil && t.Kind != None:
			hint = fmt.Sprintf(": declare @return %s? for a nullable reply", t.String())
		case ret.Kind == parse.ReturnCall && call != nil && shapeOfCall(strings.ToUpper(ret.Command), call).known:
			if got&replyArr != 0 {
				hint = fmt.Sprintf(": Redis replies a list when the call gives a count; drop the count for one value, or declare @return []string%s", map[bool]string{true: "?"}[got&replyNil != 0])
			} else {
				hint = fmt.Sprintf(": Redis replies one value when the call gives no count; pass a count (%s key 1) for a list, or declare @return string?", strings.ToUpper(ret.Command))
			}
		}
		at(ret.Pos, "%s, but @return %s needs %s%s", subject, t.String(), wantText(t), hint)
		return
	}
	if t.Kind == Bool && t.Nullable && falseBoolean(ret) {
		// Redis replies false as nil, the decoder's "no value".
		what := "a Lua boolean, which Redis replies as nil when it is false"
		at(ret.Pos, "%s, but @return %s reads nil as no value (ok is false), never as false: return 1 or 0 (c and 1 or 0) for false to reach the callers, or declare @return bool, which reads nil as false",
			about(what), t.String())
		return
	}
	if ret.Kind == parse.ReturnCall && t.Kind == Record && call != nil {
		// One value per key or field given: more than the record's fields
		// fail every call.
		if info, ok := lookupCommand(ret.Command); ok {
			if per, ok := perArgReplies[info.name]; ok && len(call.Args) > 0 && !call.Args[len(call.Args)-1].Expands {
				if n := len(call.Args) - per.from + 1; n > len(t.Fields) {
					at(ret.Pos, "%s, but @return %s has %d field%s: the callers get a *DecodeError on every call; read fewer, or add fields to the record",
						about(fmt.Sprintf("%s replies one value per %s given, %d here", info.name, per.what, n)), t.String(), len(t.Fields), plural(len(t.Fields)))
					return
				}
			}
		}
	}
	if ret.Kind == parse.ReturnCall && checkOptionReply(ret, call, t, about, at) {
		return
	}
	if ret.Kind == parse.ReturnCall && got&replyArr != 0 {
		if info, ok := lookupCommand(ret.Command); ok && nilItems(info.name, call) {
			if msg := nilItemsRefused(t); msg != "" {
				at(ret.Pos, "%s, but %s", about(info.name+" replies an array whose elements may be nil (for what it does not find)"), msg)
				return
			}
		}
	}
	if ret.Kind == parse.ReturnCall && got&replyArr != 0 {
		// The elements of a list: strings where the decoder reads integers,
		// or the other way round, fail every call that gives one.
		if info, ok := lookupCommand(ret.Command); ok {
			switch {
			case nestedReplies[info.name] != "" && t.Kind != None:
				at(ret.Pos, "%s, but @return %s reads no array in an array: the callers get a *DecodeError whenever it holds one; build the reply in the script from the values it needs",
					about(info.name+" replies an array holding arrays ("+nestedReplies[info.name]+")"), t.String())
				return
			case intItemReplies[info.name] && (t.Kind == StringList || t.Kind == StringMap):
				at(ret.Pos, "%s, but @return %s reads strings: the callers get a *DecodeError whenever the list holds a value; declare @return []int64, or convert the values in the script (tostring)",
					about(info.name+" replies an array of integers"), t.String())
				return
			case strItemReplies[info.name] && t.Kind == StringMap && info.name != "SORT" && info.name != "SORT_RO":
				// A list of values (SORT's GET patterns may give pairs).
				at(ret.Pos, "%s, but @return %s reads field-value pairs: the callers get a *DecodeError for an odd number of values, and pair the values among themselves otherwise; declare @return []string%s",
					about(info.name+" replies a list of values, not field-value pairs"), t.String(), map[bool]string{true: "?"}[t.Nullable])
				return
			case strItemReplies[info.name] && t.Kind == Int64List:
				at(ret.Pos, "%s, but @return %s reads integers: the callers get a *DecodeError whenever the list holds a value; declare @return []string, or convert the values in the script (tonumber)",
					about(info.name+" replies an array of strings"), t.String())
				return
			case t.Kind == Record && (intItemReplies[info.name] || strItemReplies[info.name] && info.name != "SORT" && info.name != "SORT_RO"):
				// Every element is of one kind: a field that reads the
				// other fails every call whose list reaches it.
				for _, f := range t.Fields {
					k := f.Type.Kind
					if intItemReplies[info.name] && k == String {
						at(ret.Pos, "%s, but @return %s reads field %s as a string: the callers get a *DecodeError whenever the reply holds a value there; declare it int64, or convert the values in the script (tostring)",
							about(info.name+" replies an array of integers"), t.String(), f.Name)
						return
					}
					if strItemReplies[info.name] && (k == Int64 || k == Bool) {
						at(ret.Pos, "%s, but @return %s reads field %s as %s: the callers get a *DecodeError whenever the reply holds a value there; declare it string, or convert the values in the script (tonumber)",
							about(info.name+" replies an array of strings"), t.String(), f.Name, map[bool]string{true: "an integer", false: "a bool"}[k == Int64])
						return
					}
				}
			}
		}
	}
	if t.Kind == Bool && ret.Kind == parse.ReturnCall && got&replyInt != 0 {
		// The decoder reads only 1 and 0: a count or a value (TTL,
		// INCR) fails it whenever it is another integer.
		if name, counts, ok := zeroOne(ret.Command, call); !ok {
			at(ret.Pos, "%s, but @return %s reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64",
				about(name+" replies integers other than 0 and 1"+counts), t.String())
			return
		}
	}
	if t.Kind == Bool && ret.Kind == parse.ReturnInt && ret.Text != "" {
		// Redis truncates a Lua number to an integer; the decoder reads
		// only 1 and 0.
		if n, ok := luaInteger(ret.Text); ok && n != 0 && n != 1 {
			at(ret.Pos, "%s, but @return %s reads only 1 (true) and 0 or nil (false)", subject, t.String())
			return
		}
	}
	if ret.Kind == parse.ReturnArray && t.Kind == Record && ret.Len > len(t.Fields) {
		at(ret.Pos, "returns an array of %d values, but @return %s has %d fields", ret.Len, t.String(), len(t.Fields))
		return
	}
	if ret.Kind == parse.ReturnArray {
		// Elements whose shape is known must fit the field (record) or
		// element type (lists) the decoder reads them as.
		for i, el0 := range ret.Elems {
			et, whose, ok := elemOf(t, i)
			if !ok {
				continue
			}
			elemWant := accepts(et)
			// An and/or gives any of its values as the data decides: each
			// must fit (those it never gives aside).
			alts, either := []parse.Return{el0}, el0.Kind == parse.ReturnEither
			if either {
				alts = givenAlts(el0.Alts, calls)
			}
			for _, el := range alts {
				if et.Kind == Bool && et.Nullable && falseBoolean(el) {
					// Redis replies false as nil, the field's "no value".
					what := "a Lua boolean"
					if el.Local != "" {
						what = fmt.Sprintf("%s, assigned at line %d: %s", el.Local, el.From.Line, what)
					}
					if either {
						what = "an and/or that may give " + what
					}
					at(ret.Pos, "returns an array with %s at [%d], which Redis replies as nil when it is false, but %s reads nil as no value, never as false: put 1 or 0 there (c and 1 or 0) for false to reach the callers, or declare it a bool, which reads nil as false",
						what, i, whose)
					return
				}
				elCall := callOf(el, calls)
				got, what := replyOf(el, elCall, true)
				if got == replyUnknown {
					continue
				}
				// A value that is nil at times (a reply, false) where the
				// decoder reads no nil: a list element, a field that is neither
				// nullable nor bool.
				mayNil := got&replyNil != 0 && elemWant&replyNil == 0 && (el.Kind == parse.ReturnCall || el.Kind == parse.ReturnBool)
				// What it gives when it is not nil must fit too: a nullable
				// field reads nil, not a Lua boolean's 1 where it reads a
				// string.
				fits := got&elemWant != 0 && (got&^replyNil == 0 || got&^replyNil&elemWant != 0)
				if fits && !mayNil {
					continue
				}
				if el.Kind == parse.ReturnCall {
					name, note := strings.ToUpper(el.Command), ""
					if info, ok := calledCommand(el.Command, elCall); ok {
						name = shownName(info.name)
						if s := shapeOfCall(name, elCall); s.known {
							note = s.note
						}
						if _, n, ok := wordShape(name, elCall); ok {
							note = n
						}
					}
					what = fmt.Sprintf("the reply of %s%s (%s)", name, note, got.String())
					if el.Local != "" {
						what = el.Local + ", " + what
					}
				} else if el.Local != "" {
					what = fmt.Sprintf("%s, assigned at line %d: %s", el.Local, el.From.Line, what)
				}
				if either {
					what = "an and/or that may give " + what
				}
				if fits { // mayNil
					when, fix := "it is false", "return 1 or 0 there (c and 1 or 0)"
					if el.Kind == parse.ReturnCall {
						when, fix = strings.ToUpper(el.Command)+" replies nil", "give it a default (redis.call(...) or '')"
					}
					if t.Kind == Record {
						f := t.Fields[i]
						fix = fmt.Sprintf("declare it %s %s?", f.Name, f.Type.String())
					}
					at(ret.Pos, "returns an array with %s at [%d], which is nil when %s, but %s reads no nil there: the callers get a *DecodeError then; %s", what, i, when, whose, fix)
					return
				}
				need := wantText(Type{Kind: kindOfReply(elemWant)})
				if t.Kind != Record {
					need += " for each element"
				}
				at(ret.Pos, "returns an array with %s at [%d], but %s needs %s", what, i, whose, need)
				return
			}
		}
	}
	if ret.Kind == parse.ReturnArray && t.Kind == StringMap && ret.Len%2 == 1 && len(ret.NilElems) == 0 {
		// A fixed odd number of values: one field has no value.
		at(ret.Pos, "returns an array of %d values, but @return %s reads field-value pairs: the callers get a *DecodeError on every call; give every field its value", ret.Len, t.String())
		return
	}
	if ret.Kind == parse.ReturnArray && t.Kind == Record && ret.Len >= 0 {
		// The decoder refuses a reply without a field that is neither
		// nullable nor a bool (missing reads as false).
		for i := ret.Len; i < len(t.Fields); i++ {
			if f := t.Fields[i]; !f.Type.Nullable && f.Type.Kind != Bool {
				values := "values"
				if ret.Len == 1 {
					values = "value"
				}
				at(ret.Pos, "returns an array of %d %s, but @return %s needs field %s at [%d]: declare it %s %s? if it may be missing", ret.Len, values, t.String(), f.Name, i, f.Name, f.Type.String())
				return
			}
		}
	}
	if got&replyNil != 0 && want&replyNil == 0 {
		if ret.Kind == parse.ReturnBool {
			at(ret.Pos, "%s, but @return %s is not nullable: declare @return bool, or @return %s?", subject, t.String(), t.String())
			return
		}
		at(ret.Pos, "%s, but @return %s is not nullable: declare @return %s?", subject, t.String(), t.String())
	}
}

// falseBoolean reports whether a returned value is a Lua boolean that may
// be false (a comparison, not x, a local holding one not tested true
// before). false itself is not: it is how a script gives nil, a bool?'s
// "no value", in an array ({false, n}), and return false is the usual way
// to reply nil.
func falseBoolean(r parse.Return) bool {
	return r.Boolean && r.Kind == parse.ReturnBool && !r.NotNil
}

// nilItems reports whether the array reply of a call c of command name may
// hold nil elements (nilItemReplies): SORT and SORT_RO only through a GET
// pattern other than # (a key it names may be missing), or a word the
// checker cannot read where an option goes, which may be GET; without one
// they reply the elements they sort. BITFIELD only after OVERFLOW FAIL
// (for an INCRBY or SET that would overflow), or a word it cannot read.
func nilItems(name string, c *parse.Call) bool {
	if !nilItemReplies[name] {
		return false
	}
	if name == "BITFIELD" && c != nil {
		return bitfieldMayFail(c)
	}
	if name != "SORT" && name != "SORT_RO" || c == nil {
		return true
	}
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		if !a.Exact || a.Expands {
			return true
		}
		switch strings.ToUpper(*a.Literal) {
		case "BY", "STORE":
			i++
		case "LIMIT":
			i += 2
		case "GET":
			if i+1 >= len(c.Args) || !c.Args[i+1].Exact || *c.Args[i+1].Literal != "#" {
				return true
			}
			i++
		}
	}
	return false
}

// bitfieldMayFail reports whether a BITFIELD call may reply nil elements:
// it sets OVERFLOW FAIL, or has a word the checker cannot read where a
// subcommand or the overflow behaviour goes.
func bitfieldMayFail(c *parse.Call) bool {
	for i := 1; i < len(c.Args); {
		a := c.Args[i]
		if !a.Exact || a.Expands {
			return true
		}
		switch strings.ToUpper(*a.Literal) {
		case "GET":
			i += 3
		case "SET", "INCRBY":
			i += 4
		case "OVERFLOW":
			if i+1 >= len(c.Args) || !c.Args[i+1].Exact || c.Args[i+1].Expands || strings.EqualFold(*c.Args[i+1].Literal, "FAIL") {
				return true
			}
			i += 2
		default:
			return true
		}
	}
	return false
}

// nilItemsRefused says why a decoder for t fails on an array reply whose
// elements may be nil, "" when it reads them: a list or map reads no nil
// element, a record a nil only in a nullable (or bool) field.
func nilItemsRefused(t Type) string {
	switch t.Kind {
	case StringList, Int64List, StringMap:
		return fmt.Sprintf("@return %s reads no nil element: the callers get a *DecodeError when one is missing; return a record of nullable fields ({a string?, b string?}) for a fixed number of values, or replace the nils (false in Lua) in the script (for i = 1, #t do if not t[i] then t[i] = '' end end)", t.String())
	case Record:
		for _, f := range t.Fields {
			if !f.Type.Nullable && f.Type.Kind != Bool {
				return fmt.Sprintf("field %s of @return %s is not nullable: the callers get a *DecodeError when it is missing; declare it %s %s?", f.Name, t.String(), f.Name, f.Type.String())
			}
		}
	}
	return ""
}

// replyOf is the reply shapes a returned value gives (replyUnknown when the
// checker cannot tell) and its description for messages, with its literal
// text. call is the redis.call site of a ReturnCall (nil: unknown). short
// gives the shorter descriptions used for the values of a returned table.
func replyOf(r parse.Return, call *parse.Call, short bool) (replyKind, string) {
	var got replyKind
	var what string
	switch r.Kind {
	case parse.ReturnUnknown:
		if !r.Table {
			return replyUnknown, ""
		}
		// A local holding a table, whatever the script put in it since.
		got, what = replyArr, "an array (a table)"
		if short {
			what = "a table"
		}
	case parse.ReturnNil:
		got, what = replyNil, "nil"
	case parse.ReturnInt:
		got, what = replyInt, "an integer"
	case parse.ReturnString:
		got, what = replyStr, "a string"
	case parse.ReturnArray:
		got, what = replyArr, "an array (a table)"
		if short {
			what = "a table"
		}
	case parse.ReturnBool:
		got, what = replyInt|replyNil, "a Lua boolean (true arrives as 1, false as nil)"
		if short {
			what = "a Lua boolean"
		}
		if r.NotNil {
			got = replyInt // tested before: true
		}
	case parse.ReturnCall:
		info, ok := calledCommand(r.Command, call)
		if !ok || hasSubcommands[info.name] || info.reply == replyUnknown {
			return replyUnknown, ""
		}
		got = info.reply
		if tokens, ok := nilOnlyWith[info.name]; ok && got&replyNil != 0 && !hasToken(call, tokens) {
			got &^= replyNil
		}
		note := ""
		if s := shapeOfCall(info.name, call); s.known {
			got, note = s.kind, s.note
		}
		if k, n, ok := wordShape(info.name, call); ok {
			got, note = k, n
		}
		what = shownName(info.name) + note + " replies " + got.String()
		if r.NotNil {
			// A local tested for nil before: if not v then return ... end.
			got &^= replyNil
		}
	default:
		return replyUnknown, ""
	}
	if r.Text != "" {
		what += " (" + r.Text + ")"
	}
	return got, what
}

// calledCommand is the command a call with the name command runs: for a
// container (OBJECT, XGROUP) with a literal subcommand (call's first
// argument), the subcommand, whose reply schema is its own (OBJECT ENCODING
// replies a string, OBJECT FREQ an integer); else the command itself.
func calledCommand(command string, call *parse.Call) (*commandInfo, bool) {
	info, ok := lookupCommand(command)
	if !ok || !hasSubcommands[info.name] || call == nil || len(call.Args) == 0 || !call.Args[0].Exact {
		return info, ok
	}
	if sub, ok := commandIndex[info.name+"|"+strings.ToUpper(*call.Args[0].Literal)]; ok {
		return sub, true
	}
	return info, true
}

// shownName is a command's name in messages: a subcommand as Redis's
// documentation writes it (OBJECT ENCODING, not OBJECT|ENCODING).
func shownName(name string) string {
	return strings.Replace(name, "|", " ", 1)
}

// perArgReplies are commands whose array reply holds one value per
// argument from argument from (1-based, after the command name) on, what
// they are: as many as the call gives, whatever the data.
var perArgReplies = map[string]struct {
	from int
	what string
}{
	"MGET":       {1, "key"},
	"HMGET":      {2, "field"},
	"ZMSCORE":    {2, "member"},
	"SMISMEMBER": {2, "member"},
	"GEOHASH":    {2, "member"},
}

// nestedReplies are commands whose array reply holds arrays in RESP2, as
// scripts get it, whatever the call's words, and what they are (their
// reply schemas say so, but also of replies that hold pairs only in RESP3,
// such as ZRANGE ... WITHSCORES): no decoder reads them.
// TestNestedRepliesAgreeWithServer runs each on the server.
var nestedReplies = map[string]string{
	"XRANGE":     "entries: an ID and its fields",
	"XREVRANGE":  "entries: an ID and its fields",
	"XREAD":      "a stream's name and its entries",
	"XREADGROUP": "a stream's name and its entries",
	"GEOPOS":     "longitude and latitude",
	"SCAN":       "the cursor, then the keys",
	"SSCAN":      "the cursor, then the members",
	"HSCAN":      "the cursor, then the fields and values",
	"ZSCAN":      "the cursor, then the members and scores",
	"LMPOP":      "the key, then the elements",
	"ZMPOP":      "the key, then the members and scores",
	"XAUTOCLAIM": "the next ID, then the entries claimed and the IDs deleted",
}

// countReplies are commands whose integer reply counts the keys, fields or
// members a call gives, from argument from (1-based, after the command
// name), per words each: with exactly one, the reply is 0 or 1, which their
// reply schemas ("integer") do not say.
var countReplies = map[string]struct {
	from, per int
	what      string
}{
	"EXISTS": {1, 1, "keys"},
	"DEL":    {1, 1, "keys"},
	"UNLINK": {1, 1, "keys"},
	"TOUCH":  {1, 1, "keys"},
	"HDEL":   {2, 1, "fields"},
	"HSET":   {2, 2, "fields"},
	"SADD":   {2, 1, "members"},
	"SREM":   {2, 1, "members"},
	"ZREM":   {2, 1, "members"},
	"XDEL":   {2, 1, "IDs"},
	"XACK":   {3, 1, "IDs"},
}

// zeroOne reports whether the integers command replies are only 0 and 1:
// by its reply schema (zeroOneReplies), or as a count of one (EXISTS with a
// single key, in the call c). name is the command's, counts a note on what
// the reply counts otherwise. An unknown call (c nil) is taken as fine.
func zeroOne(command string, c *parse.Call) (name, counts string, ok bool) {
	info, known := calledCommand(command, c)
	if !known || zeroOneReplies[info.name] || c == nil {
		return command, "", true
	}
	if info.name == "ZADD" {
		counts := zaddCount(c)
		return info.name, counts, counts == ""
	}
	if info.name == "GEOADD" {
		counts := groupCount(c, geoaddOptions, 3)
		return info.name, counts, counts == ""
	}
	cr, isCount := countReplies[info.name]
	if !isCount {
		return shownName(info.name), "", false
	}
	n := len(c.Args)
	if n > 0 && c.Args[n-1].Expands {
		return info.name, fmt.Sprintf(" (it counts the %s given)", cr.what), false
	}
	if count := (n - cr.from + 1) / cr.per; count > 1 {
		return info.name, fmt.Sprintf(" (it counts the %d %s given)", count, cr.what), false
	}
	return info.name, "", true
}

// zaddOptions are ZADD's flags before its score-member pairs; with CH the
// reply counts the members changed, else those added, one pair at most one.
var zaddOptions = []string{"NX", "XX", "GT", "LT", "CH"}

// zaddCount is "" when the ZADD call c gives one score-member pair, else the
// note on what its integer reply counts. An argument that is not a literal
// option is read as part of a pair: were it an option at run time, the pairs
// would be fewer, never more.
func zaddCount(c *parse.Call) string { return groupCount(c, zaddOptions, 2) }

// geoaddOptions are GEOADD's flags before its longitude-latitude-member
// triples, read as ZADD's are.
var geoaddOptions = []string{"NX", "XX", "CH"}

// groupCount is zaddCount for a command whose members come in groups of per
// words after the key and the literal options.
func groupCount(c *parse.Call, options []string, per int) string {
	n := len(c.Args)
	if n > 0 && c.Args[n-1].Expands {
		return " (it counts the members given)"
	}
	words := 0
	for _, a := range c.Args[min(1, n):] {
		if a.Exact && slices.ContainsFunc(options, func(o string) bool { return strings.EqualFold(*a.Literal, o) }) {
			continue
		}
		words++
	}
	if groups := words / per; groups > 1 {
		return fmt.Sprintf(" (it counts the %d members given)", groups)
	}
	return ""
}

// kindOfReply is a reply type whose decoder reads the shapes k (for
// wantText).
func kindOfReply(k replyKind) Kind {
	switch k &^ replyNil {
	case replyInt:
		return Int64
	case replyStr:
		return String
	}
	return StringList
}

// luaInteger is the integer Redis replies for the Lua number literal s
// (truncated toward zero); ok is false when s is not read here.
func luaInteger(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 0, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// nilOnlyWith lists commands whose reply schema has a nil that only an
// option gives (SET NX/XX/GET, ZADD INCR, XADD NOMKSTREAM), or that Redis
// never sends in RESP2 (TYPE answers the status "none" for a missing key):
// without one of these tokens as a literal argument, nil is not expected.
var nilOnlyWith = map[string][]string{
	"SET":  {"NX", "XX", "GET"},
	"ZADD": {"INCR"},
	"XADD": {"NOMKSTREAM"},
	"TYPE": nil,
}

func hasToken(c *parse.Call, tokens []string) bool {
	if c == nil {
		return true // unknown: keep what the schema says
	}
	if info, ok := lookupCommand(c.Command); ok && mayGiveOption(info.name, c) {
		return true
	}
	for _, a := range c.Args {
		if !a.Exact {
			continue
		}
		for _, t := range tokens {
			if strings.EqualFold(*a.Literal, t) {
				return true
			}
		}
	}
	return false
}

// mayGiveOption reports whether a call of a command whose words after its
// fixed ones are options alone (SET) has there a word the checker cannot
// read (an argument, a local: SET k v ARGV[2], mode = nx and 'NX' or 'XX'),
// which may be any option, NX or GET too; a value an option takes (PX's
// milliseconds) is none.
func mayGiveOption(name string, c *parse.Call) bool {
	sig, ok := optionArgs[name]
	if !ok || name != "SET" {
		return false
	}
	for i := sig.fixed; i < len(c.Args); i++ {
		a := c.Args[i]
		if !a.Exact || a.Expands {
			return true
		}
		if o, ok := sig.tokens[strings.ToUpper(*a.Literal)]; ok {
			i += o.values
		}
	}
	return false
}

// checkNumeric checks the arguments of a call that Redis reads as integers
// (or unix times), as the specifications place them (numericArgs): a
// literal that is no integer fails for certain; an @arg of a type whose
// values need not be integers (string, bytes, float64) may fail, a warning;
// a duration or time @arg, sent in milliseconds, where Redis reads seconds
// is off by a factor of 1000, for certain.
func checkNumeric(c parse.Call, name string, params []Param, at, warn func(parse.Pos, string, ...any)) {
	sig, ok := numericArgs[name]
	if !ok {
		return
	}
	shown := strings.ReplaceAll(name, "|", " ")
	i := 0
	if strings.Contains(name, "|") {
		i = 1 // the subcommand
	}
	check := func(a parse.Arg, w argWord, where string) {
		if fractionOK[name+" "+w.name] {
			// The specifications type it as an integer, and Redis reads
			// a double there.
			w.kind = 'd'
		}
		if w.kind == 'd' {
			checkDouble(a, w, where, name, params, at, warn)
			return
		}
		if w.kind != 'i' && w.kind != 'u' {
			return
		}
		seconds := strings.HasSuffix(w.name, "seconds") && !strings.HasSuffix(w.name, "milliseconds")
		if a.Exact {
			if p := luaIntegerProblem(a); p != "" && !fractionOK[name+" "+w.name] && !looseIntegers[name+" "+w.name] {
				at(a.Pos, "%s reads an integer there (%s), and %s", where, w.name, p)
				return
			}
			if refusesInteger(name, w.name, a) {
				at(a.Pos, "%s reads an integer there (%s), and %q is none%s: Redis refuses the call at run time", where, w.name, *a.Literal, strictHint(a))
			} else if v, err := strconv.ParseFloat(*a.Literal, 64); err == nil && v <= 0 && positiveExpiry[where] {
				cmd, _, _ := strings.Cut(where, " ")
				at(a.Pos, "%s reads a positive expire time there (%s), and %s is not: Redis refuses the call at run time (\"invalid expire time in '%s' command\"); to drop the key, use DEL", where, w.name, *a.Literal, strings.ToLower(cmd))
			} else if v, ok := exactInteger(a); ok {
				if limit := expiryBeyond(where, v); limit != "" {
					cmd, _, _ := strings.Cut(where, " ")
					at(a.Pos, "%s reads an expire time there (%s), and %s puts it %s: Redis refuses the call at run time (\"invalid expire time in '%s' command\"), after the script's earlier writes", where, w.name, *a.Literal, limit, strings.ToLower(cmd))
				}
			}
			return
		}
		if a.Fraction != "" && !fractionOK[name+" "+w.name] {
			// Redis 7 sends a Lua number with a fraction as such (1.5).
			warn(a.Pos, "%s reads an integer there (%s), and the argument is %s, which has a fraction unless it comes out even (1500 / 1000 is 1.5): Redis refuses the call then (\"value is not an integer or out of range\"); round it with math.floor(...) or math.ceil(...)", where, w.name, a.Fraction)
			return
		}
		if n := a.Negation; n.Shown != "" && !looseIntegers[name+" "+w.name] {
			// Redis 7 sends the Lua number -0 as "-0", and string2ll
			// reads no integer there (a SCAN cursor's strtoul takes it).
			what, fix := n.Shown, n.Fix
			if n.Local != "" {
				what = fmt.Sprintf("%s (%s, assigned at line %d)", n.Local, n.Shown, n.Line)
				fix = fmt.Sprintf("%s at line %d", fix, n.Line)
			}
			warn(a.Pos, "%s reads an integer there (%s), and the argument is %s, which is -0 when %s is 0 (a Lua number is a double): Redis gets \"-0\" then, which it reads as no integer, and refuses the call at run time, after the script's earlier writes; write %s, which gives 0", where, w.name, what, n.Of, fix)
			return
		}
		p, n := argOf(a, params)
		if p == nil {
			return
		}
		relative := w.kind == 'i' && strings.HasSuffix(w.name, "seconds")
		if (name == "RESTORE" || name == "RESTORE-ASKING") && w.name == "ttl" {
			// RESTORE's ttl is milliseconds, and a unix time in
			// milliseconds after ABSTTL. Either way a string or
			// float64 @arg there is warned of below, as elsewhere.
			abs, known := restoreAbsTTL(c)
			switch {
			case !known:
			case abs && p.Type.Kind == Duration:
				at(a.Pos, "%s reads a unix time there (ttl, after ABSTTL), and ARGV[%d] is @arg %s duration, a length of time: the expiry would fall in January 1970, so Redis restores nothing (and with REPLACE deletes the key); drop ABSTTL for a length of time, or declare @arg %s time", where, n, p.Name, p.Name)
				return
			case !abs && p.Type.Kind == Time:
				at(a.Pos, "%s reads a length of time there (ttl, milliseconds without ABSTTL), and ARGV[%d] is @arg %s time, a unix time: the key would live for decades; add ABSTTL for a unix time, or declare @arg %s duration", where, n, p.Name, p.Name)
				return
			}
		}
		switch {
		case p.Type.Kind == Duration && w.kind == 'u':
			at(a.Pos, "%s reads a unix time there (%s), and ARGV[%d] is @arg %s duration, a length of time: the expiry would fall in January 1970, so Redis deletes the key at once; %s", where, w.name, n, p.Name, swapAt(where, p.Name, "time"))
		case p.Type.Kind == Time && relative && strings.HasSuffix(where, " IDLETIME"):
			// An idle time, not an expiry, and in seconds: a duration
			// would be refused in turn.
			at(a.Pos, "%s reads a length of time there (%s), and ARGV[%d] is @arg %s time, a unix time: the key would look idle for decades, the first to be evicted under an LRU policy; declare @arg %s int64 (seconds)", where, w.name, n, p.Name, p.Name)
		case p.Type.Kind == Time && relative:
			at(a.Pos, "%s reads a length of time there (%s), and ARGV[%d] is @arg %s time, a unix time: the key would live for decades; %s", where, w.name, n, p.Name, swapAt(where, p.Name, "duration"))
		case p.Type.Kind == Duration && seconds:
			at(a.Pos, "%s reads seconds there, and ARGV[%d] is @arg %s duration, sent as milliseconds: it would be 1000 times too long; %s", where, n, p.Name, inMilliseconds(where))
		case p.Type.Kind == Time && seconds:
			at(a.Pos, "%s reads unix seconds there, and ARGV[%d] is @arg %s time, sent as unix milliseconds: it would be 1000 times too far; %s", where, n, p.Name, inMilliseconds(where))
		case p.Type.Kind == Float64 && fractionOK[name+" "+w.name]:
		case p.Type.Kind == String || p.Type.Kind == Bytes || p.Type.Kind == Float64:
			want := "int64"
			switch {
			case w.kind == 'u' && strings.HasSuffix(w.name, "milliseconds"):
				want = "time (sent as unix milliseconds) or int64"
			case strings.HasSuffix(w.name, "milliseconds"):
				want = "duration (sent as milliseconds) or int64"
			}
			warn(a.Pos, "%s reads an integer there (%s), and ARGV[%d] is @arg %s %s: a value that is no integer fails at run time; declare @arg %s %s", where, w.name, n, p.Name, p.Type.String(), p.Name, want)
		}
	}
	for _, w := range sig.fixed {
		if i >= len(c.Args) || c.Args[i].Expands {
			return
		}
		check(c.Args[i], w, shown)
		i++
	}
	if sig.repeat != nil {
		checkRepeated(c.Args[i:], name, sig, shown, params, check, at)
		return
	}
	if sig.tokens == nil {
		return
	}
	for i < len(c.Args) && !c.Args[i].Expands {
		a := c.Args[i]
		i++
		if !a.Exact {
			continue
		}
		token := strings.ToUpper(*a.Literal)
		for _, w := range sig.tokens[token] {
			if i >= len(c.Args) || c.Args[i].Expands {
				return
			}
			check(c.Args[i], w, shown+" "+token)
			i++
		}
	}
}

// checkRepeated checks the words of a command that ends in a repeated group
// after optional keywords (ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member
// [score member ...]). Redis reads keywords for as long as the words are
// keywords, then groups, so the groups start at the first word that is no
// keyword. A word the checker cannot read may be a keyword: it is taken for
// one while the count of the words left says one must be, and the groups are
// checked only when where they start is certain.
func checkRepeated(args []parse.Arg, name string, sig argSig, where string, params []Param, check func(parse.Arg, argWord, string), at func(parse.Pos, string, ...any)) {
	for _, a := range args {
		if a.Expands {
			return // the count of words is unknown
		}
	}
	keyword := func(a parse.Arg) bool { return a.Exact && slices.Contains(sig.pre, strings.ToUpper(*a.Literal)) }
	// mayBeKeyword: a word whose value the checker does not know, unless its
	// @arg type is a number's.
	mayBeKeyword := func(a parse.Arg) bool {
		if a.Exact {
			return keyword(a)
		}
		if p, _ := argParam(a.Value, params); p != nil {
			switch p.Type.Kind {
			case Int64, Float64, Duration, Time, Bool:
				return false
			}
		}
		return true
	}
	j := 0
	var given []string
	for j < len(args) && keyword(args[j]) {
		w := strings.ToUpper(*args[j].Literal)
		for _, g := range given {
			if ex, alts := excludes(name, sig, g, w); ex {
				at(args[j].Pos, "%s takes one of %s, and the call gives %s and %s: Redis refuses the call", where, alts, g, w)
				return
			}
		}
		given = append(given, w)
		j++
	}
	if j < len(args) && args[j].Exact && args[j].NotString == "" && sig.repeat[0].kind != 0 && !numberText(*args[j].Literal, false) {
		// No keyword and no number: a misspelt keyword, or the group's words
		// in the wrong order.
		hint := ""
		if s := closest(strings.ToUpper(*args[j].Literal), sig.pre); s != "" {
			hint = "; did you mean " + s + "?"
		}
		at(args[j].Pos, "%s reads %s there (%s, after the options %s), and %q is neither: Redis refuses the call at run time%s",
			where, numberWord(sig.repeat[0]), sig.repeat[0].name, strings.Join(sig.pre, ", "), *args[j].Literal, hint)
		return
	}
	group := len(sig.repeat)
	left := len(args) - j
	if !wholeGroups(args[j:], group, mayBeKeyword) && len(args) > 0 {
		// Whichever of the words the checker cannot read are options,
		// what is left is no whole number of groups.
		names := make([]string, group)
		for k, w := range sig.repeat {
			names[k] = w.name
		}
		groups := strings.Join(names, " ") + " groups"
		if group == 2 {
			groups = strings.Join(names, " ") + " pairs"
		}
		words := "words"
		if left == 1 {
			words = "word"
		}
		at(args[len(args)-1].Pos, "%s takes %s after %s and its options (%s), and the call gives %d %s there: Redis refuses it at run time (\"ERR syntax error\"), after the script's earlier writes; give every %s its %s",
			where, groups, groupWords(sig.fixed), strings.Join(sig.pre, ", "), left, words, names[group-1], strings.Join(names[:group-1], " and "))
		return
	}
	for left%group != 0 && j < len(args) && mayBeKeyword(args[j]) {
		j++
		left--
	}
	if left == 0 || left%group != 0 {
		return // too few words, or too many: not this check's finding
	}
	if left >= 2*group {
		for k := range group {
			if !mayBeKeyword(args[j+k]) {
				break
			}
			if k == group-1 {
				return // a whole group's worth of words may still be keywords
			}
		}
	}
	if w := singleGroupWith[name]; w != "" && slices.Contains(given, w) && left > group {
		at(args[j+group].Pos, "%s %s takes one group of %s, and the call gives %d: Redis refuses the call", where, w, groupWords(sig.repeat), left/group)
		return
	}
	for k := j; k < len(args); k++ {
		check(args[k], sig.repeat[(k-j)%group], where)
	}
}

// wholeGroups reports whether the words after a command's literal options
// may be a whole number of groups, one or more: Redis reads options for as
// long as the words are options, so any number of the leading words that
// mayBeKeyword may be options rather than part of a group.
func wholeGroups(rest []parse.Arg, group int, mayBeKeyword func(parse.Arg) bool) bool {
	for k := 0; k <= len(rest); k++ {
		if n := len(rest) - k; n > 0 && n%group == 0 {
			return true
		}
		if k < len(rest) && !mayBeKeyword(rest[k]) {
			return false
		}
	}
	return false
}

// excludes reports whether the keywords a and b of a command ending in a
// repeated group exclude each other, with the alternatives to name: one of
// the specifications' groups, or a pair Redis refuses besides
// (extraExclusive).
func excludes(name string, sig argSig, a, b string) (bool, string) {
	if a == b {
		return false, ""
	}
	for _, alt := range sig.alts {
		if slices.Contains(alt, a) && slices.Contains(alt, b) {
			return true, orList(alt)
		}
	}
	for _, pair := range extraExclusive[name] {
		if pair[0] == a && pair[1] == b || pair[0] == b && pair[1] == a {
			return true, orList(pair[:])
		}
	}
	return false, ""
}

// extraExclusive are the keyword pairs of commands ending in a repeated
// group that Redis refuses together though the specifications give them in
// separate groups (ZADD: "GT, LT, and/or NX options at the same time are not
// compatible"): TestNumericArgsAgreeWithServer runs every pair.
var extraExclusive = map[string][][2]string{
	"ZADD": {{"NX", "GT"}, {"NX", "LT"}},
}

// singleGroupWith are the keywords that limit a command to one repeated
// group (ZADD INCR: "INCR option supports a single increment-element pair").
var singleGroupWith = map[string]string{"ZADD": "INCR"}

// groupWords names a repeated group's words: "score member".
func groupWords(ws []argWord) string {
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.name
	}
	return strings.Join(names, " ")
}

// checkDouble checks a word Redis reads as a floating-point number: a
// literal that is none, or an @arg whose callers may send text.
func checkDouble(a parse.Arg, w argWord, where, name string, params []Param, at, warn func(parse.Pos, string, ...any)) {
	open := openRangeOK[name+" "+w.name]
	if a.Exact {
		if a.NotString == "" && !numberText(*a.Literal, open) {
			at(a.Pos, "%s reads %s there (%s), and %q is none: Redis refuses the call at run time", where, numberWord(w), w.name, *a.Literal)
		} else if p := outOfDouble(*a.Literal); p != "" && !a.Number && a.NotString == "" && !open && !longDoubleOK[name+" "+w.name] && w.name != "timeout" {
			at(a.Pos, "%s reads a double there (%s), and %s is %s: Redis refuses the call at run time, after the script's earlier writes; %s", where, w.name, *a.Literal, p, outOfDoubleFix(p))
		} else if f, ok := doubleValue(a); ok && math.IsInf(f, 0) && longDoubleOK[name+" "+w.name] && (a.Number || !outOfDoubleRange(*a.Literal)) {
			// inf, or a Lua number beyond a double (1e400), which Lua sends
			// as inf; a string 1e400 is a long double's.
			at(a.Pos, "%s reads a finite number there (%s), and %s is infinite: Redis refuses the call at run time (%q), after the script's earlier writes; give a finite number", where, w.name, *a.Literal, infiniteIncrement[name])
		} else if r, ok := coordRange[w.name]; ok && coordCommands[name] {
			if f, ok := doubleValue(a); ok && (f < r[0] || f > r[1]) {
				at(a.Pos, "%s reads a %s there, from %s to %s, and %s is out of that range: Redis refuses the call at run time (\"ERR invalid longitude,latitude pair ...\"), after the script's earlier writes", where, w.name, strconv.FormatFloat(r[0], 'f', -1, 64), strconv.FormatFloat(r[1], 'f', -1, 64), *a.Literal)
			}
		} else if w.name == "timeout" {
			checkTimeout(a, where, at)
		}
		return
	}
	p, n := argOf(a, params)
	if p == nil {
		return
	}
	if p.Type.Kind == String || p.Type.Kind == Bytes {
		want := "float64 or int64"
		if open {
			want += " (an exclusive bound's \"(\" must then be added in the script)"
		}
		warn(a.Pos, "%s reads %s there (%s), and ARGV[%d] is @arg %s %s: a value that is no number fails at run time; declare @arg %s %s", where, numberWord(w), w.name, n, p.Name, p.Type.String(), p.Name, want)
	}
}

// checkTimeout refuses a literal blocking timeout (seconds) Redis reads as
// negative: it turns the seconds into whole milliseconds (toward zero, so
// -0.001 and -0 are 0) in a long long, which also wraps negative from 2^63
// milliseconds on (1e16 seconds, inf). TestNumericArgsAgreeWithServer runs
// each side of both ends.
func checkTimeout(a parse.Arg, where string, at func(parse.Pos, string, ...any)) {
	f, ok := doubleValue(a)
	// Near 2^63 milliseconds a double is too coarse: a string is read as a
	// long double, a Lua number is sent as its double.
	ms := big.NewFloat(f)
	if ok && !a.Number && !math.IsInf(f, 0) {
		if v, _, err := big.ParseFloat(*a.Literal, 0, 128, big.ToNearestEven); err == nil {
			ms = v
		}
	}
	switch {
	case !ok:
	case f < -0.001:
		at(a.Pos, "%s reads a timeout there (seconds, 0 or more; a script never blocks, but Redis reads it), and %s is negative: Redis refuses the call at run time (\"ERR timeout is negative\"), after the script's earlier writes; pass 0", where, *a.Literal)
	case math.IsInf(f, 1) || ms.Mul(ms, big.NewFloat(1000)).Cmp(big.NewFloat(math.Exp2(63))) >= 0:
		at(a.Pos, "%s reads a timeout there (seconds, 0 or more; a script never blocks, but Redis reads it), and %s is too large: Redis counts it in milliseconds, which overflow to a negative number, and refuses the call at run time (\"ERR timeout is negative\"), after the script's earlier writes; pass 0", where, *a.Literal)
	}
}

// coordRange are the longitudes and latitudes GEOADD takes: EPSG:3785
// leaves out the poles.
// TestNumericArgsAgreeWithServer runs each end, and just beyond it.
var coordRange = map[string][2]float64{
	"longitude": {-180, 180},
	"latitude":  {-85.05112878, 85.05112878},
}

// coordCommands are the commands that read a longitude and latitude pair
// (GEOSEARCH's and GEOSEARCHSTORE's after FROMLONLAT) and refuse it out of
// coordRange, whether or not the key exists.
var coordCommands = map[string]bool{
	"GEOADD": true, "GEORADIUS": true, "GEORADIUS_RO": true, "GEOSEARCH": true, "GEOSEARCHSTORE": true,
}

// longDoubleOK are the double arguments Redis reads as a long double
// (strtold), which holds 1e400 and 1e-400; score ranges (openRangeOK) are
// read with strtod alone, which gives them inf and 0; a timeout is checked
// by checkTimeout. Elsewhere Redis refuses a number a double does not hold
// (string2d): TestNumericArgsAgreeWithServer runs each.
var longDoubleOK = map[string]bool{
	"INCRBYFLOAT increment":  true,
	"HINCRBYFLOAT increment": true,
}

// infiniteIncrement is the error of each longDoubleOK command for an
// infinite increment (TestInfiniteDoubleAgreesWithServer runs each).
var infiniteIncrement = map[string]string{
	"INCRBYFLOAT":  "ERR increment would produce NaN or Infinity",
	"HINCRBYFLOAT": "ERR value is NaN or Infinity",
}

// outOfDoubleRange reports whether a number written in s is beyond a
// double's largest (1e400), rather than inf itself.
func outOfDoubleRange(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return errors.Is(err, strconv.ErrRange)
}

// outOfDouble says how a number literal strtod reads is out of a double's
// range ("" when it is not): beyond its largest (strtod gives inf, and
// ERANGE), or so small that it rounds to 0 (strtod gives 0, and ERANGE).
func outOfDouble(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		return "beyond a double's largest (about 1.8e308)"
	}
	if err != nil || f != 0 || strings.Contains(s, "_") {
		return ""
	}
	if v, _, err := big.ParseFloat(s, 0, 64, big.ToNearestEven); err == nil && v.Sign() != 0 {
		return "so small that a double rounds it to 0"
	}
	return ""
}

// outOfDoubleFix says what to write for a number outOfDouble finds.
func outOfDoubleFix(problem string) string {
	if strings.HasPrefix(problem, "beyond") {
		return "write inf or -inf, or a smaller number"
	}
	return "write 0, or a larger number"
}

// doubleValue is the number Redis reads from a literal argument (strtod's
// decimal forms), ok false when the checker does not read it.
func doubleValue(a parse.Arg) (float64, bool) {
	if a.Number {
		if f, err := strconv.ParseFloat(*a.Literal, 64); errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
			return f, true // 1e400: Lua holds inf, and sends it so
		}
		return luaNumber(*a.Literal)
	}
	f, err := strconv.ParseFloat(*a.Literal, 64)
	if errors.Is(err, strconv.ErrRange) {
		err = nil // beyond a double: f is inf or -inf, as strtod reads it
	}
	return f, err == nil && !strings.ContainsAny(*a.Literal, "_xXpP")
}

// numberWord names what a number argument holds, for messages.
func numberWord(w argWord) string {
	if w.kind == 'd' {
		return "a number"
	}
	return "an integer"
}

// numberText reports whether Redis reads s as a floating-point number (as
// strtod does: decimal, hex, inf; not nan), with a leading "(" when open (a
// score range's exclusive bound, where leading spaces and an empty bound
// are taken too). A Lua number literal is sent as a number
// whatever its form.
func numberText(s string, open bool) bool {
	if open {
		// A score range is read with strtod alone, which skips leading
		// spaces and reads nothing as 0 ("", "("); blanks alone are none.
		s = strings.TrimPrefix(s, "(")
		if s == "" {
			return true
		}
		if t := strings.TrimLeft(s, " \t\n\v\f\r"); t != "" {
			s = t
		}
	}
	if strings.Contains(s, "_") {
		return false // Go's digit separator, which strtod stops at
	}
	// Base 10: Go's 0b and 0o prefixes are none of strtod's.
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return true
	}
	f, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		return true // beyond a double: commands reading a long double take it
	}
	if err == nil && !math.IsNaN(f) {
		return true
	}
	// strtod reads a hex integer part ParseFloat wants a p exponent for.
	h := strings.TrimLeft(s, "+-")
	if len(h) > 2 && (h[:2] == "0x" || h[:2] == "0X") {
		_, err := strconv.ParseUint(h[2:], 16, 64)
		return err == nil
	}
	return false
}

// openRangeOK are the double arguments Redis also reads with a leading "("
// (an exclusive score bound): TestNumericArgsAgreeWithServer checks them.
var openRangeOK = map[string]bool{
	"ZCOUNT min": true, "ZCOUNT max": true,
	"ZRANGEBYSCORE min": true, "ZRANGEBYSCORE max": true,
	"ZREVRANGEBYSCORE min": true, "ZREVRANGEBYSCORE max": true,
	"ZREMRANGEBYSCORE min": true, "ZREMRANGEBYSCORE max": true,
}

// fractionOK are the arguments the specifications type as integers that
// Redis reads as floating-point numbers ("COMMAND argument-name"):
// TestNumericArgsAgreeWithServer finds them.
var fractionOK = map[string]bool{
	"ZINCRBY increment": true,
}

// looseIntegers are the arguments the specifications type as integers that
// Redis reads with strtol or strtoul ("COMMAND argument-name"), which take
// "01" and "+1": TestNumericArgsAgreeWithServer finds them.
var looseIntegers = map[string]bool{
	"SCAN cursor": true, "HSCAN cursor": true, "SSCAN cursor": true, "ZSCAN cursor": true,
}

// refusesInteger reports whether Redis certainly refuses the literal
// argument a where command name reads the integer argName.
func refusesInteger(name, argName string, a parse.Arg) bool {
	key := name + " " + argName
	switch {
	case fractionOK[key]:
		return false
	case looseIntegers[key]:
		return a.Exact && !integerText(*a.Literal)
	}
	return notInteger(a)
}

// string2ll reads s as Redis reads an integer (string2ll, behind
// getLongLongFromObject): an optional "-", then digits without a leading
// zero (but "0" itself), within int64; no "+", spaces, decimals or
// exponents, so "01", "1.0" and "1e3" are none.
func string2ll(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	d := strings.TrimPrefix(s, "-")
	if d == "" || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// literalInt is the integer Redis reads from a literal argument where it
// reads one: a string literal by string2ll's rules, a Lua number literal by
// its value (Redis sends 1e3 and 1.0 as 1000 and 1). ok is false when a is
// no literal, or Redis reads no integer from it (then notInteger says
// whether that is certain).
func literalInt(a parse.Arg) (int64, bool) {
	if !a.Exact {
		return 0, false
	}
	if !a.Number {
		return string2ll(*a.Literal)
	}
	f, ok := luaNumber(*a.Literal)
	if !ok || f != math.Trunc(f) || math.Abs(f) >= 1<<53 || f == 0 && math.Signbit(f) {
		return 0, false // -0 is sent as "-0" (or 0): luaIntegerProblem's
	}
	return int64(f), true
}

// luaIntegerProblem says why a Lua number literal that is an integer
// (1e17, -0) does not reach Redis as the integer written, "" when it does:
// Redis 7 sends a number argument as %.17g writes it, so -0 is "-0" (which
// string2ll refuses), an integer from 1e17 on has an exponent ("1e+17"),
// and one above 2^53 may have become another in the double Lua holds.
// TestLiteralsAgreeWithServer and TestLuaNumbersSentOnServer run each.
func luaIntegerProblem(a parse.Arg) string {
	if !a.Exact || !a.Number {
		return ""
	}
	lit := *a.Literal
	f, ok := luaNumber(lit)
	if !ok || f != math.Trunc(f) || math.IsInf(f, 0) {
		return "" // a fraction: the integer checks'
	}
	// The error varies with the command ("ERR value is not an integer or
	// out of range", "ERR bit offset is not an integer or out of range").
	const refused = "Redis refuses the call at run time, after the script's earlier writes"
	if f == 0 && math.Signbit(f) {
		return fmt.Sprintf("the Lua number %s is sent as \"-0\", which Redis reads as no integer, or as 0 when the script has a 0 literal before it (Lua 5.1 keeps one constant for both): %s; write 0", lit, refused)
	}
	sent := strconv.FormatFloat(f, 'g', 17, 64)
	written, exact := new(big.Rat).SetString(strings.TrimPrefix(lit, "-"))
	fix := ""
	if exact && written.IsInt() && written.Num().IsInt64() {
		if strings.HasPrefix(lit, "-") {
			written.Neg(written)
		}
		fix = fmt.Sprintf("; write it as a string ('%s')", written.Num())
	}
	switch {
	case strings.Contains(sent, "e"):
		return fmt.Sprintf("the Lua number %s is sent as %q (Redis writes number arguments with %%.17g), which is no integer: %s%s", lit, sent, refused, fix)
	case exact && written.IsInt() && new(big.Rat).SetFloat64(math.Abs(f)).Cmp(new(big.Rat).Abs(written)) != 0:
		return fmt.Sprintf("the Lua number %s is a double, which holds every integer only up to 2^53: Redis gets %q, and reads that without a word%s", lit, sent, fix)
	}
	return ""
}

// notInteger reports whether Redis certainly reads no integer from the
// literal argument a: a string literal string2ll refuses, a Lua number
// literal with a fraction, or from 1e17 on (which Redis gets with an
// exponent).
func notInteger(a parse.Arg) bool {
	if !a.Exact {
		return false
	}
	if !a.Number {
		_, ok := string2ll(*a.Literal)
		return !ok
	}
	f, ok := luaNumber(*a.Literal)
	return ok && (f != math.Trunc(f) || math.Abs(f) >= 1e17) // sent as "1e+17" from 1e17 on
}

// strictHint says why a string literal that reads as a number elsewhere is
// no integer for Redis ("" for others).
func strictHint(a parse.Arg) string {
	if a.Number || !integerText(strings.TrimSpace(*a.Literal)) {
		return ""
	}
	return " (Redis reads an integer's digits alone: no leading zero, \"+\", space, decimal point or exponent)"
}

// luaNumber is the value of a Lua number literal (-1, 1e3, 0x10, .5).
func luaNumber(s string) (float64, bool) {
	neg := strings.HasPrefix(s, "-")
	t := strings.TrimPrefix(s, "-")
	var f float64
	if n, err := strconv.ParseUint(t, 0, 64); err == nil {
		f = float64(n)
	} else if v, err := strconv.ParseFloat(t, 64); err == nil {
		f = v
	} else {
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

// integerText reports whether a literal's text is an integer: an integer,
// or a number with an integral value (1e3).
func integerText(s string) bool {
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return true
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
}

// argParam is the @arg a value is exactly (ARGV[n], passed as it is), with n.
func argParam(v parse.Value, params []Param) (*Param, int) {
	idx, ok := strings.CutPrefix(v.Text, "ARGV[")
	n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
	if v.Source != parse.SourceArgv || v.Derived || !ok || err != nil || n < 1 {
		return nil, 0
	}
	if p := paramOf(n, params); p != nil {
		return p, n
	}
	return nil, 0
}

// argOf is argParam of a's value, or the @arg of the argument a local
// function a is a call of may return (parse.Arg.Returned): Redis gets that
// argument there on some path.
func argOf(a parse.Arg, params []Param) (*Param, int) {
	if p, n := argParam(a.Value, params); p != nil {
		return p, n
	}
	if p := paramOf(a.Returned, params); p != nil {
		return p, a.Returned
	}
	return nil, 0
}

// paramOf is the @arg of ARGV[n] (the variadic one past the last), nil for
// none (n 0: not an argument).
func paramOf(n int, params []Param) *Param {
	switch {
	case n < 1:
	case n <= len(params):
		return &params[n-1]
	case len(params) > 0 && params[len(params)-1].Variadic:
		return &params[len(params)-1]
	}
	return nil
}

// inMilliseconds says how to pass milliseconds instead, where is the
// command (and keyword) that reads seconds.
func inMilliseconds(where string) string {
	if ms, ok := map[string]string{
		"EXPIRE": "PEXPIRE", "EXPIREAT": "PEXPIREAT", "SETEX": "PSETEX",
		"SET EX": "SET PX", "SET EXAT": "SET PXAT", "GETEX EX": "GETEX PX", "GETEX EXAT": "GETEX PXAT",
	}[where]; ok {
		return "use " + ms + ", or declare it int64 (seconds)"
	}
	return "declare it int64 (seconds)"
}

// runsAfterMs is a unix time in milliseconds (2024-01-01) before every
// run of a script: Redis adds the time of the call, at least this, to a
// relative expire time, and refuses one whose sum passes 2^63 - 1.
const runsAfterMs = 1704067200000

// expiryBeyond says where an expire time v, given at where (EXPIRE, SET
// PX, ...), puts the expiry when Redis refuses it for passing the largest
// time it keeps (2^63 - 1 ms from 1970; seconds are multiplied by 1000
// first), "" when it does not or where is no expire time.
func expiryBeyond(where string, v int64) string {
	const past = "past the largest time Redis keeps (2^63 - 1 ms after 1970)"
	switch where {
	case "EXPIRE", "SET EX", "SETEX", "GETEX EX":
		if v > (math.MaxInt64-runsAfterMs)/1000 {
			return "at now + " + strconv.FormatInt(v, 10) + " s, " + past
		}
		if v < math.MinInt64/1000 {
			return "at now - " + strings.TrimPrefix(strconv.FormatInt(v, 10), "-") + " s, which is no time in milliseconds Redis can hold"
		}
	case "PEXPIRE", "SET PX", "PSETEX", "GETEX PX":
		if v > math.MaxInt64-runsAfterMs {
			return "at now + " + strconv.FormatInt(v, 10) + " ms, " + past
		}
	case "EXPIREAT", "SET EXAT", "GETEX EXAT":
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			return "at unix second " + strconv.FormatInt(v, 10) + ", " + past
		}
	}
	return ""
}

// exactInteger is the integer Redis gets for the literal a (a string it
// reads as one, or a Lua number it receives as one), ok false for others.
func exactInteger(a parse.Arg) (int64, bool) {
	if !a.Exact {
		return 0, false
	}
	if !a.Number {
		return string2ll(*a.Literal)
	}
	f, ok := luaNumber(*a.Literal)
	if !ok || f != math.Trunc(f) || math.Abs(f) >= 1e17 || (f == 0 && math.Signbit(f)) {
		return 0, false // sent with an exponent or as -0: not an integer
	}
	return int64(f), true
}

// positiveExpiry are the places where Redis refuses an expire time that is
// not positive (EXPIRE takes one and deletes the key).
var positiveExpiry = map[string]bool{
	"SET EX": true, "SET PX": true, "SET EXAT": true, "SET PXAT": true, "SETEX": true, "PSETEX": true,
	"GETEX EX": true, "GETEX PX": true, "GETEX EXAT": true, "GETEX PXAT": true,
}

// checkStreamTimes refuses a time @arg (unix milliseconds) where a stream
// command reads an idle time, a length in milliseconds (XCLAIM's and
// XAUTOCLAIM's min-idle-time, XCLAIM's and XPENDING's IDLE), and a duration
// where XCLAIM's TIME reads a unix time in milliseconds.
func checkStreamTimes(c parse.Call, name string, params []Param, at func(parse.Pos, string, ...any)) {
	n := len(c.Args)
	if n > 0 && c.Args[n-1].Expands {
		n--
	}
	word := func(i int) string {
		if i >= n || !c.Args[i].Exact {
			return ""
		}
		return strings.ToUpper(*c.Args[i].Literal)
	}
	length := func(i int, where, what, does string) {
		if i >= n {
			return
		}
		if p, k := argParam(c.Args[i].Value, params); p != nil && p.Type.Kind == Time {
			at(c.Args[i].Pos, "%s reads a length of time there (%s), and ARGV[%d] is @arg %s time, a unix time: no entry has been idle that long, so the call never %s one; declare @arg %s duration", where, what, k, p.Name, does, p.Name)
		}
	}
	switch name {
	case "XAUTOCLAIM":
		length(3, name, "min-idle-time, milliseconds", "claims")
	case "XPENDING":
		if word(2) == "IDLE" {
			length(3, "XPENDING IDLE", "min-idle-time, milliseconds", "lists")
		}
	case "XCLAIM":
		length(3, name, "min-idle-time, milliseconds", "claims")
		// IDLE and TIME are no IDs, nor values of the other options.
		for i := 4; i+1 < n; i++ {
			p, k := argParam(c.Args[i+1].Value, params)
			if p == nil {
				continue
			}
			switch word(i) {
			case "IDLE":
				if p.Type.Kind == Time {
					at(c.Args[i+1].Pos, "XCLAIM IDLE reads a length of time there (milliseconds), and ARGV[%d] is @arg %s time, a unix time: the entries' last delivery would be set decades back, or to now; use TIME for a unix time, or declare @arg %s duration", k, p.Name, p.Name)
				}
			case "TIME":
				if p.Type.Kind == Duration {
					at(c.Args[i+1].Pos, "XCLAIM TIME reads a unix time there (milliseconds), and ARGV[%d] is @arg %s duration, a length of time: the entries' last delivery would be set in January 1970; use IDLE for a length of time, or declare @arg %s time", k, p.Name, p.Name)
				}
			}
		}
	}
}

// restoreAbsTTL says whether a RESTORE call gives ABSTTL, and whether the
// checker can tell: every word after the serialized value is a literal (or
// the value of IDLETIME or FREQ).
func restoreAbsTTL(c parse.Call) (abs, known bool) {
	for i := 3; i < len(c.Args); i++ {
		a := c.Args[i]
		if !a.Exact || a.Expands {
			return false, false
		}
		switch strings.ToUpper(*a.Literal) {
		case "ABSTTL":
			abs = true
		case "IDLETIME", "FREQ":
			i++
		}
	}
	return abs, true
}

// swapAt says what to use where a unix time and a length of time are
// mixed up: the command (or keyword) that reads the other, or the @arg type
// that fits.
func swapAt(where, arg, typ string) string {
	pairs := map[string]string{
		"PEXPIRE": "PEXPIREAT", "EXPIRE": "EXPIREAT", "SET PX": "SET PXAT", "SET EX": "SET EXAT",
		"GETEX PX": "GETEX PXAT", "GETEX EX": "GETEX EXAT",
	}
	for rel, abs := range pairs {
		if where == abs {
			return "use " + rel + " for a length of time, or declare @arg " + arg + " " + typ
		}
		if where == rel {
			return "use " + abs + " for a unix time, or declare @arg " + arg + " " + typ
		}
	}
	return "declare @arg " + arg + " " + typ
}

// luaKind is what a compared operand is in Lua: a string (or a status
// reply's table, or false for nil, none of which equals or orders with a
// number), a number (or false for nil), or unknown.
func luaKind(o parse.Operand, calls []parse.Call) (kind byte, what string) {
	kind, what, _ = luaKindNil(o, calls)
	return kind, what
}

// luaKindNil is luaKind, and whether the operand may be false (a nil reply).
func luaKindNil(o parse.Operand, calls []parse.Call) (kind byte, what string, nilable bool) {
	switch o.Type {
	case parse.OperandString:
		return 's', o.Text + ", a string,", false
	case parse.OperandNumber:
		return 'n', o.Text + ", a number,", false
	case parse.OperandReply:
		if o.Call >= len(calls) {
			return 0, "", false
		}
		c := calls[o.Call]
		got := callReplies(&c)
		switch {
		case got == replyUnknown || got&replyArr != 0:
		case got&replyInt == 0:
			return 's', o.Text + ", " + got.String() + " (in Lua a string or a status table" + orFalse(got) + "),", got&replyNil != 0
		case got&replyStr == 0:
			return 'n', o.Text + ", " + got.String() + " (in Lua a number" + orFalse(got) + "),", got&replyNil != 0
		}
	}
	return 0, "", false
}

// callReplies is what a call may reply in a script, the options it is given
// taken into account (SET without NX, XX or GET never replies nil).
func callReplies(c *parse.Call) replyKind {
	got, _ := replyOf(parse.Return{Kind: parse.ReturnCall, Command: c.Command}, c, true)
	return got
}

// checkTruth refuses a truth test of a reply that is never nil: Lua finds
// every value but nil and false true, 0 and an empty list too, so the test
// always passes (or, under not, always fails).
func checkTruth(t parse.Truth, calls []parse.Call, params []Param, at func(parse.Pos, string, ...any)) {
	o := t.Operand
	if o.Type == parse.OperandString {
		// A bool @arg arrives as "1" or "0", both true in Lua.
		if p := paramOf(o.Argv, params); p != nil && p.Type.Kind == Bool && !p.Variadic {
			test, want := o.Text+" is always true as a condition", "== '1'"
			if t.Not {
				test, want = "not "+o.Text+" is always false", "== '0'"
			}
			v, _, _ := strings.Cut(o.Text, " (") // f (ARGV[1]): f
			at(t.Pos, "%s: it is @arg %s bool, which the callers send as \"1\" or \"0\", both strings, and Lua finds every string true (only nil and false are false); compare it: %s %s", test, p.Name, v, want)
		}
		return
	}
	if o.Call >= len(calls) {
		return
	}
	c := calls[o.Call]
	got := callReplies(&c)
	if got == replyUnknown || got&replyNil != 0 {
		return
	}
	pos := t.Pos
	if pos == (parse.Pos{}) {
		pos = c.Pos
	}
	var why, fix string
	switch {
	case statusCall(&c):
		why, fix = "a status reply, a table {ok = ...} in Lua", "compare its ok field (redis.call(...).ok)"
	case got == replyInt:
		why, fix = "an integer, and Lua finds 0 true too", "compare it with a number (== 1, > 0)"
	case got == replyArr:
		why, fix = "a list, and Lua finds an empty one true too", "test its length (#x > 0)"
	default:
		why, fix = got.String()+", never nil", "test what it holds instead"
	}
	test := o.Text + " is always true as a condition"
	if t.Not {
		test = "not " + o.Text + " is always false"
	}
	at(pos, "%s: it is %s (only nil and false are false in Lua, and Redis replies nil as false); %s", test, why, fix)
}

// checkCompareStatus refuses a status reply (TYPE's, SET's without GET)
// compared with a string or a number: it reaches Lua as a table {ok = ...},
// which is never equal to either and cannot be ordered with them.
func checkCompareStatus(c parse.Compare, calls []parse.Call, eq bool, always string, at func(parse.Pos, string, ...any)) bool {
	for _, pair := range [][2]parse.Operand{{c.Left, c.Right}, {c.Right, c.Left}} {
		st, other := pair[0], pair[1]
		if st.Type != parse.OperandReply || st.Call >= len(calls) || !statusCall(&calls[st.Call]) {
			continue
		}
		if other.Type == parse.OperandReply && other.Call < len(calls) && statusCall(&calls[other.Call]) {
			return true // two tables: not this rule's business
		}
		k, what, _ := luaKindNil(other, calls)
		if k == 0 {
			return false // a boolean, nil or unknown: the other rules' business
		}
		what = strings.TrimSuffix(what, ",")
		if eq {
			at(c.Pos, "%s compares %s, a status reply, with %s, but a status reply reaches Lua as a table {ok = ...}, which Lua never finds equal to a string or a number: it is always %s; compare its ok field (redis.call('%s', ...).ok)", c.Op, st.Text, what, always, strings.ToUpper(calls[st.Call].Command))
		} else {
			at(c.Pos, "%s compares %s, a status reply, with %s, but a status reply reaches Lua as a table {ok = ...}, which Lua 5.1 cannot order: Redis fails the script at run time (\"attempt to compare ...\")", c.Op, st.Text, what)
		}
		return true
	}
	return false
}

// statusCall reports whether a call replies a status (a table {ok = ...} in
// Lua) whenever it replies a string: TYPE, PING, SET without GET, and the
// commands and subcommands (XGROUP CREATE) whose reply schema allows no
// other string (statusReplies).
func statusCall(c *parse.Call) bool {
	info, ok := lookupCommand(c.Command)
	if !ok {
		return false
	}
	switch info.name {
	case "TYPE":
		return true // its schema gives a string; Redis answers a status
	case "PING":
		return len(c.Args) == 0 // PONG; a message comes back as a string
	case "SET":
		for _, a := range c.Args[min(2, len(c.Args)):] {
			if !a.Exact || strings.EqualFold(*a.Literal, "GET") {
				return false // a word that may be GET: the old value, a string
			}
		}
		return true
	}
	if len(c.Args) > 0 && c.Args[0].Exact {
		// A container's subcommand (XGROUP CREATE) has a reply of its own.
		if sub := info.name + "|" + strings.ToUpper(*c.Args[0].Literal); statusReplies[sub] {
			return true
		}
	}
	return statusReplies[info.name]
}

// checkCompareTyped refuses what checkCompare cannot see from Lua types
// alone: a boolean literal against a value that is never a boolean, and an
// @arg compared with a string literal its callers never send.
func checkCompareTyped(c parse.Compare, calls []parse.Call, params []Param, at func(parse.Pos, string, ...any)) bool {
	eq := c.Op == "==" || c.Op == "~="
	always := "false"
	if c.Op == "~=" {
		always = "true"
	}
	if c.Left.Type == parse.OperandNil || c.Right.Type == parse.OperandNil {
		o := c.Left
		if o.Type == parse.OperandNil {
			o = c.Right
		}
		if o.Type != parse.OperandReply {
			return true // ARGV[3] == nil: a missing argument is nil
		}
		if eq {
			at(c.Pos, "%s compares %s with nil, but a reply is never nil (Redis turns a nil reply into false): it is always %s; test it with not, or compare with false", c.Op, o.Text, always)
		} else {
			at(c.Pos, "%s compares %s with nil, which Lua 5.1 cannot order: Redis fails the script at run time (\"attempt to compare ...\")", c.Op, o.Text)
		}
		return true
	}
	if checkCompareStatus(c, calls, eq, always, at) {
		return true
	}
	if c.Left.Type == parse.OperandBool || c.Right.Type == parse.OperandBool {
		b, o := c.Left, c.Right
		if o.Type == parse.OperandBool {
			b, o = o, b
		}
		k, what, nilable := luaKindNil(o, calls)
		if k == 0 || nilable || o.Type == parse.OperandBool {
			return o.Type == parse.OperandBool
		}
		fix := "compare with a number (1 or 0)"
		if k == 's' {
			fix = "compare with a string"
		}
		if p := paramOf(o.Argv, params); p != nil && p.Type.Kind == Bool {
			fix = "a bool @arg arrives as \"1\" or \"0\": compare with '1'"
		}
		if eq {
			at(c.Pos, "%s compares %s with %s, a boolean, but Lua never finds a boolean equal to a string or a number: it is always %s; %s", c.Op, what, b.Text, always, fix)
		} else {
			at(c.Pos, "%s compares %s with %s, a boolean, which Lua 5.1 cannot order: Redis fails the script at run time (\"attempt to compare ...\"); %s", c.Op, what, b.Text, fix)
		}
		return true
	}
	if !eq || c.Left.Type != parse.OperandString || c.Right.Type != parse.OperandString {
		return false
	}
	arg, lit := c.Left, c.Right
	if arg.Argv == 0 {
		arg, lit = lit, arg
	}
	if arg.Argv == 0 || lit.Argv != 0 || lit.Text == "" || !strings.HasPrefix(lit.Text, `"`) {
		return false
	}
	p, n := paramOf(arg.Argv, params), arg.Argv
	if p == nil {
		return false
	}
	var sent string
	switch p.Type.Kind {
	case Bool:
		if lit.Literal == "1" || lit.Literal == "0" {
			return false
		}
		sent = "\"1\" or \"0\""
	case Int64, Duration, Time:
		if v, err := strconv.ParseInt(lit.Literal, 10, 64); err == nil && strconv.FormatInt(v, 10) == lit.Literal {
			return false
		}
		sent = map[Kind]string{Int64: "an integer in decimal", Duration: "milliseconds in decimal", Time: "unix milliseconds in decimal"}[p.Type.Kind]
	default:
		return false
	}
	at(c.Pos, "%s compares %s with %s, but ARGV[%d] is @arg %s %s, which the callers send as %s: it is always %s", c.Op, arg.Text, lit.Text, n, p.Name, p.Type.String(), sent, always)
	return true
}

// checkCompare refuses a comparison of a string with a number, which Lua
// 5.1 never converts: < > <= >= fail at run time, == is always false and ~=
// always true. ARGV and KEYS hold strings, whatever @arg type the callers
// take.
func checkCompare(c parse.Compare, calls []parse.Call, params []Param, at func(parse.Pos, string, ...any)) {
	if checkCompareTyped(c, calls, params, at) {
		return
	}
	l, lwhat := luaKind(c.Left, calls)
	r, rwhat := luaKind(c.Right, calls)
	if l == 0 || r == 0 || l == r {
		return
	}
	str := c.Left
	if l == 'n' {
		str = c.Right
	}
	var fix string
	switch {
	case str.Type == parse.OperandReply:
		fix = "convert the reply with tonumber(...)"
	case strings.HasPrefix(str.Text, "ARGV[") || strings.HasPrefix(str.Text, "KEYS["):
		fix = "ARGV and KEYS hold strings, whatever the @arg type: compare tonumber(" + str.Text + ")"
	case strings.HasSuffix(str.Text, "])"):
		name, elem, _ := strings.Cut(strings.TrimSuffix(str.Text, ")"), " (")
		fix = "ARGV and KEYS hold strings, whatever the @arg type: compare tonumber(" + name + "), or assign tonumber(" + elem + ")"
	case strings.HasPrefix(str.Text, `"`):
		if t, err := strconv.Unquote(str.Text); err == nil && integerText(t) {
			fix = "write the number without quotes (" + t + ")"
		} else {
			fix = "compare a number with a number"
		}
	default:
		fix = "convert it with tonumber(...)"
	}
	switch c.Op {
	case "==", "~=":
		always := "false"
		if c.Op == "~=" {
			always = "true"
		}
		at(c.Pos, "%s compares %s with %s but Lua never finds a string equal to a number: it is always %s; %s", c.Op, lwhat, rwhat, always, fix)
	default:
		at(c.Pos, "%s compares %s with %s which Lua 5.1 cannot order: Redis fails the script at run time (\"attempt to compare ...\"); %s", c.Op, lwhat, rwhat, fix)
	}
}

// checkStringOrder warns of an ordering of two strings of which one is a
// number @arg (int64, float64, duration, time): Lua orders strings character
// by character, so "10" < "9", where the script means to compare numbers.
func checkStringOrder(c parse.Compare, calls []parse.Call, params []Param, warn func(parse.Pos, string, ...any)) {
	if c.Op == "==" || c.Op == "~=" {
		return
	}
	l, _ := luaKind(c.Left, calls)
	r, _ := luaKind(c.Right, calls)
	if l != 's' || r != 's' {
		return
	}
	for _, o := range []parse.Operand{c.Left, c.Right} {
		p := paramOf(o.Argv, params)
		if o.Argv == 0 || p == nil {
			continue
		}
		switch p.Type.Kind {
		case Int64, Float64, Duration, Time:
			warn(c.Pos, "%s compares %s with %s as strings, since ARGV[%d] (@arg %s %s) holds its number as text: Lua orders strings character by character, so \"10\" < \"9\"; compare numbers: tonumber(...) on both sides",
				c.Op, c.Left.Text, c.Right.Text, o.Argv, p.Name, p.Type.String())
			return
		}
	}
}

// orFalse says how a nil reply reaches Lua, when the reply can be nil.
func orFalse(k replyKind) string {
	if k&replyNil != 0 {
		return ", or false for nil"
	}
	return ""
}

// shapeField reports whether name is a field of the tables RESP3 hands a
// map, a set, a double, a big number or a verbatim string to Lua as.
func shapeField(name string) bool {
	switch name {
	case "map", "set", "double", "big_number", "verbatim_string":
		return true
	}
	return false
}

// checkFieldRead refuses a named field of a reply that reaches Lua as a
// list (HGETALL's field-value pairs, HMGET's values): its only keys are 1,
// 2, ..., so the field is always nil.
func checkFieldRead(f parse.FieldRead, calls []parse.Call, at func(parse.Pos, string, ...any)) {
	if f.Call >= len(calls) {
		return
	}
	if f.Probed && shapeField(f.Name) {
		// if r.map then ... else ... end, r.set or r: the script reads the
		// reply as either protocol hands it to Lua.
		return
	}
	c := calls[f.Call]
	got := callReplies(&c)
	if got&replyArr == 0 || got&(replyInt|replyStr) != 0 {
		return
	}
	pos := f.Pos
	if pos == (parse.Pos{}) {
		pos = c.Pos
	}
	hint := "index it by position (t[1], t[2], ...)"
	switch strings.ToUpper(c.Command) {
	case "HGETALL":
		hint = "read the field with HGET, or turn the field-value pairs into a table first"
	case "HMGET":
		hint = "the values come in the order of the fields asked for: t[1], t[2], ..."
	}
	at(pos, "%s is always nil: %s replies %s, which reaches Lua as a list indexed 1, 2, ..., with no field %q; %s", f.Text, strings.ToUpper(c.Command), got.String(), f.Name, hint)
}

// tokensNewerThan70 are the keywords Redis 7.0 does not know that the
// specifications give no version for ("COMMAND KEYWORD"):
// TestOptionArgsAgreeWithServer finds them.
var tokensNewerThan70 = map[string]string{
	"HSCAN NOVALUES":     "7.4.0",
	"ZSCAN NOSCORES":     "8.0.0",
	"ZRANK WITHSCORE":    "7.2.0",
	"ZREVRANK WITHSCORE": "7.2.0",
}

// looseOptions are the commands that take words their specifications do
// not list where options go (LOLWUT passes them to its drawing):
// TestOptionArgsAgreeWithServer finds them.
var looseOptions = map[string]bool{
	"LOLWUT": true,
}

// checkGroups refuses a call whose words after the fixed ones do not come
// in whole groups (HSET key field value field): Redis refuses it ("wrong
// number of arguments"). A last argument that gives any number of values
// (unpack(t)) leaves the count unknown: when it is a variadic key or
// argument list to its end (unpack(ARGV)), the callers refuse a count that
// leaves a group short (Param.Group), unless the script reads the list's
// length, which it may test first, calls the command through redis.pcall,
// which hands it the error, or names it in a variable that @commands lists
// several commands for.
func checkGroups(c parse.Call, name string, r scriptRules, at func(parse.Pos, string, ...any)) {
	sig, ok := groupArgs[name]
	if !ok || len(c.Args) == 0 {
		return
	}
	first := len(sig.fixed)
	if strings.Contains(name, "|") {
		first++ // the subcommand
	}
	n := len(c.Args) - first
	if last := c.Args[len(c.Args)-1]; last.Expands && last.Unpacks == "" && last.Gives > 0 {
		// unpack({'f', 'v'}), or a call of a local function that returns
		// as many values on every path: the command gets them all.
		n += last.Gives - 1
	} else if m, exact, ok := r.unpacked(last.Unpacks, last.UnpackFrom, last.UnpackTo); last.Expands && ok && exact {
		// unpack(ARGV) of the arguments declared, none variadic, or
		// unpack(ARGV, i, j): that many.
		n += m - 1
	} else if last.Expands {
		// (Not for a command named by a variable that @commands lists
		// several of: another may take any count, SADD key member ....
		// One alone is the command the call runs.)
		if last.Unpacks == "" || last.UnpackTo != 0 || !r.variadic(last.Unpacks) || r.measuredPast(last.Unpacks, 0) || handsError(c) || c.Command == "" && len(r.commands) > 1 {
			return
		}
		// The words in groups before the variadic's values: those written
		// before the unpack, and the fixed keys or arguments it gives first.
		before := len(c.Args) - 1 + r.fixedAfter(last.Unpacks, last.UnpackFrom) - first
		params := r.paramsOf(last.Unpacks)
		// An unpack from past the fixed ones (unpack(ARGV, 3) after one
		// @arg) leaves out the variadic's first values: the command
		// gets the count less those.
		skipped := max(max(last.UnpackFrom, 1)-1-(len(params)-1), 0)
		if g := len(sig.words); before >= 0 && g > 1 && len(params) > 0 && r.groups != nil {
			// Each command that gets the list puts its own condition on
			// the count (HSET of every argument, and of those after the
			// first): settleGroups weighs them all.
			r.groups[last.Unpacks] = append(r.groups[last.Unpacks], groupUse{
				count: GroupCount{Size: g, Rem: ((skipped-before)%g + g) % g},
				pos:   c.CommandPos, sure: c.Sure, name: strings.ReplaceAll(name, "|", " "),
			})
		}
		return
	}
	if n < 0 || n%len(sig.words) == 0 {
		return
	}
	groups := strings.Join(sig.words, " ") + " groups"
	if len(sig.words) == 2 {
		groups = strings.Join(sig.words, " ") + " pairs"
	}
	if len(sig.fixed) > 0 {
		groups += " after " + strings.Join(sig.fixed, " ")
	}
	at(c.CommandPos, "%s takes %s, and the call gives %d words there: Redis refuses it at run time (wrong number of arguments); give every %s its %s",
		strings.ReplaceAll(name, "|", " "), groups, n, sig.words[0], strings.Join(sig.words[1:], " and "))
}

// groupUse is the condition a command that takes its words in groups puts
// on the count of the variadic list it gets through unpack.
type groupUse struct {
	count GroupCount
	pos   parse.Pos // of the command name
	sure  bool      // parse.Call.Sure: every run makes the call
	name  string    // the command
}

// meets reports whether some count meets both conditions: their
// remainders agree by the greatest divisor of both sizes.
func (u groupUse) meets(o groupUse) bool {
	d := gcd(u.count.Size, o.count.Size)
	return u.count.Rem%d == o.count.Rem%d
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// countText says which counts a condition allows.
func countText(gc GroupCount) string {
	if gc.Size == 2 {
		return [...]string{"an even count", "an odd count"}[gc.Rem]
	}
	return fmt.Sprintf("a count that leaves %d when divided by %d", gc.Rem, gc.Size)
}

// settleGroups puts on each variadic list the conditions on its count that
// the commands getting it in groups make (Param.Group), checked by the
// generated callers. Two that no count meets, both made by calls every run
// makes, fail every run: refused. A call under a branch the checker cannot
// decide may not run: its condition is left out when no count meets it and
// another's, since the callers, which cannot tell which runs, would refuse
// every count; when the other's call runs on every run, the branch can
// never succeed: warned of.
func settleGroups(r scriptRules, at, warn func(parse.Pos, string, ...any)) {
	for _, table := range []string{"KEYS", "ARGV"} {
		uses, params := r.groups[table], r.paramsOf(table)
		if len(uses) == 0 || len(params) == 0 {
			continue
		}
		p := &params[len(params)-1]
		var kept []GroupCount
		refused := false
		for i, u := range uses {
			keep := true
			for j, o := range uses {
				if i == j || u.meets(o) || !keep {
					continue
				}
				switch {
				case u.sure && o.sure:
					if j < i && !refused {
						refused = true
						at(u.pos, "%s (line %d) needs %s of %s, and %s (line %d) needs %s: every run makes both calls, so Redis refuses one of them whatever the count (wrong number of arguments), after the script's earlier writes; give both the list with words that agree",
							u.name, u.pos.Line, countText(u.count), p.Name, o.name, o.pos.Line, countText(o.count))
					}
				case u.sure:
					// o is left out.
				case o.sure:
					keep = false
					warn(u.pos, "%s (line %d) needs %s of %s, but %s (line %d), which every run makes, needs %s: where the script makes line %d, Redis refuses one of them whatever the count (wrong number of arguments), after the script's earlier writes; the generated callers check the count for line %d",
						u.name, u.pos.Line, countText(u.count), p.Name, o.name, o.pos.Line, countText(o.count), u.pos.Line, o.pos.Line)
				default:
					keep = false
				}
			}
			if keep && !slices.Contains(kept, u.count) {
				kept = append(kept, u.count)
			}
		}
		if len(kept) > 0 {
			p.Group, p.GroupRem, p.MoreGroups = kept[0].Size, kept[0].Rem, kept[1:]
		}
	}
}

// countUse is the fewest (mins) or most (caps) values of a variadic list a
// command that gets it whole through unpack takes, n; or, in mins, the
// fewest an element read in place as an argument (KEYS[3]) needs.
type countUse struct {
	n    int
	pos  parse.Pos // of the command name, or of the element
	sure bool      // parse.Call.Sure: every run makes the call
	name string    // the command, or the element in it (KEYS[3] in SET)
}

// settleCaps sets the most values of each variadic list the generated
// callers take (Param.Max) and the fewest (Param.Min): the fewest of the
// caps the commands that get it whole put on it, and the most of the mins
// (those commands' fewest, and elements read in place). A min above a cap
// would make the callers refuse every count: when both calls are made on
// every run, no count succeeds, and the script is refused. A cap every run
// meets puts a path needing more out of reach: its min is left out
// (warned of), or the callers would take only counts that fail and refuse
// those the script handles; a min every run needs does so to a path
// taking fewer: its cap is left out. Two calls made only on some paths,
// which the callers cannot tell apart (GET of unpack(KEYS) in one branch,
// RENAME of it in the other), leave out both the min and the cap that
// disagree: the callers take every count one of the paths runs.
func settleCaps(r scriptRules, at, warn func(parse.Pos, string, ...any)) {
	for _, table := range []string{"KEYS", "ARGV"} {
		params := r.paramsOf(table)
		if len(r.caps[table]) == 0 || len(params) == 0 {
			continue
		}
		p := &params[len(params)-1]
		mins, caps := r.mins[table], r.caps[table]
		refused := false
		for _, c := range caps {
			for _, m := range mins {
				if m.sure && c.sure && m.n > c.n && !refused {
					refused = true
					at(m.pos, "%s (line %d) needs %d values of %s at least, and %s (line %d) takes %d at most: every run makes both calls, so Redis refuses one of them whatever the count (wrong number of arguments), after the script's earlier writes",
						m.name, m.pos.Line, m.n, p.Name, c.name, c.pos.Line, c.n)
				}
			}
		}
		// First against the calls every run makes: what disagrees with
		// them never succeeds.
		var sure *countUse
		for i, c := range caps {
			if c.sure && (sure == nil || c.n < sure.n) {
				sure = &caps[i]
			}
		}
		droppedMin, droppedCap := make([]bool, len(mins)), make([]bool, len(caps))
		warned := map[countUse]bool{}
		for i, m := range mins {
			if m.sure || sure == nil || m.n <= sure.n {
				continue
			}
			droppedMin[i] = true
			if !refused && !warned[m] { // (checkHeldLiterals checks a call again)
				warned[m] = true
				warn(m.pos, "%s (line %d) needs %d values of %s at least, but %s (line %d), which every run makes, takes %d at most: where the script makes line %d, Redis refuses one of them whatever the count (wrong number of arguments), after the script's earlier writes; the generated callers check the count for line %d",
					m.name, m.pos.Line, m.n, p.Name, sure.name, sure.pos.Line, sure.n, m.pos.Line, sure.pos.Line)
			}
		}
		for j, c := range caps {
			var need *countUse
			for i, m := range mins {
				if m.sure && m.n > c.n && (need == nil || m.n > need.n) {
					need = &mins[i]
				}
			}
			if c.sure || need == nil {
				continue
			}
			droppedCap[j] = true
			if !refused && !warned[c] {
				warned[c] = true
				warn(c.pos, "%s (line %d) takes %d values of %s at most, but %s (line %d), which every run makes, needs %d at least: where the script makes line %d, Redis refuses one of them whatever the count (wrong number of arguments), after the script's earlier writes; the generated callers check the count for line %d",
					c.name, c.pos.Line, c.n, p.Name, need.name, need.pos.Line, need.n, c.pos.Line, need.pos.Line)
			}
		}
		// Then the calls made only on some paths against each other.
		condMin, condCap := slices.Clone(droppedMin), slices.Clone(droppedCap)
		for i, m := range mins {
			for j, c := range caps {
				if !m.sure && !c.sure && !droppedMin[i] && !droppedCap[j] && m.n > c.n {
					condMin[i], condCap[j] = true, true
				}
			}
		}
		fewest := 0
		for i, m := range mins {
			if !condMin[i] {
				fewest = max(fewest, m.n)
			}
		}
		if !refused && p.NonEmpty && fewest < p.Min {
			// (Every Min comes from r.mins.)
			p.NonEmpty, p.Min = fewest > 0, fewest
		}
		for j, c := range caps {
			if condCap[j] || p.NonEmpty && c.n < max(p.Min, 1) {
				continue
			}
			if !p.Capped || c.n < p.Max {
				p.Capped, p.Max = true, c.n
			}
		}
		// A command taking its words in groups that every run makes
		// with the list, against a cap every run meets: when no count
		// from the fewest every run needs to the cap makes whole groups,
		// no count succeeds (HSET k a b of unpack(ARGV), even, and HGET k
		// of it, one), and the callers would refuse every count.
		least := 0
		for _, m := range r.mins[table] {
			if m.sure {
				least = max(least, m.n)
			}
		}
		for _, c := range r.caps[table] {
			for _, g := range r.groups[table] {
				if !c.sure || !g.sure || refused {
					continue
				}
				ok := false
				for n := least; n <= c.n && !ok; n++ {
					ok = n%g.count.Size == g.count.Rem
				}
				if !ok {
					refused = true
					at(g.pos, "%s (line %d) needs %s of %s, and %s (line %d) takes %d at most: every run makes both calls, so Redis refuses one of them whatever the count (wrong number of arguments), after the script's earlier writes",
						g.name, g.pos.Line, countText(g.count), p.Name, c.name, c.pos.Line, c.n)
				}
			}
		}
	}
}

// checkOptions checks the words after a command's fixed ones, where the
// specifications allow only keywords (optionArgs): a literal that is none of
// them, or one Redis 7.0 lacks, makes Redis refuse the call. A word the
// checker cannot read (an argument, an expression) ends the check: from
// there on it cannot tell keywords from their values.
func checkOptions(c parse.Call, name string, at, warn func(parse.Pos, string, ...any)) {
	if last := len(c.Args) - 1; last >= 0 && c.Args[last].Expands && c.Args[last].OnPaths != nil {
		// A call of a local function last: the command gets the values of
		// each of its returns on some path. An option refused on every
		// path is refused; on some, it fails on those paths only.
		checkOptionPaths(c, name, at, warn)
		return
	}
	sig, ok := optionArgs[name]
	if !ok || looseOptions[name] {
		return
	}
	shown := strings.ReplaceAll(name, "|", " ")
	i := sig.fixed
	if strings.Contains(name, "|") {
		i++ // the subcommand
	}
	chosen := map[int]string{} // group → the alternative given
	for i < len(c.Args) {
		a := c.Args[i]
		if !a.Exact || a.Expands {
			return
		}
		word := strings.ToUpper(*a.Literal)
		t, known := sig.tokens[word]
		if !known {
			names := slices.Sorted(maps.Keys(sig.tokens))
			hint := ""
			if s := closest(word, names); s != "" {
				hint = "; did you mean " + s + "?"
			}
			at(a.Pos, "%q is no option of %s, which takes %s there: Redis refuses the call (\"ERR syntax error\")%s", *a.Literal, shown, orList(names), hint)
			return
		}
		since := t.since
		if v, ok := tokensNewerThan70[shown+" "+word]; ok {
			since = v
		}
		if newerThan70(since) {
			at(a.Pos, "%s's option %s is not in Redis 7.0 (it is in the specifications since %s): scripts must run on Redis 7.0", shown, word, since)
			return
		}
		if first, ok := chosen[t.group]; ok && t.group != 0 && first != word && exclusiveChecked[name] && !compatibleOptions[optionPair(shown, first, word)] {
			at(a.Pos, "%s takes one of %s, and the call gives %s and %s: Redis refuses the call", shown, orList(groupOf(sig, t.group)), first, word)
			return
		}
		chosen[t.group] = word
		if next := i + 1 + t.values; next > len(c.Args) && !c.Args[len(c.Args)-1].Expands {
			values := "a value"
			if t.values > 1 {
				values = fmt.Sprintf("%d values", t.values)
			}
			at(a.Pos, "%s's option %s takes %s after it, and the call gives %d: Redis refuses the call (\"ERR syntax error\")", shown, word, values, len(c.Args)-i-1)
			return
		}
		i += 1 + t.values
	}
}

// optionProblem is what checkOptions reports of one path of a call.
type optionProblem struct {
	pos parse.Pos
	msg string
}

// checkOptionPaths is checkOptions for a call whose last argument is a call
// of a local function whose returns are known (Arg.OnPaths): each return
// gives the command other arguments.
func checkOptionPaths(c parse.Call, name string, at, warn func(parse.Pos, string, ...any)) {
	last := c.Args[len(c.Args)-1]
	var found [][]optionProblem
	failing := 0
	for _, vals := range last.OnPaths {
		p := c
		p.Args = append(slices.Clone(c.Args[:len(c.Args)-1]), vals...)
		var probs []optionProblem
		collect := func(pos parse.Pos, format string, args ...any) {
			probs = append(probs, optionProblem{last.Pos, fmt.Sprintf(format, args...)})
		}
		checkOptions(p, name, collect, collect)
		if len(probs) > 0 {
			failing++
		}
		found = append(found, probs)
	}
	if failing == 0 {
		return
	}
	seen := map[string]bool{}
	for _, probs := range found {
		for _, p := range probs {
			if seen[p.msg] {
				continue
			}
			seen[p.msg] = true
			if failing == len(found) {
				at(p.pos, "%s (the last argument is a call of a local function: on every path)", p.msg)
			} else {
				warn(p.pos, "%s, on the paths where the last argument, a call of a local function, gives those values", p.msg)
			}
		}
	}
}

// exclusiveChecked are the commands whose groups of alternatives
// TestOptionArgsAgreeWithServer has run against Redis: only their
// alternatives are held exclusive (GEORADIUS, which it cannot run with
// plain words, takes ASC and DESC together, the last one winning).
var exclusiveChecked = map[string]bool{
	"EXPIRE": true, "EXPIREAT": true, "PEXPIRE": true, "PEXPIREAT": true, "GETEX": true,
	"SET": true, "ZRANGE": true, "ZRANGESTORE": true, "GEODIST": true, "FLUSHALL": true, "FLUSHDB": true,
}

// compatibleOptions are the alternatives of one group the specifications
// give as exclusive that Redis accepts together ("COMMAND A B", A < B):
// TestOptionArgsAgreeWithServer finds them.
var compatibleOptions = map[string]bool{
	// NX excludes XX, GT and LT, and GT excludes LT; XX goes with either.
	"EXPIRE GT XX": true, "EXPIRE LT XX": true,
	"EXPIREAT GT XX": true, "EXPIREAT LT XX": true,
	"PEXPIRE GT XX": true, "PEXPIRE LT XX": true,
	"PEXPIREAT GT XX": true, "PEXPIREAT LT XX": true,
}

// optionPair is the compatibleOptions key of two options of a command.
func optionPair(command, a, b string) string {
	if b < a {
		a, b = b, a
	}
	return command + " " + a + " " + b
}

// groupOf lists the alternatives of group, sorted.
func groupOf(sig optionSig, group int) []string {
	var names []string
	for n, t := range sig.tokens {
		if t.group == group {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// closest is the name nearest to word by edit distance, "" when none is
// near (a quarter of the longer word, at least 1).
func closest(word string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		d := editDistance(word, n)
		if limit := max(1, max(len(word), len(n))/4); d <= limit && (best == "" || d < bestD) {
			best, bestD = n, d
		}
	}
	return best
}

// checkOperation refuses a reply used where Lua fails on the value it is in
// Lua: arithmetic, .. or an ordering on a table (an array reply, a status
// reply's {ok = ...}), # of a number; and warns of one that fails when the
// reply is nil, which Lua sees as false (nil after tonumber), unless the
// script read the local holding it in between (a test, a default).
//
// The warning is left out when a call before this one names the same key
// (and the same field or member, for a reply that is nil for a missing one):
// the script may know by then that the value is there (EXISTS, TYPE,
// HEXISTS, a write), which the checker does not follow.
func checkOperation(o parse.Operation, calls []parse.Call, at, warn func(parse.Pos, string, ...any)) {
	if o.Operand.Call >= len(calls) {
		return
	}
	c := calls[o.Operand.Call]
	got := callReplies(&c)
	if got == replyUnknown {
		return
	}
	status := statusCall(&c)
	cmd := strings.ToUpper(c.Command)
	if o.Op == "arg" {
		checkCallArg(o, c, got, status, calls, at, warn)
		return
	}
	if strings.HasPrefix(o.Op, ":") || strings.Contains(o.Op, ".") && o.Op != ".." {
		checkStringUse(o, c, got, status, calls, at, warn)
		return
	}
	var subject, verb string
	order := false
	switch o.Op {
	case "..":
		subject, verb = "concatenation (..) of "+o.Operand.Text, "concatenate"
	case "#":
		subject, verb = "# of "+o.Operand.Text, "get length of"
	case "<", "<=", ">", ">=":
		subject, verb, order = o.Op+" compares "+o.Operand.Text, "compare", true
	default:
		subject, verb = "arithmetic ("+o.Op+") on "+o.Operand.Text, "perform arithmetic on"
	}
	name, local := operandLocal(o)
	fails := func(what string) string {
		if order {
			shown := map[string]string{"boolean": "false", "nil": "nil", "table": "a table"}[what]
			return "on " + shown + ` ("attempt to compare ...")`
		}
		if local {
			return `("attempt to ` + verb + " local '" + name + "' (a " + what + ` value)")`
		}
		return `("attempt to ` + verb + " a " + what + ` value")`
	}
	fix := func(def string) string { return nilFix(name, local, def) }
	mayNil := mayNilWarning(o, calls, warn)
	if o.Tonumber {
		never := status || got&(replyInt|replyStr) == 0
		switch {
		case o.Op == "#":
			at(o.Pos, "%s: tonumber gives a number or nil, and Lua fails the script at run time on either (\"attempt to get length of a number value\")", subject)
		case never:
			at(o.Pos, "%s, which is always nil (%s replies %s, and tonumber gives nil for a table and for false): Lua fails the script at run time %s", subject, cmd, replyText(got, status), fails("nil"))
		case got&(replyNil|replyArr) != 0:
			mayNil("%s, which is nil when %s replies nil: Lua fails the script at run time %s; %s", subject, cmd, fails("nil"), fix("tonumber(redis.call(...) or '0')"))
		}
		return
	}
	if o.Op == "#" {
		switch {
		case got&(replyStr|replyArr) == 0:
			at(o.Pos, "%s, %s: Lua fails the script at run time on a number %s; the reply is the number itself", subject, replyText(got, status), fails("number"))
		case got&replyNil != 0:
			mayNil("%s, which is false when %s replies nil: Lua fails the script at run time %s; %s", subject, cmd, fails("boolean"), fix("redis.call(...) or ''"))
		}
		return
	}
	table := status || got&(replyInt|replyStr) == 0
	switch {
	case order && (table || got&replyStr != 0):
		// A table, or a string: the comparison rules' business.
	case table:
		at(o.Pos, "%s, %s: Lua fails the script at run time %s", subject, replyText(got, status), fails("table"))
	case got&replyNil != 0:
		def := "redis.call(...) or 0"
		if o.Op == ".." {
			def = "redis.call(...) or ''"
		}
		mayNil("%s, which is false when %s replies nil: Lua fails the script at run time %s; %s", subject, cmd, fails("boolean"), fix(def))
	}
}

// checkResp3Operation refuses an operation on the reply of a call made
// after redis.setresp(3) (resp3 gives its line) that is then a double
// (ZSCORE, ZINCRBY, ZADD INCR): Redis hands it to Lua as a table
// {double = 1.5}, on which Lua computes nothing.
func checkResp3Operation(o parse.Operation, calls []parse.Call, resp3 func(parse.Pos) int, at func(parse.Pos, string, ...any)) {
	if o.Operand.Call < 0 || o.Operand.Call >= len(calls) {
		return
	}
	c := calls[o.Operand.Call]
	line := resp3(c.Pos)
	info, ok := calledCommand(c.Command, &c)
	if line == 0 || !ok {
		return
	}
	if o.Op == "#" && !o.Tonumber && (resp3MapReply(info.name, &c) || resp3Sets[info.name] && (info.name != "SPOP" || len(c.Args) > 1)) {
		// A map or a set reaches Lua as a table {map = ...} or {set = ...},
		// with nothing at 1, 2, ...
		what, field := "a map", "map"
		if resp3Sets[info.name] {
			what, field = "a set", "set"
		}
		at(o.Pos, "# of %s, which after redis.setresp(3) (line %d) is %s, handed to Lua as a table {%s = {...}} with nothing at 1, 2, ...: its length is always 0; count it with a command (HLEN, SCARD, ...), or call %s before redis.setresp(3)",
			o.Operand.Text, line, what, field, shownName(info.name))
		return
	}
	// A verbatim string (INFO, LOLWUT) is a table in Lua too.
	verbatim := verbatimReplies[info.name]
	if !verbatim && (resp3Replies[info.name]&resp3Double == 0 || !(info.reply&^replyNil == replyStr || hasToken(&c, []string{"INCR"}))) {
		return
	}
	var subject, fails string
	switch {
	case o.Op == "arg":
		subject, fails = fmt.Sprintf("argument %d of %s is %s", o.Arg, strings.ToUpper(calls[o.In].Command), o.Operand.Text), `Redis refuses it at run time ("Lua redis lib command arguments must be strings or integers")`
	case o.Op == "#":
		subject, fails = "# of "+o.Operand.Text, "its length is always 0"
	case o.Op == "..":
		subject, fails = "concatenation (..) of "+o.Operand.Text, `Lua fails the script at run time ("attempt to concatenate a table value")`
	case o.Op == "<", o.Op == "<=", o.Op == ">", o.Op == ">=":
		subject, fails = o.Op+" compares "+o.Operand.Text, `Lua fails the script at run time ("attempt to compare ...")`
	case strings.HasPrefix(o.Op, ":"):
		subject, fails = "method call "+o.Op+"() on "+o.Operand.Text, fmt.Sprintf(`Lua fails the script at run time ("attempt to call method '%s' (a nil value)")`, o.Op[1:])
	case strings.Contains(o.Op, "."):
		_, fn, _ := strings.Cut(o.Op, ".")
		n := 1
		if o.Op == "string.format" {
			n = o.Arg
		}
		subject, fails = o.Op+" of "+o.Operand.Text, fmt.Sprintf(`Lua fails the script at run time ("bad argument #%d to '%s' (string expected, got table)")`, n, fn)
	default:
		subject, fails = "arithmetic ("+o.Op+") on "+o.Operand.Text, `Lua fails the script at run time ("attempt to perform arithmetic on a table value")`
	}
	if o.Tonumber && o.Op != "#" {
		fails = "tonumber gives nil for a table, and Lua fails the script at run time on nil"
	}
	if verbatim {
		at(o.Pos, "%s, which after redis.setresp(3) (line %d) is a verbatim string, handed to Lua as a table ({verbatim_string = {format = 'txt', string = ...}}): %s; read its text as .verbatim_string.string, or call %s before redis.setresp(3)", subject, line, fails, shownName(info.name))
		return
	}
	at(o.Pos, "%s, which after redis.setresp(3) (line %d) is a double, handed to Lua as a table ({double = ...}): %s; read its number as .double, or call %s before redis.setresp(3)", subject, line, fails, info.name)
}

// checkResp3False refuses a reply of a call made after redis.setresp(3)
// compared with false: RESP3 hands a nil reply to Lua as nil, not false,
// so the comparison never holds (== false is always false, ~= always true).
func checkResp3False(c parse.Compare, calls []parse.Call, resp3 func(parse.Pos) int, at func(parse.Pos, string, ...any)) {
	if c.Op != "==" && c.Op != "~=" {
		return
	}
	reply, other := c.Left, c.Right
	if reply.Type != parse.OperandReply {
		reply, other = other, reply
	}
	if reply.Type != parse.OperandReply || other.Type != parse.OperandBool || other.Text != "false" || reply.Call < 0 || reply.Call >= len(calls) {
		return
	}
	call := calls[reply.Call]
	line := resp3(call.Pos)
	if line == 0 {
		return
	}
	always := "false"
	if c.Op == "~=" {
		always = "true"
	}
	at(c.Pos, "%s compares %s with false, which after redis.setresp(3) (line %d) it never is: RESP3 hands a nil reply to Lua as nil, not false, so the comparison is always %s; test it with not (if not v then ...), or compare it with nil", c.Op, reply.Text, line, always)
}

// mayNilWarning is the warning of an operation that fails when the reply
// is nil: left out when the local holding it was read before, or an earlier
// call names the same key (see checkOperation).
func mayNilWarning(o parse.Operation, calls []parse.Call, warn func(parse.Pos, string, ...any)) func(string, ...any) {
	return func(format string, args ...any) {
		if !o.Tested && !touchedBefore(calls, o.Operand.Call, o.Later) {
			warn(o.Pos, format, args...)
		}
	}
}

// operandLocal is the local an operation's operand is, if it is one (not
// tonumber of one): Lua's messages name it.
func operandLocal(o parse.Operation) (name string, local bool) {
	name, _, local = strings.Cut(strings.TrimSuffix(o.Operand.Text, ")"), " (")
	if strings.HasPrefix(o.Operand.Text, "tonumber(") {
		local = false // tonumber(n): a value, not the local
	}
	return name, local
}

// nilFix says what to do about a reply that may be nil: test the local
// holding it, or give a default (def) where it is read.
func nilFix(name string, local bool, def string) string {
	if def == "" {
		if local {
			return "test " + name + " first (if not " + name + " then ... end)"
		}
		return "hold it in a local and test that first (if not v then ... end)"
	}
	if local {
		return "test " + name + " first (if not " + name + " then ... end), or give it a default where it is assigned (" + def + ")"
	}
	return "hold it in a local and test that first (if not v then ... end), or give a default (" + def + ")"
}

// checkStringUse is checkOperation for a method call on a reply
// (v:sub(1, 3)), which fails on false, and for the first argument of a
// library function that reads a string (string.len, cjson.decode), which
// fails on false, nil and a table.
func checkStringUse(o parse.Operation, c parse.Call, got replyKind, status bool, calls []parse.Call, at, warn func(parse.Pos, string, ...any)) {
	cmd := strings.ToUpper(c.Command)
	if method, ok := strings.CutPrefix(o.Op, ":"); ok {
		if o.Tonumber || got&replyStr == 0 || got&replyNil == 0 || status {
			return // a number, a table or never nil: not this rule's business
		}
		name, local := operandLocal(o)
		fails := `("attempt to index a boolean value")`
		if local {
			fails = `("attempt to index local '` + name + `' (a boolean value)")`
		}
		mayNilWarning(o, calls, warn)("method call :%s() on %s, which is false when %s replies nil: Lua fails the script at run time %s; %s", method, o.Operand.Text, cmd, fails, nilFix(name, local, "redis.call(...) or ''"))
		return
	}
	fn := o.Op[strings.IndexByte(o.Op, '.')+1:]
	subject := o.Op + " of " + o.Operand.Text
	if o.Op == "table.concat" {
		switch {
		case o.Tonumber || status || got&replyArr == 0:
			what := cmd + " replies " + replyText(got, status)
			if o.Tonumber {
				what = "tonumber gives a number or nil"
			}
			at(o.Pos, "%s, which is no list (%s): Lua fails the script at run time (\"bad argument #1 to 'concat' (table expected, got ...)\"); concatenate with .. instead", subject, what)
		case nilElements[cmd] && !o.Tested:
			warn(o.Pos, "%s, whose values are false where %s finds nothing: Lua fails the script at run time then (\"invalid value (boolean) at index 1 in table for 'concat'\"); replace them first (for i = 1, #t do t[i] = t[i] or '' end)", subject, cmd)
		}
		return
	}
	fails := func(what string) string {
		return `("bad argument #1 to '` + fn + `' (string expected, got ` + what + `)")`
	}
	if o.Op == "string.format" {
		subject = fmt.Sprintf("argument %d of string.format is %s", o.Arg, o.Operand.Text)
		fails = func(what string) string {
			return fmt.Sprintf(`("bad argument #%d to 'format' (... expected, got %s)")`, o.Arg, what)
		}
	}
	def := "redis.call(...) or ''"
	if o.Op == "cjson.decode" || o.Op == "cmsgpack.unpack" {
		def = "" // no default decodes
	}
	failsOn := func(what string) string { return "Lua fails the script at run time " + fails(what) }
	strictValue(o, c, got, status, calls, at, warn, subject, failsOn, def)
}

// strictValue reports an operand that must be a string or a number, and
// fails on false, nil and a table alike (a library function's, redis.call's
// argument): subject says where it is, fails what happens on a value of Lua
// type what, def is the default to suggest ("" for none).
func strictValue(o parse.Operation, c parse.Call, got replyKind, status bool, calls []parse.Call, at, warn func(parse.Pos, string, ...any),
	subject string, fails func(what string) string, def string) {
	cmd := strings.ToUpper(c.Command)
	name, local := operandLocal(o)
	mayNil := mayNilWarning(o, calls, warn)
	table := status || got&(replyInt|replyStr) == 0
	if o.Tonumber {
		switch {
		case table:
			at(o.Pos, "%s, which is always nil (%s replies %s, and tonumber gives nil for a table and for false): %s", subject, cmd, replyText(got, status), fails("nil"))
		case got&(replyNil|replyArr) != 0:
			mayNil("%s, which is nil when %s replies nil: %s; %s", subject, cmd, fails("nil"), nilFix(name, local, "tonumber(redis.call(...) or '0')"))
		}
		return
	}
	switch {
	case table:
		at(o.Pos, "%s, %s: %s", subject, replyText(got, status), fails("table"))
	case got&replyNil != 0:
		mayNil("%s, which is false when %s replies nil: %s; %s", subject, cmd, fails("boolean"), nilFix(name, local, def))
	}
}

// checkCallArg is checkOperation for an argument of redis.call or
// redis.pcall: Redis refuses the call when it is no string or number.
func checkCallArg(o parse.Operation, c parse.Call, got replyKind, status bool, calls []parse.Call, at, warn func(parse.Pos, string, ...any)) {
	if o.In >= len(calls) {
		return
	}
	in := calls[o.In]
	subject := fmt.Sprintf("argument %d of %s is %s", o.Arg, in.Func, o.Operand.Text)
	if in.Command != "" {
		subject = fmt.Sprintf("argument %d of %s is %s", o.Arg, strings.ToUpper(in.Command), o.Operand.Text)
	}
	fails := func(string) string {
		return `Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers")`
	}
	strictValue(o, c, got, status, calls, at, warn, subject, fails, "redis.call(...) or ''")
}

// nilElements are the commands whose array reply holds nil (false in Lua)
// for what they do not find.
var nilElements = map[string]bool{"MGET": true, "HMGET": true, "ZMSCORE": true}

// replyText names what a reply is in Lua, for checkOperation.
func replyText(got replyKind, status bool) string {
	switch {
	case status:
		return "a status reply (a table {ok = ...} in Lua)"
	case got&(replyInt|replyStr) == 0 && got&replyArr != 0:
		return got.String() + " (a table in Lua" + orFalse(got) + ")"
	}
	return got.String()
}

// memberNil are the commands whose nil reply is about a field, member or
// index of the key (their second argument), not about the key.
var memberNil = map[string]bool{
	"HGET": true, "ZSCORE": true, "ZRANK": true, "ZREVRANK": true, "LINDEX": true, "LPOS": true,
}

// touchedBefore reports whether a call that runs before calls[i] (written
// before it, and not a call whose arguments hold it, nor one in a local
// function called only after it) names the same key,
// and for a memberNil command the same field or member too, and does not
// delete it (forgets). The calls in later ([from, to) in calls) run after
// the reply is taken, though written before it (see Operation.Later).
func touchedBefore(calls []parse.Call, i int, later [2]int) bool {
	c := calls[i]
	n := 1
	if memberNil[strings.ToUpper(c.Command)] {
		n = 2
	}
	if len(c.Args) < n {
		return false
	}
	encloses := map[int]bool{}
	for o := c.Outer; o > 0 && o <= len(calls) && !encloses[o-1]; o = calls[o-1].Outer {
		encloses[o-1] = true
	}
	for j, d := range calls[:i] {
		if forgets[strings.ToUpper(d.Command)] {
			continue // after it the value is surely missing
		}
		if j >= later[0] && j < later[1] {
			continue
		}
		// A call in a local function runs where the function is called:
		// written above, it runs before only from a call of the function
		// written before c runs (not when c is in that function too; c in
		// another local function, not one d's is in, runs from that one's
		// first call).
		if d.Deferred && (c.Pos.Line < d.DeferSpan[0] || c.Pos.Line > d.DeferSpan[1]) {
			at := c.Pos
			if c.Deferred && c.RunsFrom.Line != 0 && !(c.DeferSpan[0] <= d.DeferSpan[0] && d.DeferSpan[1] <= c.DeferSpan[1]) {
				at = c.RunsFrom
			}
			if d.RunsFrom.Line == 0 || d.RunsFrom.Line > at.Line || d.RunsFrom.Line == at.Line && d.RunsFrom.Col > at.Col {
				continue
			}
		}
		if !encloses[j] && len(d.Args) >= n && slices.EqualFunc(c.Args[:n], d.Args[:n], sameValue) {
			return true
		}
	}
	return false
}

// forgets are the commands that delete the key, or the field or member they
// name: they do not make sure of a value.
var forgets = map[string]bool{"DEL": true, "UNLINK": true, "GETDEL": true, "HDEL": true, "ZREM": true, "SREM": true, "LREM": true}

// sameValue reports whether two arguments are written from the same value
// (KEYS[1], a local, a literal), as far as the walker can tell.
func sameValue(a, b parse.Arg) bool {
	return a.Value.Text != "" && a.Value == b.Value
}

// checkIndexArg warns of the key variable of a loop over a reply that lists
// pairs (HGETALL's field, value, field, value, ...) passed to a command: it
// is an index, 1, 2, ..., where a field or member was surely meant.
func checkIndexArg(a parse.Arg, c, listed parse.Call, warn func(parse.Pos, string, ...any)) {
	what, ok := flatPairs(&listed)
	if !ok {
		return
	}
	first, second, _ := strings.Cut(what, ", ")
	warn(a.Pos, "%s is an index of %s's reply (1, 2, ...), not a %s: %s replies a flat list (%s, %s, %s, ...), so %s gets 1, 2, ... there; walk the list two by two (for i = 1, #t, 2 do local %s, %s = t[i], t[i + 1] ... end)",
		a.Name, strings.ToUpper(listed.Command), first, strings.ToUpper(listed.Command), first, second, first, strings.ToUpper(c.Command), first, second)
}

// flatPairs says whether a call replies pairs as one flat list, and of
// what ("field, value"): HGETALL, ZPOPMIN and ZPOPMAX, and a range or random
// pick given a literal WITHSCORES or WITHVALUES.
func flatPairs(c *parse.Call) (string, bool) {
	switch strings.ToUpper(c.Command) {
	case "HGETALL":
		return "field, value", true
	case "ZPOPMIN", "ZPOPMAX":
		return "member, score", true
	case "ZRANGE", "ZRANGEBYSCORE", "ZREVRANGE", "ZREVRANGEBYSCORE", "ZRANDMEMBER", "ZUNION", "ZINTER", "ZDIFF":
		if hasWord(c, "WITHSCORES") {
			return "member, score", true
		}
	case "HRANDFIELD":
		if hasWord(c, "WITHVALUES") {
			return "field, value", true
		}
	}
	return "", false
}

// hasWord reports whether a call has the literal argument word (any case).
func hasWord(c *parse.Call, word string) bool {
	for _, a := range c.Args {
		if a.Exact && strings.EqualFold(*a.Literal, word) {
			return true
		}
	}
	return false
}

// checkNilOperand refuses a local that holds nil or false on every path
// as an operand where Lua fails the script on either, and warns of one that
// may hold them (see parse.NilOperand).
func checkNilOperand(o parse.NilOperand, at, warn func(parse.Pos, string, ...any)) {
	var subject, verb string
	switch o.Op {
	case "..":
		subject, verb = "concatenation (..) of "+o.Name, "concatenate"
	case "#":
		subject, verb = "# of "+o.Name, "get length of"
	case "unary -":
		subject, verb = "arithmetic (-) on "+o.Name, "perform arithmetic on"
	default:
		subject, verb = "arithmetic ("+o.Op+") on "+o.Name, "perform arithmetic on"
	}
	what := "nil"
	if o.False {
		what = "boolean"
	}
	fails := `("attempt to ` + verb + " local '" + o.Name + "' (a " + what + ` value)")`
	if o.Always != "" {
		at(o.Pos, "%s, which holds %s there: Lua fails the script at run time %s", subject, o.Always, fails)
		return
	}
	warn(o.Pos, "%s, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Lua fails the script at run time on those paths %s; give it a value on every path, or test it first (if %s then ... end)", subject, fails, o.Name)
}

// checkNilCompareBefore3 warns of v == nil (or ~=), v a local holding the
// replies of several calls, some made after redis.setresp(3) (nil there for
// a nil reply: no comparison that always holds) and some before it: those
// are false, not nil, for a nil reply, and the comparison lets that false
// through (to RPUSH, say, which Redis refuses).
func checkNilCompareBefore3(c parse.Compare, calls []parse.Call, in3 func(int) bool, warn func(parse.Pos, string, ...any)) {
	if c.Op != "==" && c.Op != "~=" {
		return
	}
	o := c.Left
	if o.Type == parse.OperandNil {
		o = c.Right
	} else if c.Right.Type != parse.OperandNil {
		return
	}
	if o.Type != parse.OperandReply || len(o.Calls) == 0 {
		return
	}
	i := slices.IndexFunc(o.Calls, func(i int) bool { return i >= 0 && i < len(calls) && !in3(i) })
	if i < 0 {
		return
	}
	call := calls[o.Calls[i]]
	cmd := strings.ToUpper(call.Command)
	if cmd == "" {
		cmd = "call"
	}
	warn(c.Pos, "%s compares %s with nil, but the reply of the %s on line %d, made before redis.setresp(3), is false, not nil, when Redis replies nil: the comparison lets that false through; test it with not, or compare with false as well",
		c.Op, o.Text, cmd, call.Pos.Line)
}

// unreadKeyword is the first word (1-based, the command name being 0) the
// checker cannot read where the command looks for a keyword after which it
// reads keys (SORT's STORE, GEORADIUS's STORE and STOREDIST, XREAD's
// STREAMS), as keyPositions looks; 0 when there is none.
func unreadKeyword(info *commandInfo, words []string, literal []bool) int {
	if info.name == "SORT" {
		_, unread := sortStore(words, literal)
		return unread
	}
	for _, ks := range info.keys {
		if ks.beginKeyword == "" {
			continue
		}
		if _, unread := ks.findKeyword(words, literal); unread > 0 {
			return unread
		}
	}
	return 0
}

// keyKeywords lists the keywords after which the command reads keys.
func keyKeywords(info *commandInfo) string {
	var kw []string
	if info.name == "SORT" {
		kw = append(kw, "STORE")
	}
	for _, ks := range info.keys {
		if ks.beginKeyword != "" && !slices.Contains(kw, strings.ToUpper(ks.beginKeyword)) {
			kw = append(kw, strings.ToUpper(ks.beginKeyword))
		}
	}
	return strings.Join(kw, " or ")
}
