package parse

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

// token is a lexical token with its position; the Lua syntax tree carries
// only line numbers, so columns come from the token stream.
type token struct {
	typ  int
	str  string
	line int
	col  int
}

// scanTokens lexes the whole source. It stops at the first lexical error,
// which cannot happen for a source the parser accepted.
func scanTokens(src []byte, name string) (toks []token) {
	defer func() { _ = recover() }()
	sc := luaparse.NewScanner(bytes.NewReader(src), name)
	lx := &luaparse.Lexer{}
	for {
		tok, err := sc.Scan(lx)
		if err != nil || tok.Type <= 0 {
			return toks
		}
		lx.PrevTokenType = tok.Type
		if tok.Str == "" && tok.Type < 128 {
			tok.Str = string(rune(tok.Type)) // the lexer leaves "." and ".." without text
		}
		toks = append(toks, token{typ: tok.Type, str: tok.Str, line: tok.Pos.Line, col: tok.Pos.Column})
	}
}

type walker struct {
	f    *File
	toks []token
	// seen counts identifiers already matched per (line, name), so the n-th
	// occurrence in the tree maps to the n-th token on that line.
	seen map[identKey]int
	// scopes are the locals in scope, innermost last, with what each was
	// assigned (flow-insensitive beyond textual order: see assign).
	scopes []map[string]*local
	// scopeIDs name the scopes of scopes (a new number for each block
	// entered), so that a nil guard (local.guard) can tell whether the
	// block it holds in is still being walked.
	scopeIDs []int
	lastID   int
	// nilBack are, by scope ID, the replies locals held before that block
	// gave them another value (see setNil): the paths that skip the block
	// still hold them after it.
	nilBack map[int][]nilBack
	// counters are the counters of the numeric for loops whose bodies
	// forGives reads, innermost last; judged the statements whose paths
	// ifGives, forGives or givenAtBreaks reads: a local assigned in one of
	// them is no value isValue can vouch for (it may be nil there).
	counters []string
	judged   [][]ast.Stmt
	// depth counts the function bodies being walked: only the chunk's own
	// return statements reach Redis.
	depth int
	// dry is set while a loop's body is walked only to gather the values
	// it assigns (see loop).
	dry bool
	// fullOnly is set while nilGuards leaves out the tests that show a
	// local not nil, and no more (see fullGuards).
	fullOnly bool
	// probed counts, per index in File.Calls, the statements being walked
	// that test a RESP3 shape field of a local holding that call's reply
	// (if not r.map then ... r[i] ... end, r.set or r): code written for
	// either protocol (see probes).
	probed map[int]int
	// shaped counts, per index in File.Calls, the branches being walked
	// that run only when a shape test of the reply (if h.map then, or the
	// rest of a block after if not h.map then return end) found a RESP3
	// shape: there the reply is read as RESP3 hands it, probed or not.
	shaped map[int]int
	// loops are the lines of the loops (while, for, repeat) of the
	// function being walked that hold the statement being walked,
	// outermost first.
	loops [][2]int
	// outer is 1 + the index in File.Calls of the redis.call whose
	// arguments are being walked, 0 for none (see Call.Outer).
	outer int
	// upvals are the arguments of calls in a function body that are a
	// local of an enclosing function (see settleUpvals).
	upvals []upval
	// params are the arguments of calls in a function body that are a
	// parameter of a local function, and args what the calls of each local
	// function pass it (see settleParams).
	params []upval
	args   map[*ast.FunctionExpr][][]Value
	// elemParams are the arguments of calls that are a parameter of the
	// function being walked, untested there, and elemArgs what the calls of
	// each local function pass it as KEYS[n] or ARGV[n] written in place
	// (f(ARGV[3])): see settleElemParams.
	elemParams []upval
	elemArgs   map[*ast.FunctionExpr]map[int][]elemPass
	// nilArgs are the parameters (by index) of each local function that a
	// call passes nil or false, or no value (f(nil), f()): see
	// settleElemParams.
	nilArgs map[*ast.FunctionExpr]map[int]bool
	// passes are, for each call of each local function counted in
	// nilArgs, what it passes each parameter (see argPass), and pconds
	// the tests of parameters the if statements being walked make (see
	// paramCond): a use of a parameter under a test of another one
	// (if mode == 'set' then ... v ... end) is met only by the calls
	// whose values pass it.
	passes map[*ast.FunctionExpr][][]argPass
	pconds []paramCond
	// falseArgs are, of those, the parameters a call passes false or a
	// comparison written in place (f(false), f(a == b)): a test that
	// shows the parameter not nil leaves them.
	falseArgs map[*ast.FunctionExpr]map[int]bool
	// badArgs are, likewise, what a call passes a parameter that Redis
	// refuses as a command argument besides nil and false: true, a
	// comparison, a table or a function, written in place.
	badArgs map[*ast.FunctionExpr]map[int]string
	// replyArgs are the commands' replies each call of a local function
	// passes each parameter (f(redis.call('GET', k)), or a local holding
	// one), and paramOps the operations on an untested parameter of the
	// function being walked, by index in File.Operations, which are
	// recorded as operations on those replies (see settleParamOps).
	replyArgs map[*ast.FunctionExpr]map[int][]replyPass
	// replyFwds are the untested parameters a call of a local function
	// passes on as they are (local function f(v) g(v) end): the replies
	// passed the one are passed the other (see settleReplyFwds).
	replyFwds []replyFwd
	// fwdMixed are the parameters one of replyFwds passes what may be
	// another value than a reply (a call of the function passing it
	// passes one, or one out of sight): a comparison of it is no reply's.
	fwdMixed  map[*ast.FunctionExpr]map[int]bool
	paramOps  []paramOp
	paramCmps []paramCmp
	// fnCallSpan are the indexes [from, to) in File.Calls of the calls
	// written in each function (see Operation.Later).
	fnCallSpan map[*ast.FunctionExpr][2]int
	// dead are the local functions the script never runs (see
	// unreachedFuncs): a call written in one passes no element.
	dead map[*ast.FunctionExpr]bool
	// reassigned are the names the script assigns anywhere (see
	// fixedFunc).
	reassigned map[string]bool
	// fnAssigns are what the script assigns each local function's
	// variable, by the function it is declared with (see assignedFuncs).
	fnAssigns map[*ast.FunctionExpr]*funcAssigns
	// opParams are the operands of arithmetic or a concatenation that are
	// a parameter of the function being walked (see settleElemOps), and
	// opUpvals those that are a local of an enclosing function (see
	// settleUpvalElems).
	opParams, opUpvals []opParam
	// retElems are what each local function returns as KEYS[n] or ARGV[n]
	// written in place (return ARGV[3]), and retParams the parameters it
	// returns untested and unassigned (return v): a call of it gives that
	// element, or the one the call passes there (see callElems).
	retElems  map[*ast.FunctionExpr][]elemPass
	retParams map[*ast.FunctionExpr][]int
	// called are the local functions called by name, escaped those read
	// otherwise (passed, stored, aliased: called out of sight), and
	// paramVals what the parameters of each local function are given in
	// every call, as the previous walk found (see Parse): a parameter is
	// declared with it, SourceUnknown for a function not in it.
	called, escaped map[*ast.FunctionExpr]bool
	paramVals       map[*ast.FunctionExpr][]Value
	// declSeq counts the declarations of each name, so that a local has
	// the same decl in every walk; declared are the locals of this walk,
	// and upAll what each local (by decl) was assigned anywhere in the
	// last walk: a function reads a local of an enclosing one as any of
	// them, since it may run after any assignment (see Parse).
	declSeq  map[string]int
	declared []*local
	upAll    map[string]Value
	// measuredAll is File.Measured as the last walk found: a test of the
	// list's length may come after the value it allows (see isValue).
	measuredAll map[string]int
	// spoiled are the table locals (by decl) of this walk that are
	// changed or read otherwise than t.k, t[i], ipairs(t), pairs(t),
	// unpack(t) and #t, and kept those of the last walk (nil in the first):
	// a table local neither spoiled nor assigned gives its fields the
	// values its constructor lists.
	spoiled, kept map[string]bool
	// fns are the functions being walked, innermost last; results what
	// each function returns (its return statements' first values, and nil
	// for an end without one) in this walk, and returned those of the last
	// walk (nil in the first), which a call of a local function gives.
	fns               []*ast.FunctionExpr
	results, returned map[*ast.FunctionExpr]Value
	// elemOpFns are, for each of File.ElemOps, the functions being walked
	// where it is (see ElemOp.Protected); logicRight counts the right
	// sides of and/or being walked, where no ElemOp is recorded.
	elemOpFns [][]*ast.FunctionExpr
	// nilOpFns are, likewise, for each of File.NilOperands.
	nilOpFns [][]*ast.FunctionExpr
	// elemOpExprs are, for each of File.ElemOps, the operand read (see
	// ElemOp.Sure).
	elemOpExprs []ast.Expr
	logicRight  int
	// calls are the indexes in File.Calls of the redis.call expressions
	// walked, and elemCalls the expressions of the values of the return
	// statement being walked (see ret), nil for values that are none.
	calls     map[*ast.FuncCallExpr]int
	elemCalls []*ast.FuncCallExpr
	// funcs gives the functions in File.Funcs their index there, localFns
	// are the local functions, and fnCalls where each is called by name.
	funcs    map[*ast.FunctionExpr]int
	localFns map[*ast.FunctionExpr]bool
	fnCalls  map[*ast.FunctionExpr][]Pos
	// fnConds are the lines of the innermost if or loop each of fnCalls
	// is written in ({0, 0} for none).
	fnConds map[*ast.FunctionExpr][][2]int
	// fnLoops and fnBlocks are the loops and blocks each of fnCalls is
	// written in (see Func.CallsLoops).
	fnLoops  map[*ast.FunctionExpr][][][2]int
	fnBlocks map[*ast.FunctionExpr][][]int
	// conds are the lines of the if and loop statements being walked
	// (of the innermost function), innermost last.
	conds [][2]int
	// altCalls are the calls of a returned and/or expression's values
	// (ReturnEither's Alts and their Unless), and elemAlts those of an
	// and/or expression among the values of a returned table.
	altCalls []altCall
	elemAlts []elemAlt
	// keeps are the reads of table locals that cannot give the table a
	// field Redis replies otherwise than as an array (see open): an
	// argument of table.insert, cjson.encode, ..., a chunk's return.
	keeps map[*ast.IdentExpr]bool
	// errorLocal are the functions in which error names a local (one in
	// scope where the function is written, or declared in it): a call of
	// error(...) there may return, so it ends no path (see
	// reachableReturns).
	errorLocal map[*ast.FunctionExpr]bool
	// fnCallsIn are, for each of fnCalls, the functions it is written in,
	// innermost last (see runsFrom).
	fnCallsIn map[*ast.FunctionExpr][][]*ast.FunctionExpr
	// callIn is, for each call in File.Calls written in a function, the
	// innermost one (see settleDeferred): two functions may share a line.
	callIn map[int]*ast.FunctionExpr
	// paramErrs are the error replies whose message reads a parameter of
	// the local function they are written in, and msgCalls the calls of
	// each local function counted in passes, with what they pass read as
	// messages: each such call raises the message it passes (see
	// settleParamErrs).
	paramErrs []paramErr
	msgCalls  map[*ast.FunctionExpr][]msgCall
}

// msgOp is an operand of an error message written in a local function: a
// string literal (lit), a parameter (p, whose message is its value, or
// the format of a string.format, format set), or any other value (other:
// "number" for a number literal, "value" otherwise).
type msgOp struct {
	lit    string
	p      *local
	format bool
	other  string
}

// paramErr is an error reply (Via as in ErrorSite) written in a local
// function whose message is ops, a parameter among them; site is the index
// in File.ErrorSites of what was recorded of it there (-1 for nothing), and
// conds the tests of the function's parameters that hold there.
type paramErr struct {
	fn    *ast.FunctionExpr
	ops   []msgOp
	via   string
	site  int
	conds []paramCond
}

// msgCall is a call of the local function name at at: what it passes
// each parameter, as a test of it can tell (args) and as a message (msgs).
type msgCall struct {
	at   Pos
	name string
	args []argPass
	msgs []msgArg
}

// msgArg is what a call passes a parameter, read as an error message (lit,
// joined and ok as messageStart gives them) and as a string literal (str,
// isStr: a format).
type msgArg struct {
	lit, joined string
	ok          bool
	str         string
	isStr       bool
}

// elemAlt is an altCall of the and/or expression at Elems[elem].
type elemAlt struct {
	elem int
	altCall
}

// upval is argument arg of call call (indexes in File.Calls and its Args),
// the local l of an enclosing function, named name.
type upval struct {
	call, arg int
	l         *local
	name      string
	// tonumber is set when the argument is tonumber of the parameter l
	// (see settleElemParams).
	tonumber bool
	// tested is set when the function read the parameter in a condition
	// or a comparison before (v == true, type(v) == 'table'): it may pass
	// it only where that shows it a string.
	tested bool
	// guarded is set when a test of its truth shows it to hold neither
	// nil nor false there (if v then ... end): it may still hold true, a
	// comparison's true or a table.
	guarded bool
	// via is set when the argument is a local given the parameter l
	// (see local.mayParams), name the local's.
	via bool
	// nilOnly is set when that test shows it not nil, and no more (if
	// v ~= nil, type(v) ~= 'nil'): it may still hold false (see
	// walker.falseArgs).
	nilOnly bool
	// conds are the tests of the function's other parameters that hold
	// where it is used (see walker.pconds).
	conds []paramCond
}

// mayParam is a parameter a local was given (see local.mayParams), and
// the IDs of the blocks open where it was.
type mayParam struct {
	p    *local
	path []int
}

// argPass is what a call of a local function passes a parameter, as far
// as a test of it can tell: nil (nil, false or nothing), or a literal
// (kind 's' a string, 'n' a number, 't' true; text its value), or
// unknown (kind 0).
type argPass struct {
	nilv bool
	// open is set for a value of unpack or of a call (f(unpack(t))):
	// any, nil too.
	open bool
	// falsev is set for false or a comparison written in place (see
	// walker.falseArgs).
	falsev bool
	// bad is what Redis refuses as a command argument that the call
	// writes there in place, besides nil and false (see
	// walker.badArgs).
	bad  string
	kind byte
	text string
}

// paramCond is a test of the parameter param (0-based) of fn that holds
// where a statement runs: eq (or not) to a literal (kind and text as in
// argPass), or its truth (kind 0: holding a value when eq).
type paramCond struct {
	fn    *ast.FunctionExpr
	param int
	eq    bool
	kind  byte
	text  string
	// scope is, for a test an early exit makes (if mode ~= 'set' then
	// return end), the ID of the block it holds in, after the if.
	scope int
}

// meets reports whether a call that passes args may run where the tests
// conds hold: a value it passes is not one that fails a test.
func meets(args []argPass, conds []paramCond) bool {
	for _, c := range conds {
		if c.param >= len(args) {
			continue
		}
		a := args[c.param]
		switch {
		case c.kind == 0:
			if a.nilv == c.eq && (a.nilv || a.kind != 0) {
				return false // passes nil where it must hold a value, or one where it must not
			}
		case a.nilv:
			if c.eq {
				return false // nil is no literal
			}
		case a.kind != 0:
			if (a.kind == c.kind && a.text == c.text) != c.eq {
				return false
			}
		}
	}
	return true
}

// literalPass reads e, passed to a parameter, as argPass does.
func literalPass(e ast.Expr) (kind byte, text string) {
	switch x := e.(type) {
	case *ast.StringExpr:
		return 's', x.Value
	case *ast.NumberExpr:
		if f, err := strconv.ParseFloat(x.Value, 64); err == nil {
			return 'n', strconv.FormatFloat(f, 'g', -1, 64)
		}
	case *ast.TrueExpr:
		return 't', "true"
	}
	return 0, ""
}

// paramConds are the tests of parameters of the function being walked
// (not assigned anywhere) that e, as a condition, makes where it holds
// (holds set) or where it does not: v == 'x', v ~= 'x', v (its truth),
// not of one, and both sides of an and (of an or, where it does not hold).
func (w *walker) paramConds(e ast.Expr, holds bool) []paramCond {
	param := func(e ast.Expr) *local {
		id, ok := e.(*ast.IdentExpr)
		if !ok {
			return nil
		}
		if p, _ := w.lookup(id.Value); p != nil && p.paramOf != nil && p.aliasOf == nil && !p.assigned && p.fn == w.depth {
			return p
		}
		return nil
	}
	switch x := e.(type) {
	case *ast.IdentExpr:
		if p := param(x); p != nil {
			return []paramCond{{fn: p.paramOf, param: p.param - 1, eq: holds}}
		}
	case *ast.UnaryNotOpExpr:
		return w.paramConds(x.Expr, !holds)
	case *ast.LogicalOpExpr:
		if (x.Operator == "and") == holds {
			return append(w.paramConds(x.Lhs, holds), w.paramConds(x.Rhs, holds)...)
		}
	case *ast.RelationalOpExpr:
		if x.Operator != "==" && x.Operator != "~=" {
			return nil
		}
		for _, side := range [][2]ast.Expr{{x.Lhs, x.Rhs}, {x.Rhs, x.Lhs}} {
			p := param(side[0])
			if p == nil {
				continue
			}
			eq := (x.Operator == "==") == holds
			switch side[1].(type) {
			case *ast.NilExpr, *ast.FalseExpr:
				// v == nil (or false) holds where v holds none; v ~=
				// nil may hold where it holds false.
				if eq {
					return []paramCond{{fn: p.paramOf, param: p.param - 1}}
				}
				return nil
			}
			if kind, text := literalPass(side[1]); kind != 0 && kind != 't' {
				return []paramCond{{fn: p.paramOf, param: p.param - 1, eq: eq, kind: kind, text: text}}
			}
		}
	}
	return nil
}

// falsePassed reports whether a call of fn passes false or a comparison
// to its parameter i (see falseArgs) and may run where the tests conds
// hold.
func (w *walker) falsePassed(fn *ast.FunctionExpr, i int, conds []paramCond) bool {
	if !w.falseArgs[fn][i] {
		return false
	}
	if w.escaped[fn] {
		return true // (a call out of sight, g('set', false), may pass the tests)
	}
	for _, args := range w.passes[fn] {
		if i < len(args) && (args[i].falsev || args[i].open) && meets(args, conds) {
			return true
		}
	}
	return false
}

// setAndFalse records an assignment of e to the local name (see
// local.andFalse).
// copied is set when e is a copy of a local that may hold such a false
// there (see andFalseCopies).
func (w *walker) setAndFalse(name string, e ast.Expr, copied bool) {
	l, i := w.lookup(name)
	if l == nil {
		return
	}
	x, ok := e.(*ast.LogicalOpExpr)
	comparison := false
	if ok && x.Operator == "and" {
		switch x.Lhs.(type) {
		case *ast.RelationalOpExpr, *ast.UnaryNotOpExpr, *ast.FalseExpr:
			comparison = true
		}
	}
	switch {
	case comparison || copied:
		l.andFalse = true
	case i == len(w.scopes)-1:
		l.andFalse = false
	}
}

// andFalseCopies reports, for each of the first n values of list, whether
// it is a local of the function being walked that may hold the false of
// an and (see local.andFalse), untested there: a copy of it (local b = a)
// holds that false too. (Read before any is assigned: a, b = b, a.)
func (w *walker) andFalseCopies(list []ast.Expr, n int) []bool {
	out := make([]bool, n)
	for i := range min(n, len(list)) {
		if id, ok := list[i].(*ast.IdentExpr); ok {
			if l, _ := w.lookup(id.Value); l != nil && l.andFalse && l.fn == w.depth && !w.guarded(l) {
				out[i] = true
			}
		}
	}
	return out
}

// setMayParam records an assignment of e to the local name (see
// local.mayParams): a parameter of the function that declares it, not
// shown to hold a value here, is one it may hold from then on; in the
// declaring block, the only one. (A test of the parameter elsewhere, in
// another branch or one that lets nil through, shows nothing here.)
func (w *walker) setMayParam(name string, e ast.Expr) {
	l, i := w.lookup(name)
	if l == nil {
		return
	}
	cur := w.scopeIDs[len(w.scopeIDs)-1]
	switch {
	case i == len(w.scopes)-1:
		l.mayParams = nil
	case len(w.loops) == l.loops:
		// A parameter given in this block, or in one nested in it, is
		// replaced: no break between leaves the block with it, but one
		// that leaves the local's scope too.
		l.mayParams = slices.DeleteFunc(slices.Clone(l.mayParams), func(m mayParam) bool { return slices.Contains(m.path, cur) })
	}
	// (A parameter assigned is checked as a local: given another
	// parameter, v = w, it may hold what a call passed that one.)
	id, ok := e.(*ast.IdentExpr)
	if !ok || l.fn != w.depth {
		return
	}
	if p, _ := w.lookup(id.Value); p != nil && p != l && p.paramOf != nil && !p.assigned && p.fn == w.depth && !w.guarded(p) && !p.typed && !slices.ContainsFunc(l.mayParams, func(m mayParam) bool { return m.p == p && slices.Equal(m.path, w.scopeIDs) }) {
		l.mayParams = append(slices.Clip(l.mayParams), mayParam{p: p, path: slices.Clone(w.scopeIDs)})
	}
}

// exitConds records the tests of parameters e makes where it holds (or,
// holds unset, where it does not) for the rest of the block being walked:
// an if that leaves the function (if mode ~= 'set' then return end) on the
// other side.
func (w *walker) exitConds(e ast.Expr, holds bool) {
	for _, c := range w.paramConds(e, holds) {
		c.scope = w.scopeIDs[len(w.scopeIDs)-1]
		w.pconds = append(w.pconds, c)
	}
}

// condsOf are the tests in pconds of the parameters of fn, made in the
// function being walked.
func (w *walker) condsOf(fn *ast.FunctionExpr) []paramCond {
	var out []paramCond
	for _, c := range w.pconds {
		if c.fn == fn && len(w.fns) > 0 && w.fns[len(w.fns)-1] == fn && (c.scope == 0 || slices.Contains(w.scopeIDs, c.scope)) {
			out = append(out, c)
		}
	}
	return out
}

// badPassed is what a call of fn passes its parameter i that Redis
// refuses as a command argument besides nil and false (see badArgs), of
// a call that may run where the tests conds hold: "" for none. (A call
// that passes true where the function uses the parameter only under
// mode == 'set', f('get', true), never reaches the use.)
func (w *walker) badPassed(fn *ast.FunctionExpr, i int, conds []paramCond) string {
	bad := w.badArgs[fn][i]
	if bad == "" || w.escaped[fn] {
		return bad // (a call out of sight may pass the tests)
	}
	for _, args := range w.passes[fn] {
		if i < len(args) && args[i].bad != "" && meets(args, conds) {
			return args[i].bad
		}
	}
	return ""
}

// nilPassed reports whether a call of fn passes nil or false (or nothing)
// to its parameter i and may run where the tests conds hold.
func (w *walker) nilPassed(fn *ast.FunctionExpr, i int, conds []paramCond) bool {
	if !w.nilArgs[fn][i] {
		return false
	}
	if w.escaped[fn] {
		return true // (a call out of sight, g('set'), may pass the tests)
	}
	for _, args := range w.passes[fn] {
		if i < len(args) && (args[i].nilv || args[i].open) && meets(args, conds) {
			return true
		}
	}
	return false
}

// local is a local variable in scope.
type local struct {
	val Value
	// lits are the literals (Value.Text) val may be, on one path at least:
	// replaced as val is in the declaring block, gathered in nested ones.
	lits []string
	// litsMore is set when val may be other literals too, past the
	// bound on lits: they are not checked (see Arg.HeldMore).
	litsMore bool
	// decl names the declaration across walks (see walker.declSeq).
	decl string
	// table is set on a local declared with a table constructor, and elems
	// then merges the values it lists (nil for none); ctor is what the
	// constructor replies, until the local is assigned another value.
	table bool
	elems Value
	ctor  *Return
	// fields are the values the constructor gives at a literal index or
	// name ("1", "lock"), where the checker can tell.
	fields map[string]Value
	// fieldsAll is set when fields holds every field the constructor
	// gives (each at a literal index or name, none from a call or ...
	// last): another is nil while the table is kept.
	fieldsAll bool
	// all merges every value the local is assigned, wherever: what a
	// function defined before an assignment may read (see settleUpvals),
	// while val is replaced by an assignment in the declaring block.
	all Value
	// fn is the depth of the function body that declares the local (see
	// walker.depth).
	fn int
	// fnExpr is the function a local function is (local function f, local
	// f = function), nil for other locals. paramOf is the function whose
	// parameter param (1-based) the local is, nil for other locals;
	// assigned is set once the local is assigned after its declaration.
	fnExpr  *ast.FunctionExpr
	paramOf *ast.FunctionExpr
	// paramTested is set on a parameter once an operation on it is
	// recorded (see settleParamOps): later ones are not reported again.
	paramTested bool
	// typed is set once the script tests the local's type (type(v) ==
	// 'table'): it may deal with whatever a call passes it there, so
	// operations on a parameter are no longer taken as on the replies the
	// calls pass it.
	typed bool
	// falseIn is the ID of the scope in which a condition shows the local
	// false or nil (the body of if not v, the right of v or ...), 0 for
	// none: see knownFalse.
	falseIn int
	// nilOnlyIn is the ID of the scope in which a condition shows the
	// local not nil and no more (the body of if v ~= nil, or of if
	// type(v) ~= 'nil'): a reply it holds may be false there. fullIn is
	// that of the outermost scope still walked in which one shows it
	// neither nil nor false (if v), which settles it. 0 for none: see
	// knownNilOnly.
	nilOnlyIn, fullIn int
	param             int
	assigned          bool
	// aliasOf is the parameter a local was declared a copy of (local y =
	// v, v a parameter of the function walked, untested there): the local
	// is taken as that parameter (paramOf, param), and a test of the
	// parameter tests it too, while neither is assigned.
	aliasOf *local
	// mayParams are the parameters of the function that declares it,
	// untested there, that it was assigned (y = v, in a nested block, a
	// loop, or after its declaration): it may hold what a call passes
	// them (see settleElemParams). An assignment in the declaring block
	// replaces them, one in a nested block those given in it (unless a
	// loop opened since the declaration may be left by a break between).
	mayParams []mayParam
	// loops is how many loops were open where it was declared.
	loops int
	// andFalse is set when it was given an and whose left is a
	// comparison (local b = a == c and 'y'): false where that is false;
	// replaced by another value in the declaring block.
	andFalse bool
	// orNotString is what an and/or the local was given may give that
	// Redis refuses as a command argument (local b = a == c or 'y': true),
	// "" for none; cleared by another value in the declaring block.
	orNotString string
	// orReplaced is the scope (see walker.scopeIDs) where a nested block
	// gave the local another value: orNotString holds after it, not in it.
	orReplaced int
	// reply is what returning the local gives, as the walker can tell from
	// the value it holds (Kind ReturnUnknown when it cannot): set where it
	// is declared and where it is replaced in the same block, one of the
	// values it may hold (ReturnOneOf) once it is assigned in a nested block,
	// a function or a loop (see loop).
	reply Return
	// fnReply is one of the values a function nested in the local's own
	// assigns it (fnAssigned then set): the function may run after a later
	// assignment in the declaring block, which then does not replace it.
	fnReply    Return
	fnAssigned bool
	// nilv is the reply the local holds when it may be false or nil (a
	// command's reply, or tonumber of one) and was assigned in the block
	// that declares it; unset otherwise.
	nilv nilSource
	// indexOf is 1 + the index in File.Calls of the reply whose keys the
	// local walks (for i, x in ipairs(h), h a reply), 0 otherwise.
	indexOf int
	// numArg is n when the local holds tonumber(ARGV[n]), assigned in the
	// block that declares it; 0 otherwise.
	numArg int
	// numElem is n when it was given tonumber(ARGV[n]) with ARGV[n]
	// written in place (see walker.tonumberElem); 0 otherwise.
	numElem int
	// numParam is the parameter of the function being walked it was
	// given tonumber of (local n = tonumber(x)), in the block that
	// declares it, and numParamName that parameter's name; nil otherwise.
	numParam     *local
	numParamName string
	// typeOf is the local it was given the type of (local t = type(v)),
	// in the block that declares it: a condition that reads it tests
	// that local's type (see markTested) while that local holds the
	// value it held then (its assigns still typeOfAt; see typeOfHeld).
	typeOf   *local
	typeOfAt int
	// assigns counts the assignments walked of the local (those of a
	// loop's dry passes too, so that one later in the body counts before
	// it is walked for real).
	assigns int
	// fnElems are the elements a call of a local function it was given
	// may return (see callElems), assigned in the block that declares it.
	fnElems []elemPass
	// tested is set once the local is read in a condition, an and/or or a
	// comparison anywhere: the script may deal with nil there, so a
	// function reading it as an upvalue need not get nil (see
	// settleUpvalElems).
	tested bool
	// valueTested is set once the local is read in a condition, an and/or
	// or a comparison other than for its truth alone (v == true,
	// type(v) == 'string', not as if v, not v, v and ...): such a test
	// may show it a string; one of its truth rules out only nil and false,
	// and it may still hold true, a comparison's true or a table.
	valueTested bool
	// fieldGuards are, per field of a table local (by fieldKey), the ID
	// of the scope in which a test shows it to hold neither nil nor false
	// (see guard): the script may pass one it does not list only there (if
	// t[2] then ... end, after if not t.w then return end, right of t.w
	// and).
	fieldGuards map[string]int
	// counter is set on the variable of a numeric for, while it is not
	// assigned: it holds a number; nonzero then when it counts away from
	// 0 from a number that is not 0 (for i = 1, n), or toward one that is
	// not 0 from its side (for i = #t, 1, -1).
	counter, nonzero bool
	// listed is "ARGV" (or "KEYS") on the counter of a numeric for that
	// runs within 1 and #ARGV, while it is not assigned.
	listed string
	// value is set on a local declared with a value that is neither nil
	// nor false (see isValue) and never assigned another kind since.
	value bool
	// guard is the ID of the scope in which the local is known to hold
	// neither nil nor false (after if not v then return ... end, or in the
	// body of if v then ... end), 0 for none; an assignment to the local
	// ends it.
	guard int
	// given is the ID of the scope in which the local holds a value given
	// on every path that reached it (if c then v = 'x' else v = 'y' end,
	// at each break of while true), 0 for none: what it held before is
	// gone, unlike after a test of its truth, which leaves true or a
	// table. An assignment to the local ends it.
	given int
	// nonzeroGuard is the like for a number that is not 0 (nor -0): in
	// the body of if n < 0 then ... end, after if n == 0 then return end.
	nonzeroGuard int
	// wholeGuard is the like for a number that wholeBy divides evenly
	// (the text of a number or a local): in the body of if n % d == 0
	// then ... end, after if n % d ~= 0 then return end. An assignment to
	// the divisor ends it too.
	wholeGuard int
	wholeBy    string
	// wholeByLocal is the local wholeBy names (nil for a number): another
	// of that name (for d = ..., a parameter d) is another divisor.
	wholeByLocal *local
	// wholeFn is the function depth the guard was found at: a function
	// defined after it may run after n or d is assigned again (if n % 2
	// ~= 0 then return end, local function f() ... n / 2 ... end, n = n
	// + 1, f()).
	wholeFn int
}

// nilSource is a command's reply held by a local, or tonumber of one.
type nilSource struct {
	set      bool
	call     int    // the index of the call in File.Calls
	command  string // its name, for messages
	tonumber bool
	// tested is set once the local is read other than as an operand that
	// fails on nil (a condition, ==, and/or, an argument): the script may
	// deal with nil there.
	tested bool
	// some is set when the local holds the reply on some paths only
	// (given it in a nested block, or kept on the paths that skip one
	// giving it another value): it may hold anything else on the others,
	// so a comparison of it is no comparison of the reply.
	some bool
}

type identKey struct {
	line int
	name string
}

// identPos finds the column of the next occurrence of identifier name on line.
func (w *walker) identPos(line int, name string) (Pos, int) {
	return w.tokenPos(line, name, false)
}

// tokenPos finds the next occurrence of a token on line; isField also
// matches identifiers that name a field ({err = ...}).
func (w *walker) tokenPos(line int, name string, isField bool) (Pos, int) {
	if w.seen == nil {
		w.seen = map[identKey]int{}
	}
	k := identKey{line, name}
	if isField {
		k.name = "." + name
	}
	n := w.seen[k]
	w.seen[k] = n + 1
	first, count := -1, 0
	for i, t := range w.toks {
		if t.line != line || t.str != name || t.typ == luaparse.TString ||
			(t.typ == luaparse.TIdent && !w.isReference(i) && !isField) {
			continue
		}
		if first < 0 {
			first = i
		}
		if count == n {
			return Pos{line, t.col}, i
		}
		count++
	}
	if first >= 0 {
		return Pos{line, w.toks[first].col}, first
	}
	return Pos{line, 1}, -1
}

// peekPos is tokenPos without using up the occurrence: the next lookup of
// the name on the line, which walking the expression makes, finds it again.
func (w *walker) peekPos(line int, name string, isField bool) Pos {
	pos, _ := w.tokenPos(line, name, isField)
	k := identKey{line, name}
	if isField {
		k.name = "." + name
	}
	w.seen[k]--
	return pos
}

// isReference reports whether identifier token i names a variable, rather
// than a field (t.KEYS, {KEYS = 1}), a method, a label or a new local.
func (w *walker) isReference(i int) bool {
	prev, next := "", ""
	if i > 0 {
		prev = w.toks[i-1].str
	}
	if i+1 < len(w.toks) {
		next = w.toks[i+1].str
	}
	switch prev {
	case ".", ":", "::", "goto", "local", "function", "for":
		return false
	case "{", ",", ";":
		if next == "=" {
			return false
		}
	}
	return true
}

func (w *walker) push() {
	w.lastID++
	w.scopes = append(w.scopes, map[string]*local{})
	w.scopeIDs = append(w.scopeIDs, w.lastID)
}

func (w *walker) pop() {
	id := w.scopeIDs[len(w.scopeIDs)-1]
	for _, b := range w.nilBack[id] {
		if !b.l.nilv.set {
			b.l.nilv = b.ns
			b.l.nilv.some = true
		}
	}
	delete(w.nilBack, id)
	w.scopes = w.scopes[:len(w.scopes)-1]
	w.scopeIDs = w.scopeIDs[:len(w.scopeIDs)-1]
}

// popSure is pop for a block that runs whenever the one around it does (do
// ... end, the body of a repeat no break leaves): a value it gave a local
// of an enclosing block holds after it on every path, so the reply the
// local held before is restored, if at all, where the enclosing block ends
// (see setNil).
func (w *walker) popSure() {
	if n := len(w.scopeIDs); n > 1 {
		id, parent := w.scopeIDs[n-1], w.scopeIDs[n-2]
		if back := w.nilBack[id]; len(back) > 0 {
			w.nilBack[parent] = append(w.nilBack[parent], back...)
			delete(w.nilBack, id)
		}
	}
	w.pop()
}

// nilBack is the reply a local held before a nested block gave it another
// value.
type nilBack struct {
	l  *local
	ns nilSource
}

// declare makes a new local in the innermost scope.
func (w *walker) declare(name string, v Value) {
	if w.declSeq == nil {
		w.declSeq = map[string]int{}
	}
	w.declSeq[name]++
	l := &local{val: v, all: v, lits: literalOf(v), fn: w.depth, decl: name + "#" + strconv.Itoa(w.declSeq[name]), loops: len(w.loops)}
	w.scopes[len(w.scopes)-1][name] = l
	if !w.dry {
		w.declared = append(w.declared, l)
	}
}

// lookup finds the local name in scope and the index of its scope; nil
// when name is not a local.
func (w *walker) lookup(name string) (*local, int) {
	for i := len(w.scopes) - 1; i >= 0; i-- {
		if l, ok := w.scopes[i][name]; ok {
			return l, i
		}
	}
	return nil, -1
}

// setReply records the reply a local gives after an assignment: r when it is
// assigned in the block that declares it (it replaces the old value), one of
// the old and the new when it is assigned in a nested block or function (it
// may keep the old value or take the new one).
func (w *walker) setReply(name string, r Return) {
	l, i := w.lookup(name)
	if l == nil {
		return
	}
	if w.depth > l.fn {
		// A function may run at any later point: what it assigns stays
		// possible after the declaring block's assignments too.
		if l.fnAssigned {
			l.fnReply = oneOf(l.fnReply, r)
		} else {
			l.fnReply, l.fnAssigned = r, true
		}
	}
	if i != len(w.scopes)-1 {
		r = oneOf(l.reply, r)
	} else if l.fnAssigned {
		r = oneOf(r, l.fnReply)
	}
	l.reply = r
	if i == len(w.scopes)-1 && w.depth == l.fn {
		l.orNotString, l.orReplaced = "", 0
	} else if l.orNotString != "" {
		l.orReplaced = w.scopeIDs[len(w.scopeIDs)-1]
	}
	l.ctor = nil // another value than the constructor's
	l.guard = 0  // a new value: no test of the old one holds
	l.given = 0
	l.nonzeroGuard = 0
	l.wholeGuard = 0
	// Nor one of another local's by this one (n % d == 0, then d = 3).
	for _, sc := range w.scopes {
		for _, o := range sc {
			if o.wholeBy == name {
				o.wholeGuard = 0
			}
		}
	}
}

// setOrNotString records on the local name what the and/or e it is
// assigned may give that Redis refuses as a command argument (see
// local.orNotString).
func (w *walker) setOrNotString(name string, e ast.Expr) {
	l, _ := w.lookup(name)
	if l == nil {
		return
	}
	if id, ok := e.(*ast.IdentExpr); ok {
		// A copy of one (local c = b).
		if o, _ := w.lookup(id.Value); o != nil && o != l && w.orNotString(o) != "" && !w.givenHere(o) && !o.valueTested {
			l.orNotString, l.orReplaced = o.orNotString, 0
		}
		return
	}
	x, ok := e.(*ast.LogicalOpExpr)
	if !ok {
		return
	}
	for _, a := range w.eitherOf(x) {
		if k := notStringKind(a.Ret); k != "" {
			l.orNotString, l.orReplaced = k, 0
			return
		}
	}
}

// orNotString is the local l's orNotString where the walker is: "" in the
// block that gave it another value since.
func (w *walker) orNotString(l *local) string {
	if l.orReplaced != 0 && slices.Contains(w.scopeIDs, l.orReplaced) {
		return ""
	}
	return l.orNotString
}

// setNumArg records what numArgOf says of the value assigned to a local, in
// the block that declares it; one assigned in a nested block, a function or
// a loop is no longer followed.
func (w *walker) setNumArg(name string, n int, e ast.Expr) {
	l, i := w.lookup(name)
	if l == nil {
		return
	}
	if i != len(w.scopes)-1 {
		n = 0
	}
	l.numArg, l.numElem, l.fnElems = n, 0, nil
	if n > 0 {
		l.numElem = w.tonumberElem(e)
	}
	l.numParam, l.numParamName = nil, ""
	if p, name := w.tonumberParam(e); p != nil && i == len(w.scopes)-1 {
		l.numParam, l.numParamName = p, name
	}
	l.typeOf = nil
	if c, ok := e.(*ast.FuncCallExpr); ok && i == len(w.scopes)-1 && c.Receiver == nil && len(c.Args) == 1 {
		f, isF := c.Func.(*ast.IdentExpr)
		id, isID := c.Args[0].(*ast.IdentExpr)
		if isF && isID && f.Value == "type" && !w.isLocal("type") {
			if of, _ := w.lookup(id.Value); of != l {
				l.typeOf = of // (not local v = type(v), declared already)
				if of != nil {
					l.typeOfAt = of.assigns
				}
			}
		}
	}
	if i == len(w.scopes)-1 && e != nil {
		// (Its first value: a local given the second gets another.)
		l.fnElems = w.callElems(e)
	}
}

// callElems are the elements KEYS[n] and ARGV[n] a call e of a local
// function may return: those it returns written in place, and those the
// call passes in place to a parameter it returns. Each is nil when the list
// is shorter, as the element written in place is; nil for another e.
func (w *walker) callElems(e ast.Expr) []elemPass {
	x, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return nil
	}
	l := w.localFunc(x.Func)
	if l == nil || x.Receiver != nil {
		return nil
	}
	out := slices.Clone(w.retElems[l.fnExpr])
	for _, i := range w.retParams[l.fnExpr] {
		if i >= len(x.Args) || i == len(x.Args)-1 && expands(x.Args[i]) && !isCall(x.Args[i]) {
			continue
		}
		if table, n, _ := w.elemNeed(x.Args[i]); n > 0 {
			out = append(out, elemPass{table, n})
		}
		out = append(out, w.callElems(x.Args[i])...)
	}
	return out
}

func isCall(e ast.Expr) bool { _, ok := e.(*ast.FuncCallExpr); return ok }

// retElem records what the function being walked returns as its first
// value e when that is an element, a parameter of it, or a call of a local
// function that returns one (see callElems).
func (w *walker) retElem(e ast.Expr) {
	fn := w.fns[len(w.fns)-1]
	if w.retElems == nil {
		w.retElems, w.retParams = map[*ast.FunctionExpr][]elemPass{}, map[*ast.FunctionExpr][]int{}
	}
	var elems []elemPass
	if table, n, _ := w.elemNeed(e); n > 0 {
		elems = append(elems, elemPass{table, n})
	}
	elems = append(elems, w.callElems(e)...)
	// Each once: a recursive call (return f(n - 1)) gives what the
	// function returns so far, which copied again at each such return
	// would double with each.
	for _, p := range elems {
		if !slices.Contains(w.retElems[fn], p) {
			w.retElems[fn] = append(w.retElems[fn], p)
		}
	}
	if id, ok := e.(*ast.IdentExpr); ok {
		if l, _ := w.lookup(id.Value); l != nil && l.paramOf == fn && !l.assigned && !w.guarded(l) && !slices.Contains(w.retParams[fn], l.param-1) {
			w.retParams[fn] = append(w.retParams[fn], l.param-1)
		}
	}
}

// tonumberElem is n when e is tonumber(ARGV[n]) with ARGV[n] written in
// place, which is nil when the list is short; 0 otherwise.
func (w *walker) tonumberElem(e ast.Expr) int {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return 0
	}
	arg, ok := w.tonumberArg(c)
	if !ok {
		return 0
	}
	if a, ok := arg.(*ast.AttrGetExpr); ok {
		if id, ok := a.Object.(*ast.IdentExpr); ok && id.Value == "ARGV" && !w.isLocal("ARGV") {
			return argvIndex(w.value(a))
		}
	}
	return 0
}

// numArgOf is n and the text for messages when e is tonumber(ARGV[n]) (of
// ARGV[n] or of a local holding it), or a local holding that; 0 otherwise.
func (w *walker) numArgOf(e ast.Expr) (int, string) {
	switch x := e.(type) {
	case *ast.FuncCallExpr:
		if arg, ok := w.tonumberArg(x); ok {
			if n := argvIndex(w.value(arg)); n > 0 {
				return n, "tonumber(ARGV[" + strconv.Itoa(n) + "])"
			}
		}
	case *ast.IdentExpr:
		if l, _ := w.lookup(x.Value); l != nil && l.numArg > 0 {
			return l.numArg, x.Value + " (tonumber(ARGV[" + strconv.Itoa(l.numArg) + "]))"
		}
	}
	return 0, ""
}

// numberArg records e in File.NumberArgs when it is an argument (ARGV[n],
// or a local holding one) that Lua reads as a number there.
func (w *walker) numberArg(e ast.Expr) {
	if e == nil {
		return
	}
	v := w.value(e)
	if v.Source != SourceArgv {
		return
	}
	n := 0
	if !v.Derived {
		n = argvIndex(v)
	}
	w.f.NumberArgs = append(w.f.NumberArgs, n)
}

// argvTable is the value of ARGV itself (not one of its values).
var argvTable = Value{Source: SourceArgv, Text: "ARGV", Derived: true}

// numberArgsOf records the arguments a call reads as numbers: tonumber's,
// a math or bit function's, struct.pack's values, and those string.format converts with a numeric
// directive (%d, %x, %g, ...; with a format that is not a literal, all).
func (w *walker) numberArgsOf(e *ast.FuncCallExpr) {
	if id, ok := e.Func.(*ast.IdentExpr); ok && id.Value == "tonumber" && !w.isLocal("tonumber") && e.Receiver == nil && len(e.Args) > 0 {
		w.numberArg(e.Args[0]) // with a base too: the result is a double
		return
	}
	if id, ok := e.Func.(*ast.IdentExpr); ok && id.Value == "pcall" && !w.isLocal("pcall") && len(e.Args) > 1 {
		if f, ok := e.Args[0].(*ast.IdentExpr); ok && f.Value == "tonumber" && !w.isLocal("tonumber") {
			w.numberArg(e.Args[1]) // pcall(tonumber, ARGV[1])
			return
		}
	}
	name, ok := w.libFunc(e)
	switch {
	case !ok:
	case strings.HasPrefix(name, "table.") && w.value(e.Args[0]) == argvTable:
		// table.remove(ARGV, 1) and the like move the arguments to
		// other indexes: ARGV[n] read as a number after it may be any.
		w.f.NumberArgs = append(w.f.NumberArgs, 0)
	case name == "cjson.decode":
		w.numberArg(e.Args[0]) // a number in JSON is a Lua number
	case strings.HasPrefix(name, "math."), strings.HasPrefix(name, "bit."):
		for _, a := range e.Args {
			w.numberArg(a)
		}
	case name == "struct.pack":
		// Its numeric formats read doubles; which value a format takes
		// is not worked out.
		for _, a := range e.Args[1:] {
			w.numberArg(a)
		}
	case name == "string.format":
		f, lit := e.Args[0].(*ast.StringExpr)
		for i, a := range e.Args[1:] {
			if !lit || numericDirective(f.Value, i) {
				w.numberArg(a)
			}
		}
	}
	if f, ok := e.Receiver.(*ast.StringExpr); ok && e.Method == "format" {
		for i, a := range e.Args { // ('%d'):format(ARGV[1])
			if numericDirective(f.Value, i) {
				w.numberArg(a)
			}
		}
	}
}

// numericDirective reports whether the i-th (from 0) directive of a
// string.format format converts its value to a number (all but %s and %q);
// true when the format has no i-th directive it can read.
func numericDirective(format string, i int) bool {
	for j := 0; j < len(format); j++ {
		if format[j] != '%' {
			continue
		}
		j++
		if j < len(format) && format[j] == '%' {
			continue
		}
		for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			return true
		}
		if i == 0 {
			return format[j] != 's' && format[j] != 'q'
		}
		i--
	}
	return true
}

// numberText records e when it is a number made of an argument (numArgOf)
// turned back into a string by op at pos.
func (w *walker) numberText(e ast.Expr, op string, pos Pos, in int) {
	if n, text := w.numArgOf(e); n > 0 && !w.dry {
		w.f.NumberTexts = append(w.f.NumberTexts, NumberText{Pos: pos, Op: op, Argv: n, Text: text, In: in})
	}
}

// setNil records the reply a local may hold as false or nil after an
// assignment. One given a reply in a nested block of the function that
// declares it (if c then v = redis.call('GET', k) end) may hold that reply
// after the block too, on the paths through it: it is followed as that
// reply. One given another value there holds none in the rest of the
// block, and after it the reply it held before, on the paths that skip the
// block (local v = redis.call('GET', k), then if c then v = 'x' end; not
// for a block that always runs: see popSure). One
// assigned in a function (which may not run) is no longer followed.
func (w *walker) setNil(name string, ns nilSource) {
	l, i := w.lookup(name)
	if l == nil {
		return
	}
	l.falseIn, l.nilOnlyIn, l.fullIn = 0, 0, 0 // a new value: no test of the old one holds
	if i != len(w.scopes)-1 {
		if l.fn != w.depth {
			ns = nilSource{}
		} else if ns.set {
			ns.some = true
		} else if l.nilv.set {
			if w.nilBack == nil {
				w.nilBack = map[int][]nilBack{}
			}
			id := w.scopeIDs[len(w.scopeIDs)-1]
			w.nilBack[id] = append(w.nilBack[id], nilBack{l, l.nilv})
		}
	}
	l.nilv = ns
}

// maxAlternatives bounds the values a local is followed through; one
// assigned more often than that in nested blocks is left unknown.
const maxAlternatives = 16

// oneOf is the reply of a local that holds the value of a or of b: unknown
// when either is, else the alternatives of both (a ReturnOneOf).
func oneOf(a, b Return) Return {
	all := append([]Return{a, b}, append(a.Alts, b.Alts...)...)
	// mayNil: nil or false on one path, which stays known (MayNil) when
	// the rest is not.
	mayNil := slices.ContainsFunc(all, func(r Return) bool { return r.Kind == ReturnNil || r.MayNil })
	if a.Kind == ReturnUnknown || b.Kind == ReturnUnknown {
		// What is known to be possible stays: a number with a fraction, a
		// negation, or nil, on one path (their rules need no more).
		u := Return{Kind: ReturnUnknown, MayNil: mayNil}
		for _, r := range all {
			if r.Fraction != "" && u.Fraction == "" {
				u.Pos, u.Fraction = r.Pos, r.Fraction
			}
			if r.Negation.Shown != "" && u.Negation.Shown == "" {
				u.Negation = r.Negation
			}
		}
		return u
	}
	var alts []Return
	add := func(r Return) {
		// A value met again (a loop's body walked once more) is one value.
		if !slices.ContainsFunc(alts, func(a Return) bool { return reflect.DeepEqual(a, r) }) {
			alts = append(alts, r)
		}
	}
	for _, r := range []Return{a, b} {
		if r.Kind == ReturnOneOf {
			for _, x := range r.Alts {
				add(x)
			}
		} else {
			add(r)
		}
	}
	if len(alts) > maxAlternatives {
		return Return{Kind: ReturnUnknown, MayNil: mayNil}
	}
	return Return{Pos: b.Pos, Kind: ReturnOneOf, Alts: alts}
}

// maxLoopPasses bounds the passes that gather what a loop's body assigns
// (a chain v = w, w = x, ... needs one per link); locals still gaining
// values after that are left unknown.
const maxLoopPasses = 4

// loop walks a loop's body (body walks it once: the condition, the scope,
// the statements). A return in the body may run after an assignment written
// below it, in an earlier pass, and a return after the loop after any of
// them, so before the body is walked for real, the locals in scope take,
// besides their value on entry, every value the body may assign them (their
// replies, and their sources as assign merges them: a key position above an
// assignment of an argument holds that argument from the second iteration
// on): the body is walked in passes that record nothing else (the File and
// the token counts are put back after each) until those values stop growing.
//
// In those passes a nested loop's body is walked once: the passes of the
// outer loop repeat it, so its values are gathered all the same, and the work
// grows with the nesting depth instead of exponentially.
func (w *walker) loop(body func()) {
	if w.dry {
		body()
		return
	}
	outer := map[*local]bool{}
	for _, sc := range w.scopes {
		for _, l := range sc {
			outer[l] = true
		}
	}
	for pass := 0; ; pass++ {
		before := make(map[*local]local, len(outer))
		for l := range outer {
			before[l] = *l
		}
		f, seen, seq := *w.f, maps.Clone(w.seen), maps.Clone(w.declSeq)
		w.dry = true
		body()
		*w.f, w.seen, w.declSeq, w.dry = f, seen, seq, false
		grew := false
		for l := range outer {
			if b := before[l].nilv; l.nilv.set && b.set && l.nilv.call == b.call && l.nilv.tonumber == b.tonumber {
				// A read in the body tests a local for the iterations
				// after it, not for the first: the body's uses are
				// walked for real as the first iteration meets them.
				l.nilv.tested = b.tested
			}
			if l.val != before[l].val {
				grew = true
			}
			if !reflect.DeepEqual(l.reply, before[l].reply) {
				grew = true
				if pass == maxLoopPasses-1 {
					l.reply = Return{Kind: ReturnUnknown}
				}
			}
		}
		if !grew || pass == maxLoopPasses-1 {
			break
		}
	}
	body()
}

// assign records another value of the local name. A local assigned values
// of several sources may hold any of them: when one of them is a value a key
// position must not hold (a literal, an argument, data read from Redis), the
// local keeps it, so that the use is still flagged; otherwise it becomes
// SourceUnknown.
func (w *walker) assign(name string, v Value) {
	for i := len(w.scopes) - 1; i >= 0; i-- {
		l, ok := w.scopes[i][name]
		if !ok {
			continue
		}
		l.all = mergeValue(l.all, v)
		l.counter, l.nonzero, l.listed = false, false, ""
		if l.table {
			w.spoil(l)
		}
		if i == len(w.scopes)-1 {
			// In the declaring block the new value replaces the old one:
			// code after it runs after it (a loop around the block
			// declares the local again), and a function defined before
			// it reads all.
			l.val = v
			l.lits, l.litsMore = literalOf(v), false
		} else {
			l.val = mergeValue(l.val, v)
			for _, lit := range literalOf(v) {
				// Bounded, as a local's replies are: each is checked at
				// each use.
				switch {
				case slices.Contains(l.lits, lit):
				case len(l.lits) < maxAlternatives:
					l.lits = append(slices.Clip(l.lits), lit)
				default:
					l.litsMore = true // reported where it is passed
				}
			}
		}
		if l.paramOf != nil && !l.assigned && w.guarded(l) {
			// A copy of the parameter (local y = v) keeps the value
			// a test of the parameter shows held (if v then v = 'x').
			for _, sc := range w.scopes {
				for _, c := range sc {
					if c.aliasOf == l && (c.guard == 0 || !slices.Contains(w.scopeIDs, c.guard)) {
						c.guard = l.guard
					}
				}
			}
		}
		if l.aliasOf != nil {
			// A copy of a parameter given another value holds that
			// value, no longer the parameter's: checked as a local.
			l.paramOf, l.param, l.aliasOf = nil, 0, nil
		}
		if l.paramOf != nil && !l.assigned && i != len(w.scopes)-1 && l.fn == w.depth && !w.guarded(l) && !l.typed {
			// A parameter first given a value on some paths (if c then
			// v = 'x' end) holds what a call passed it on the others:
			// one it may hold (see local.mayParams), as given where it
			// is declared.
			l.mayParams = []mayParam{{p: l, path: slices.Clone(w.scopeIDs[:i+1])}}
		}
		l.assigned, l.fnExpr = true, nil
		l.assigns++
		return
	}
}

// literalOf is v's text when v is exactly a literal, as a local's lits
// hold it.
func literalOf(v Value) []string {
	if v.Source == SourceLiteral && !v.Derived && v.Text != "" {
		return []string{v.Text}
	}
	return nil
}

// mergeValue is a value that may be old or v. When one of them is a value a
// key position must not hold (a literal, an argument, data read from
// Redis), the result keeps it, so that the use is still flagged; a key and
// nil (a local declared without a value) is the key, since nil reaches no
// key; otherwise it is SourceUnknown. A key is Extended when either is.
func mergeValue(old, v Value) Value {
	m := mergeValues(old, v)
	m.Extended = m.Source == SourceKey && (old.Extended || v.Extended)
	return m
}

func mergeValues(old, v Value) Value {
	switch {
	case old.Source == sourcePending:
		return v
	case v.Source == sourcePending:
		return old
	case old == v:
		return v
	case old.Source != v.Source && notKey(v.Source):
		v.Derived = true
	case old.Source != v.Source && notKey(old.Source):
		v = old
		v.Derived = true
	case old.Source == SourceNil && v.Source == SourceKey:
		v.Derived = true
	case old.Source == SourceKey && v.Source == SourceNil:
		v = old
		v.Derived = true
	case old.Source != v.Source:
		v = Value{Source: SourceUnknown}
	default:
		// Same source, another value (ARGV[1], then ARGV[2]): which
		// one is not known; the local's name is shown instead.
		v = Value{Source: v.Source, Derived: true}
	}
	return v
}

// notKey reports whether values of source s are never keys.
func notKey(s Source) bool {
	return s == SourceLiteral || s == SourceArgv || s == SourceRedis || s == SourceKeyChanged
}

// local returns what the local name was assigned; ok is false when name is
// not a local in scope.
func (w *walker) local(name string) (v Value, ok bool) {
	if l, _ := w.lookup(name); l != nil {
		return l.val, true
	}
	return Value{}, false
}

func (w *walker) isLocal(name string) bool {
	_, ok := w.local(name)
	return ok
}

func (w *walker) block(list []ast.Stmt) {
	w.push()
	w.stmts(list)
	w.pop()
}

func (w *walker) stmts(list []ast.Stmt) {
	var probes []func()
	for _, s := range list {
		w.stmt(s)
		// An early exit on a shape test (if h.map then return ... end)
		// leaves the rest of the block reading the other shape.
		if is, ok := s.(*ast.IfStmt); ok && (exits(is.Then) || exits(is.Else)) {
			probes = append(probes, w.probe(is.Condition))
			// The rest runs when the branch that exits does not.
			probes = append(probes, w.shape(is.Condition, !exits(is.Then)))
		}
	}
	for _, done := range probes {
		done()
	}
}

func (w *walker) stmt(s ast.Stmt) {
	switch s.(type) {
	case *ast.IfStmt, *ast.WhileStmt, *ast.NumberForStmt, *ast.GenericForStmt:
		// A statement that may not run its body (an elseif has no lines
		// of its own: it takes those of its if; repeat runs it once at
		// least).
		span := [2]int{s.Line(), s.LastLine()}
		if n := len(w.conds); n > 0 && (span[0] == 0 || span[1] == 0) {
			span = w.conds[n-1]
		}
		w.conds = append(w.conds, span)
		defer func() { w.conds = w.conds[:len(w.conds)-1] }()
	}
	switch s.(type) {
	case *ast.WhileStmt, *ast.NumberForStmt, *ast.GenericForStmt, *ast.RepeatStmt:
		w.loops = append(w.loops, [2]int{s.Line(), s.LastLine()})
		defer func() { w.loops = w.loops[:len(w.loops)-1] }()
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		// A name assigned is no read of it; a global one is reported
		// before the values are walked, which may read it (x = x + 1).
		for _, l := range s.Lhs {
			id, ok := l.(*ast.IdentExpr)
			if a, field := l.(*ast.AttrGetExpr); field && w.readOnlyTable(a.Object) != "" {
				// string.trim = ...: Redis 7 refuses it at run time.
				name := w.readOnlyTable(a.Object) + "[...]"
				pos, _ := w.identPos(a.Object.Line(), w.readOnlyTable(a.Object))
				if key, ok := a.Key.(*ast.StringExpr); ok {
					name = w.readOnlyTable(a.Object) + "." + key.Value
				} else {
					w.expr(a.Key)
				}
				if !w.dry {
					w.f.ReadOnlyWrites = append(w.f.ReadOnlyWrites, Global{Pos: pos, Name: name})
				}
				continue
			}
			if a, field := l.(*ast.AttrGetExpr); field {
				if t := w.tableLocal(a.Object); t != nil {
					w.spoil(t) // t.k = v
				}
				if id, ok := a.Object.(*ast.IdentExpr); ok && (replyField(a.Key) || !w.numberKey(a.Key) && !isStringKey(a.Key)) {
					// t.ok = ..., or t[f] = ... with f maybe 'ok': no
					// longer an array, as far as the checker can tell.
					w.open(id.Value)
				}
				if id, ok := a.Object.(*ast.IdentExpr); ok && (id.Value == "KEYS" || id.Value == "ARGV") && !w.isLocal(id.Value) {
					w.changed(id.Value) // ARGV[n] = v
					w.tableWrite(id, id.Value+"[...] =")
				}
			}
			if !ok {
				w.expr(l)
			} else if !w.isLocal(id.Value) {
				pos, _ := w.identPos(id.Line(), id.Value)
				w.f.Globals = append(w.f.Globals, Global{Pos: pos, Name: id.Value})
			}
		}
		// The replies of every value, before any is assigned (a, b = b, a).
		numArgs := w.numArgs(s.Rhs, len(s.Lhs))
		replies, nils, _ := w.replies(s.Rhs, len(s.Lhs), s.Line())
		isVal := make([]bool, len(s.Lhs))
		for i := range s.Lhs {
			isVal[i] = i < len(s.Rhs) && w.isValue(s.Rhs[i])
		}
		copies := w.testedCopies(s.Rhs, len(s.Lhs))
		andFalses := w.andFalseCopies(s.Rhs, len(s.Lhs))
		for i, l := range s.Lhs {
			id, ok := l.(*ast.IdentExpr)
			if !ok || !w.isLocal(id.Value) {
				continue
			}
			if l, _ := w.lookup(id.Value); l != nil && !isVal[i] {
				l.value = false
			}
			v := Value{Source: SourceUnknown}
			if i < len(s.Rhs) {
				v = w.value(s.Rhs[i])
			}
			w.assign(id.Value, v)
			w.setReply(id.Value, replies[i])
			w.setNil(id.Value, nils[i])
			w.setNumArg(id.Value, numArgs[i], elemAt(s.Rhs, i))
			w.setOrNotString(id.Value, elemAt(s.Rhs, i))
			if l, _ := w.lookup(id.Value); l != nil {
				l.indexOf = 0
			}
			w.setMayParam(id.Value, elemAt(s.Rhs, i))
			w.setAndFalse(id.Value, elemAt(s.Rhs, i), andFalses[i])
			// (Or given a value here: it holds it in the rest of this
			// block, in a nested one too, whatever it held before.)
			if copies[i] || isVal[i] {
				w.guard([]string{id.Value})
			}
		}
	case *ast.LocalAssignStmt:
		if len(s.Exprs) == 1 && len(s.Names) == 1 {
			if fn, ok := s.Exprs[0].(*ast.FunctionExpr); ok {
				w.declare(s.Names[0], Value{Source: SourceUnknown}) // local function f: f is in scope in its body
				l, _ := w.lookup(s.Names[0])
				l.fnExpr = fn // its recursive calls pass its parameters values too
				w.localFn(fn)
			}
		}
		numArgs := w.numArgs(s.Exprs, len(s.Names))
		replies, nils, ctors := w.replies(s.Exprs, len(s.Names), s.Line())
		isVal := make([]bool, len(s.Names))
		for i := range s.Names {
			isVal[i] = i < len(s.Exprs) && w.isValue(s.Exprs[i])
		}
		values := make([]Value, len(s.Names))
		for i := range s.Names {
			values[i] = Value{Source: SourceUnknown}
			if i < len(s.Exprs) {
				values[i] = w.value(s.Exprs[i])
			} else if !multiValued(s.Exprs) {
				values[i] = Value{Source: SourceNil}
			}
		}
		copies := w.testedCopies(s.Exprs, len(s.Names))
		andFalses := w.andFalseCopies(s.Exprs, len(s.Names))
		for i, n := range s.Names {
			w.declare(n, values[i])
			if i < len(s.Exprs) {
				if fn, ok := s.Exprs[i].(*ast.FunctionExpr); ok {
					l, _ := w.lookup(n)
					l.fnExpr = fn
					w.localFn(fn)
				}
				if t, ok := s.Exprs[i].(*ast.TableExpr); ok {
					l, _ := w.lookup(n)
					l.table, l.elems, l.fields = true, w.tableElems(t), w.tableFields(t)
					l.fieldsAll = allFieldsListed(t)
				}
			}
			w.setReply(n, replies[i])
			w.setNil(n, nils[i])
			w.setNumArg(n, numArgs[i], elemAt(s.Exprs, i))
			w.setOrNotString(n, elemAt(s.Exprs, i))
			w.setAndFalse(n, elemAt(s.Exprs, i), andFalses[i])
			if l, _ := w.lookup(n); l != nil && l.table {
				l.ctor = ctors[i]
			}
			if l, _ := w.lookup(n); l != nil {
				l.value = isVal[i]
			}
			if copies[i] {
				w.guard([]string{n})
			}
			// A copy of a parameter untested here is that parameter: the
			// checks of what the calls pass it follow it. (Untested here:
			// not guarded; a test elsewhere shows nothing here.)
			if i < len(s.Exprs) && (i < len(s.Exprs)-1 || len(s.Exprs) == len(s.Names)) {
				if id, ok := s.Exprs[i].(*ast.IdentExpr); ok {
					if p, _ := w.lookup(id.Value); p != nil && p.paramOf != nil && !p.assigned && p.fn == w.depth && !w.guarded(p) && !p.typed {
						if l, _ := w.lookup(n); l != nil && l != p {
							l.paramOf, l.param, l.aliasOf = p.paramOf, p.param, p
						}
					}
				}
			}
		}
	case *ast.FuncCallStmt:
		w.expr(s.Expr)
		// assert(v, ...) fails the script when v is nil or false, as if
		// not v then error(...) end does: v holds a value after it.
		if c, ok := s.Expr.(*ast.FuncCallExpr); ok && len(c.Args) > 0 {
			if id, ok := c.Func.(*ast.IdentExpr); ok && id.Value == "assert" && !w.isLocal("assert") {
				w.guard(w.nilGuards(c.Args[0], false))
			}
		}
	case *ast.DoBlockStmt:
		w.push()
		w.stmts(s.Stmts)
		w.popSure()
		// local v; do v = 'x' end: v holds a value after it.
		w.guardGiven(w.blockGives(s.Stmts))
	case *ast.WhileStmt:
		w.loop(func() {
			w.cond(s.Condition)
			// The body runs while the condition holds: while v and ...
			// do tests v as if v then does.
			w.guardedBlock(s.Stmts, w.nilGuards(s.Condition, false))
		})
		// Left only when the condition fails (no break): while not v
		// do ... end leaves v neither nil nor false.
		if !breaks(s.Stmts) {
			w.guard(w.nilGuards(s.Condition, true))
		}
		// while true do ... end is left only by a break: a local that
		// holds a value at each of them holds it after the loop.
		if alwaysTrue(s.Condition) {
			w.leftByBreaks(s.Stmts)
		}
	case *ast.RepeatStmt:
		var ends []string
		w.loop(func() {
			w.push()
			w.stmts(s.Stmts)
			w.cond(s.Condition)
			// (Before the body's own locals go out of scope: the
			// condition may name them.)
			ends = slices.DeleteFunc(w.nilGuards(s.Condition, false), func(n string) bool {
				return w.scopes[len(w.scopes)-1][n] != nil
			})
			if breaks(s.Stmts) {
				w.pop()
			} else {
				w.popSure() // (the body runs once at least)
			}
		})
		// Left only when the condition holds (no break): repeat ...
		// until v leaves v neither nil nor false.
		if !breaks(s.Stmts) {
			w.guard(ends)
		}
		// repeat ... until nil (or false) is left only by a break, as
		// while true is.
		if alwaysFalse(s.Condition) {
			w.leftByBreaks(s.Stmts)
		}
		// local v; repeat v = (v or 0) + 1 until v > 3: the body runs
		// once at least, so with no break a value it gives v on every
		// path is held after it.
		if !breaks(s.Stmts) {
			w.guardGiven(w.blockGives(s.Stmts))
		}
	case *ast.IfStmt:
		defer w.probe(s.Condition)()
		defer w.testedHere(s)()
		w.cond(s.Condition)
		notNil, isNil := w.nilGuards(s.Condition, false), w.nilGuards(s.Condition, true)
		// A local given a value on every path of the if holds none of
		// its earlier literals after it.
		for _, n := range w.givenOnEveryPath(s) {
			if l, _ := w.lookup(n); l != nil {
				l.lits, l.litsMore = nil, false
				l.andFalse = false // (set again below by one in the if)
			}
		}
		// (A number compared with a number that is not 0 on the side
		// where 0 is not, if n < 0 then n = -n end, is not 0 there: its
		// negation is not -0.)
		nonzero, nonzeroElse := w.nonzeroGuards(s.Condition, false), w.nonzeroGuards(s.Condition, true)
		// (n % d == 0 shows n / d whole; see local.wholeGuard.)
		whole, wholeElse := w.wholeGuards(s.Condition, false), w.wholeGuards(s.Condition, true)
		done := w.shape(s.Condition, true)
		restore := w.keepLocals(alwaysFalse(s.Condition))
		w.push()
		w.markFalse(w.falseNames(s.Condition, true))
		w.markNilOnly(w.nilOnlyNames(s.Condition, true), w.fullGuards(s.Condition, false))
		w.guardNonzero(nonzero)
		w.guardWhole(whole)
		n := len(w.pconds)
		w.pconds = append(w.pconds, w.paramConds(s.Condition, true)...)
		w.guardedBlock(s.Then, notNil)
		w.pconds = w.pconds[:n]
		w.pop()
		restore()
		done()
		done = w.shape(s.Condition, false)
		restore = w.keepLocals(alwaysTrue(s.Condition))
		w.push()
		w.markFalse(w.falseNames(s.Condition, false))
		w.markNilOnly(w.nilOnlyNames(s.Condition, false), w.fullGuards(s.Condition, true))
		w.guardNonzero(nonzeroElse)
		w.guardWhole(wholeElse)
		w.pconds = append(w.pconds, w.paramConds(s.Condition, false)...)
		w.guardedBlock(s.Else, isNil)
		w.pconds = w.pconds[:n]
		w.pop()
		restore()
		done()
		// An early exit on a nil test (if not v then return '' end)
		// leaves v neither nil nor false for the rest of this block; so
		// does a break, in the rest of this block of the loop's body (if
		// not v then break end). All this is scoped to the block: past the
		// loop the break's path goes on.
		switch {
		case exits(s.Then) || endsWithBreak(s.Then):
			w.guard(isNil)
			w.markNilOnly(w.nilOnlyNames(s.Condition, false), w.fullGuards(s.Condition, true))
			w.exitConds(s.Condition, false)
			w.guardNonzero(nonzeroElse)
			w.guardWhole(wholeElse)
		case exits(s.Else) || endsWithBreak(s.Else):
			w.guard(notNil)
			w.markNilOnly(w.nilOnlyNames(s.Condition, true), w.fullGuards(s.Condition, false))
			w.exitConds(s.Condition, true)
			w.guardNonzero(nonzero)
			w.guardWhole(whole)
		default:
			// if not v then v = 'none' end: v holds a value after it.
			var given []string
			w.judged = append(w.judged, []ast.Stmt{s})
			for _, n := range isNil {
				if w.givesValue(s.Then, n) {
					given = append(given, n)
				}
			}
			w.judged = w.judged[:len(w.judged)-1]
			w.guard(given)
		}
		// local v; if c then v = 'x' else v = 'y' end: v holds a value
		// after it, as it does on every path that goes on.
		every := w.givenOnEveryPath(s)
		w.guardGiven(every)
		// if c then v = 'x' else break end: so in the rest of this block
		// of the loop's body (guarded only, as above).
		w.guard(w.givenPastBreak(s))
		for _, n := range every {
			if l, _ := w.lookup(n); l != nil {
				l.nilv = nilSource{}
			}
		}
	case *ast.NumberForStmt:
		w.numberArg(s.Init)
		w.numberArg(s.Limit)
		w.numberArg(s.Step)
		w.expr(s.Init)
		w.expr(s.Limit)
		w.expr(s.Step)
		w.loop(func() {
			w.push()
			w.declare(s.Name, Value{Source: SourceUnknown})
			l, _ := w.lookup(s.Name)
			l.counter = true
			start, ok := w.constNumber(s.Init)
			step := 1.0
			if s.Step != nil {
				var known bool
				if step, known = w.constNumber(s.Step); !known {
					step = 0
				}
			}
			// The counter runs from start toward limit: it is never 0
			// when it counts away from 0 from a number that is not 0, or
			// toward a limit that is not 0 from its side (for i = #t, 1,
			// -1), or between two numbers on one side of 0.
			limit, limitOK := w.constNumber(s.Limit)
			// for i = 1, #ARGV (or for i = #ARGV, 1, -1): ARGV[i] is one
			// of the args sent, never nil.
			// (Whole numbers: for i = 1, #ARGV, 0.5 reads ARGV[1.5].)
			whole := func(f float64) bool { return f == math.Trunc(f) }
			switch {
			case ok && start >= 1 && whole(start) && step > 0 && whole(step) && w.lenOfList(s.Limit) != "":
				l.listed = w.lenOfList(s.Limit)
			case limitOK && limit >= 1 && step < 0 && whole(step) && w.lenOfList(s.Init) != "":
				l.listed = w.lenOfList(s.Init)
			}
			l.nonzero = ok && (start > 0 && step > 0 || start < 0 && step < 0) ||
				limitOK && (limit > 0 && step < 0 || limit < 0 && step > 0) ||
				ok && limitOK && (start > 0 && limit > 0 || start < 0 && limit < 0)
			w.stmts(s.Stmts)
			w.pop()
		})
		// local v = false; for i = 1, 3 do v = tostring(i) end: a body
		// that runs and gives v a value leaves it holding one.
		var given []string
		for _, n := range assignedNames(s.Stmts) {
			if w.forGives(s, n) {
				given = append(given, n)
			}
		}
		w.guardGiven(given)
	case *ast.GenericForStmt:
		listed := w.listedReply(s.Exprs)
		w.exprs(s.Exprs)
		w.loop(func() { w.forIn(s, listed) })
	case *ast.FuncDefStmt:
		if s.Name != nil {
			if id, ok := s.Name.Func.(*ast.IdentExpr); ok && s.Name.Receiver == nil {
				if w.isLocal(id.Value) {
					w.setReply(id.Value, Return{Kind: ReturnUnknown}) // function f() ... end replaces the local f
				} else {
					pos, _ := w.tokenPos(id.Line(), id.Value, true)
					w.f.Globals = append(w.f.Globals, Global{Pos: pos, Name: id.Value, Function: true})
				}
			} else {
				w.expr(s.Name.Func) // function t.f() reads t
			}
			w.expr(s.Name.Receiver)
		}
		if s.Func != nil {
			w.function(s.Func)
		}
	case *ast.ReturnStmt:
		w.elemCalls, w.altCalls, w.elemAlts = nil, nil, nil
		if w.depth == 0 {
			w.ret(s)
		}
		if len(w.fns) > 0 && !w.dry {
			f := &w.f.Funcs[w.funcIndex(w.fns[len(w.fns)-1])-1]
			if !slices.Contains(f.Returns, s.Line()) {
				f.Returns = append(f.Returns, s.Line())
			}
		}
		if len(w.fns) > 0 {
			v := Value{Source: SourceNil}
			if len(s.Exprs) > 0 {
				v = w.value(s.Exprs[0])
				w.retElem(s.Exprs[0])
			}
			w.result(v)
		}
		for _, e := range s.Exprs {
			if w.depth == 0 && (w.tableLocal(e) != nil || w.listTable(e)) {
				// The script ends here: nothing changes the table after.
				w.tableRead(e)
				continue
			}
			if id, ok := e.(*ast.IdentExpr); ok && w.depth == 0 {
				w.keep(id) // the script ends here
			}
			w.expr(e)
		}
		if w.depth == 0 && len(w.elemCalls) > 0 && len(w.f.Returns) > 0 {
			// The calls of a returned table's values, now that they are
			// recorded: the words of each choose its reply's shape.
			r := &w.f.Returns[len(w.f.Returns)-1]
			for i, e := range w.elemCalls {
				if c, ok := w.calls[e]; ok && e != nil && i < len(r.Elems) && r.Elems[i].Kind == ReturnCall && r.Elems[i].Local == "" {
					r.Elems[i].Call = c
				}
			}
		}
		if w.depth == 0 && len(w.altCalls) > 0 && len(w.f.Returns) > 0 {
			// The calls of a returned and/or expression, as for a table.
			r := &w.f.Returns[len(w.f.Returns)-1]
			for _, a := range w.altCalls {
				w.setAltCall(r, a)
			}
		}
		if w.depth == 0 && len(w.elemAlts) > 0 && len(w.f.Returns) > 0 {
			// Those of one among the values of a returned table.
			r := &w.f.Returns[len(w.f.Returns)-1]
			for _, a := range w.elemAlts {
				if a.elem < len(r.Elems) && r.Elems[a.elem].Kind == ReturnEither {
					w.setAltCall(&r.Elems[a.elem], a.altCall)
				}
			}
		}
		w.elemCalls, w.altCalls, w.elemAlts = nil, nil, nil
	}
}

// keepLocals, for a branch no run takes (dead: the body of if false, the
// else of if true), saves the locals in scope, and the function it returns
// puts them back once the branch is walked: its calls are still checked,
// but what it gives the locals around it (x = nil) never happens, and no
// path past the if holds it.
func (w *walker) keepLocals(dead bool) func() {
	if !dead {
		return func() {}
	}
	saved := map[*local]local{}
	for _, sc := range w.scopes {
		for _, l := range sc {
			saved[l] = *l
		}
	}
	return func() {
		for l, v := range saved {
			*l = v
		}
	}
}

// guardedBlock walks a block in which the locals in guards hold neither
// nil nor false.
// givesValue reports whether a statement of list (not in a block in it)
// assigns name a value that is neither nil nor false: a string, a number,
// true, a table, a function, a concatenation or arithmetic.
func (w *walker) givesValue(list []ast.Stmt, name string) bool {
	for _, st := range list {
		a, ok := st.(*ast.AssignStmt)
		if !ok {
			continue
		}
		for i, l := range a.Lhs {
			if id, ok := l.(*ast.IdentExpr); !ok || id.Value != name || i >= len(a.Rhs) {
				continue
			}
			if w.isValue(a.Rhs[i]) {
				return true
			}
		}
	}
	return false
}

// isValue reports whether e is neither nil nor false whenever the script
// goes on past it: a literal, a table, a function, a concatenation, a
// number's arithmetic, negation or length, a call of a library function
// that returns a string or number or raises an error (valueFuncs), a key
// or arg at an index written as a number (KEYS[2], ARGV[1]: the generated
// callers send every declared one, and the checker refuses an index past
// them; not one past the fixed ones before a variadic, which may be
// shorter), x or of one of those (redis.call('GET', k) or 'none'), or x
// and y of two (true and 'x'). ARGV[i] is not: a dynamic index reads a
// variadic tail, which may be shorter.
func (w *walker) isValue(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.StringExpr, *ast.NumberExpr, *ast.TrueExpr, *ast.TableExpr, *ast.FunctionExpr, *ast.StringConcatOpExpr, *ast.ArithmeticOpExpr,
		*ast.UnaryMinusOpExpr, *ast.UnaryLenOpExpr:
		return true
	case *ast.LogicalOpExpr:
		// a or b gives b when a is nil or false; a and b gives a then, b
		// else: a value when both are.
		return x.Operator == "or" && w.isValue(x.Rhs) || x.Operator == "and" && w.isValue(x.Lhs) && w.isValue(x.Rhs)
	case *ast.IdentExpr:
		// The counter of a numeric for read in its body (see forGives).
		if slices.Contains(w.counters, x.Value) {
			return true
		}
		// A copy of a local that holds a value (local k = KEYS[1]), not
		// assigned by a function nor in the statement read.
		l, _ := w.lookup(x.Value)
		return l != nil && l.value && !l.fnAssigned && !slices.ContainsFunc(w.judged, func(list []ast.Stmt) bool { return assigns(list, x.Value) })
	case *ast.AttrGetExpr:
		id, ok := x.Object.(*ast.IdentExpr)
		if !ok || (id.Value != "KEYS" && id.Value != "ARGV") || w.isLocal(id.Value) {
			return false
		}
		if i, ok := x.Key.(*ast.IdentExpr); ok {
			// ARGV[i] in for i = 1, #ARGV, i not assigned in the
			// statement read.
			l, _ := w.lookup(i.Value)
			return l != nil && l.counter && l.listed == id.Value && !slices.ContainsFunc(w.judged, func(list []ast.Stmt) bool { return assigns(list, i.Value) })
		}
		n, ok := x.Key.(*ast.NumberExpr)
		if !ok {
			return false
		}
		i, err := strconv.Atoi(n.Value)
		// Past the fixed ones, a variadic list, which may be shorter:
		// unless the script reads its length or tests an element of it
		// (if #ARGV < 3 then return end, if ARGV[3] then v = ARGV[3]),
		// anywhere, as the callers' check of such a list allows (see
		// Arg.Indexed).
		fixed := w.f.fixedCount(id.Value)
		return err == nil && i >= 1 && (fixed < 0 || i <= fixed || i <= w.f.Measured[id.Value] || i <= w.measuredAll[id.Value])
	case *ast.FuncCallExpr:
		if x.Method != "" {
			// s:sub(1, 3), s:format(...): a string's method (any other
			// value but a table raises an error; a table written in
			// place or held by a local may have a function of that name).
			_, table := x.Receiver.(*ast.TableExpr)
			if id, ok := x.Receiver.(*ast.IdentExpr); ok {
				l, _ := w.lookup(id.Value)
				table = table || l == nil || l.table
			}
			return valueFuncs["string."+x.Method] && !table
		}
		switch f := x.Func.(type) {
		case *ast.IdentExpr:
			return valueFuncs[f.Value] && !w.isLocal(f.Value)
		case *ast.AttrGetExpr:
			lib, ok := f.Object.(*ast.IdentExpr)
			name, ok2 := f.Key.(*ast.StringExpr)
			return ok && ok2 && valueFuncs[lib.Value+"."+name.Value] && !w.isLocal(lib.Value)
		}
	}
	return false
}

// lenOfList is "ARGV" or "KEYS" when e is #ARGV or #KEYS, "" otherwise.
func (w *walker) lenOfList(e ast.Expr) string {
	u, ok := e.(*ast.UnaryLenOpExpr)
	if !ok {
		return ""
	}
	if id, ok := u.Expr.(*ast.IdentExpr); ok && (id.Value == "ARGV" || id.Value == "KEYS") && !w.isLocal(id.Value) {
		return id.Value
	}
	return ""
}

// valueFuncs are the library functions of Redis's Lua whose first result is
// always a string or a number (or that raise an error): a local given one
// holds neither nil nor false. (Not tonumber, string.match, string.find,
// string.byte, cjson.decode, redis.call, redis.pcall: those may give nil or
// false.)
var valueFuncs = map[string]bool{
	"tostring": true, "type": true,
	"string.format": true, "string.sub": true, "string.rep": true, "string.upper": true, "string.lower": true,
	"string.len": true, "string.reverse": true, "string.char": true, "string.gsub": true,
	"table.concat": true, "table.getn": true,
	"cjson.encode": true, "cmsgpack.pack": true, "struct.pack": true,
	"redis.sha1hex": true,
	"math.floor":    true, "math.ceil": true, "math.abs": true, "math.max": true, "math.min": true, "math.fmod": true,
	"math.sqrt": true, "math.pow": true, "math.random": true,
	"bit.band": true, "bit.bor": true, "bit.bxor": true, "bit.bnot": true, "bit.lshift": true, "bit.rshift": true,
	"bit.arshift": true, "bit.tobit": true, "bit.tohex": true,
}

// givenOnEveryPath lists the names an if assigns a value that is neither
// nil nor false on each of its paths that goes on after it (a branch that
// returns or calls error does not): it has an else, and each branch gives
// the value in its own statements or in an if of them that does so itself
// (or the condition is true: the missing else is no path).
func (w *walker) givenOnEveryPath(s *ast.IfStmt) []string {
	if len(s.Else) == 0 && !alwaysTrue(s.Condition) {
		return nil
	}
	names := assignedNames(append(slices.Clip(s.Then), s.Else...))
	var given []string
	for _, n := range names {
		if w.ifGives(s, n) {
			given = append(given, n)
		}
	}
	return given
}

// givenPastBreak lists the names an if one branch of which ends with a
// break gives a value that is neither nil nor false in its other branch:
// the only one that goes on after it, in the loop's body.
func (w *walker) givenPastBreak(s *ast.IfStmt) []string {
	var other []ast.Stmt
	switch {
	case len(s.Else) == 0:
		return nil
	case endsWithBreak(s.Then):
		other = s.Else
	case endsWithBreak(s.Else):
		other = s.Then
	default:
		return nil
	}
	w.judged = append(w.judged, []ast.Stmt{s})
	defer func() { w.judged = w.judged[:len(w.judged)-1] }()
	var given []string
	for _, n := range assignedNames(other) {
		if w.branchGives(other, n) {
			given = append(given, n)
		}
	}
	return given
}

// endsWithBreak reports whether list ends with a break: the rest of the
// loop's body never runs after it.
func endsWithBreak(list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	_, ok := list[len(list)-1].(*ast.BreakStmt)
	return ok
}

// ifGives reports whether every path of an if that goes on after it gives
// name a value that is neither nil nor false.
func (w *walker) ifGives(s *ast.IfStmt, name string) bool {
	w.judged = append(w.judged, []ast.Stmt{s})
	defer func() { w.judged = w.judged[:len(w.judged)-1] }()
	// A branch no run takes (if false, the else of if true) is no path:
	// elseif false then break end leaves the other branches' values.
	switch {
	case alwaysFalse(s.Condition):
		return w.branchGives(s.Else, name)
	case alwaysTrue(s.Condition):
		return w.branchGives(s.Then, name)
	}
	return len(s.Else) > 0 && w.branchGives(s.Then, name) && w.branchGives(s.Else, name)
}

// branchGives reports whether a branch leaves the script or, read from top
// to bottom, ends with name given a value that is neither nil nor false by
// its own statements (an assignment, or an if that gives it on every path).
// A local of that name declared in the branch hides the one outside.
func (w *walker) branchGives(list []ast.Stmt, name string) bool {
	if exits(list) {
		return true
	}
	gives := false
	for _, st := range list {
		var hidden bool
		if gives, hidden = w.givesAfter(gives, st, name); hidden {
			return false
		}
	}
	return gives
}

// givesAfter is branchGives' reading of one statement, st: whether name
// holds a value after it, given whether it did before (gives); hidden when
// st declares a local of that name.
func (w *walker) givesAfter(gives bool, st ast.Stmt, name string) (bool, bool) {
	switch x := st.(type) {
	case *ast.LocalAssignStmt:
		if slices.Contains(x.Names, name) {
			return false, true
		}
	case *ast.AssignStmt:
		for i, l := range x.Lhs {
			if id, ok := l.(*ast.IdentExpr); ok && id.Value == name {
				gives = i < len(x.Rhs) && w.givesValue([]ast.Stmt{x}, name)
			}
		}
	case *ast.IfStmt:
		if w.ifGives(x, name) {
			gives = true
		} else if assigns(x.Then, name) || assigns(x.Else, name) {
			gives = false // it may assign nil there
		}
	case *ast.NumberForStmt:
		if w.forGives(x, name) {
			gives = true
		} else if assigns([]ast.Stmt{x}, name) {
			gives = false
		}
	case *ast.DoBlockStmt:
		if w.branchGives(x.Stmts, name) {
			gives = true
		} else if assigns([]ast.Stmt{x}, name) {
			gives = false
		}
	case *ast.RepeatStmt:
		if !breaks(x.Stmts) && w.branchGives(x.Stmts, name) {
			gives = true
		} else if assigns([]ast.Stmt{x}, name) {
			gives = false
		}
	case *ast.WhileStmt, *ast.GenericForStmt:
		if assigns([]ast.Stmt{x}, name) {
			gives = false
		}
	}
	return gives, false
}

// blockGives lists the names a block that runs once at least (a do block,
// the body of a repeat no break leaves) gives a value that is neither nil
// nor false on every path that goes on after it (see branchGives).
func (w *walker) blockGives(list []ast.Stmt) []string {
	w.judged = append(w.judged, list)
	defer func() { w.judged = w.judged[:len(w.judged)-1] }()
	var given []string
	for _, n := range assignedNames(list) {
		if w.branchGives(list, n) {
			given = append(given, n)
		}
	}
	return given
}

// forGives reports whether a numeric for leaves name holding a value that
// is neither nil nor false: its bounds are numbers that make its body run
// at least once (for i = 1, 3), the body has no break, and each run of it
// ends with name given a value (branchGives).
func (w *walker) forGives(s *ast.NumberForStmt, name string) bool {
	if s.Name == name || breaks(s.Stmts) {
		return false
	}
	w.judged = append(w.judged, []ast.Stmt{s})
	defer func() { w.judged = w.judged[:len(w.judged)-1] }()
	start, ok := w.constNumber(s.Init)
	limit, limitOK := w.constNumber(s.Limit)
	step, stepOK := 1.0, true
	if s.Step != nil {
		step, stepOK = w.constNumber(s.Step)
	}
	if !ok || !limitOK || !stepOK || !(step > 0 && start <= limit || step < 0 && start >= limit) {
		return false
	}
	// (Its counter is a number in the body, v = i gives a value, unless
	// the body declares a local of its name.)
	if !slices.ContainsFunc(s.Stmts, func(st ast.Stmt) bool {
		l, ok := st.(*ast.LocalAssignStmt)
		return ok && slices.Contains(l.Names, s.Name)
	}) {
		w.counters = append(w.counters, s.Name)
		defer func() { w.counters = w.counters[:len(w.counters)-1] }()
	}
	return w.branchGives(s.Stmts, name)
}

// assignedNames are the names an assignment of list, or of an if or a
// numeric for in it, gives a value, each once.
func assignedNames(list []ast.Stmt) []string {
	var names []string
	var collect func(list []ast.Stmt)
	collect = func(list []ast.Stmt) {
		for _, st := range list {
			switch x := st.(type) {
			case *ast.AssignStmt:
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.IdentExpr); ok && !slices.Contains(names, id.Value) {
						names = append(names, id.Value)
					}
				}
			case *ast.IfStmt:
				collect(x.Then)
				collect(x.Else)
			case *ast.NumberForStmt:
				collect(x.Stmts)
			}
		}
	}
	collect(list)
	return names
}

// testedHere makes a read of a local holding a reply in the condition of
// the if s, and in its branches, a test of it there only: the function it
// returns, called once s is walked, takes it back for the locals the
// condition reads that s does not assign. Past the if, the reply is as
// untested as before it (if v then ... end, if not v then redis.call(...)
// end, then v .. 'x': false when the reply was nil), unless a branch
// leaves or gives it a value, which the guards past the if tell. (Not
// when a branch leaves other than by a return, error() or break last in
// it, if not v then if c then return 1 else return 2 end end, which they
// do not tell: the reads count as they did.)
func (w *walker) testedHere(s *ast.IfStmt) func() {
	type read struct {
		l  *local
		ns nilSource
	}
	for _, b := range [][]ast.Stmt{s.Then, s.Else} {
		if !exits(b) && !endsWithBreak(b) && leaves(b) {
			return func() {}
		}
	}
	var reads []read
	for _, n := range exprNames(s.Condition, nil) {
		if l, _ := w.lookup(n); l != nil && l.nilv.set && !l.nilv.tested && !assigns([]ast.Stmt{s}, n) &&
			!slices.ContainsFunc(reads, func(r read) bool { return r.l == l }) {
			reads = append(reads, read{l, l.nilv})
		}
	}
	ops := len(w.f.Operations)
	return func() {
		for _, r := range reads {
			// (Not one an operation there was recorded on: each
			// assignment is reported once, see operation.)
			recorded := slices.ContainsFunc(w.f.Operations[ops:], func(o Operation) bool {
				return o.Operand.Type == OperandReply && o.Operand.Call == r.ns.call && !o.Tested
			})
			if ns := r.l.nilv; ns.set && ns.call == r.ns.call && ns.tonumber == r.ns.tonumber && ns.some == r.ns.some && !recorded {
				r.l.nilv.tested = false
			}
		}
	}
}

// leaves reports whether a statement of list, or of a block in it (not a
// function's body), is a return, a break or a call of error.
func leaves(list []ast.Stmt) bool {
	for _, st := range list {
		switch x := st.(type) {
		case *ast.ReturnStmt, *ast.BreakStmt:
			return true
		case *ast.FuncCallStmt:
			if exits([]ast.Stmt{x}) {
				return true
			}
		}
		if slices.ContainsFunc(blocksOf(st), leaves) {
			return true
		}
	}
	return false
}

// exprNames appends to names those e reads (not in a function written in
// it, nor as an argument of a call other than type(v) and tonumber(v): a
// function may deal with nil, if not valid(v) then return end, where the
// checker cannot tell).
func exprNames(e ast.Expr, names []string) []string {
	switch x := e.(type) {
	case *ast.IdentExpr:
		names = append(names, x.Value)
	case *ast.AttrGetExpr:
		names = exprNames(x.Key, exprNames(x.Object, names))
	case *ast.FuncCallExpr:
		if id, ok := x.Func.(*ast.IdentExpr); ok && (id.Value == "type" || id.Value == "tonumber") && x.Receiver == nil {
			for _, a := range x.Args {
				names = exprNames(a, names)
			}
		}
	case *ast.LogicalOpExpr:
		names = exprNames(x.Rhs, exprNames(x.Lhs, names))
	case *ast.RelationalOpExpr:
		names = exprNames(x.Rhs, exprNames(x.Lhs, names))
	case *ast.StringConcatOpExpr:
		names = exprNames(x.Rhs, exprNames(x.Lhs, names))
	case *ast.ArithmeticOpExpr:
		names = exprNames(x.Rhs, exprNames(x.Lhs, names))
	case *ast.UnaryNotOpExpr:
		names = exprNames(x.Expr, names)
	case *ast.UnaryMinusOpExpr:
		names = exprNames(x.Expr, names)
	case *ast.UnaryLenOpExpr:
		names = exprNames(x.Expr, names)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			names = exprNames(f.Value, exprNames(f.Key, names))
		}
	}
	return names
}

// assigns reports whether a statement of list, or of a block in it (not a
// function's body), assigns name.
func assigns(list []ast.Stmt, name string) bool {
	for _, st := range list {
		if x, ok := st.(*ast.AssignStmt); ok {
			for _, l := range x.Lhs {
				if id, ok := l.(*ast.IdentExpr); ok && id.Value == name {
					return true
				}
			}
		}
		if slices.ContainsFunc(blocksOf(st), func(b []ast.Stmt) bool { return assigns(b, name) }) {
			return true
		}
	}
	return false
}

// givesValues reports whether a function body of list gives a value on
// every path: it ends with a return of one value or more, and so does
// every return in it.
func givesValues(list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	if r, ok := list[len(list)-1].(*ast.ReturnStmt); !ok || len(r.Exprs) == 0 {
		return false
	}
	var each func([]ast.Stmt) bool
	each = func(list []ast.Stmt) bool {
		for _, st := range list {
			if r, ok := st.(*ast.ReturnStmt); ok && len(r.Exprs) == 0 {
				return false
			}
			for _, b := range blocksOf(st) {
				if !each(b) {
					return false
				}
			}
		}
		return true
	}
	return each(list)
}

// nilReturns reports whether a function body of list gives nil alone
// (luaNil) or false alone on every path: each of its returns gives nil
// (or nothing) or each false, and an end without a return nil.
func nilReturns(list []ast.Stmt) (luaNil, ok bool) {
	nils, falses := 0, 0
	var each func([]ast.Stmt) bool
	each = func(list []ast.Stmt) bool {
		for _, st := range list {
			if r, ok := st.(*ast.ReturnStmt); ok {
				switch {
				case len(r.Exprs) == 0:
					nils++
				case isNilExpr(r.Exprs[0]):
					nils++
				case isFalseExpr(r.Exprs[0]):
					falses++
				default:
					return false
				}
			}
			for _, b := range blocksOf(st) {
				if !each(b) {
					return false
				}
			}
		}
		return true
	}
	if !each(list) {
		return false, false
	}
	if len(list) == 0 {
		nils++
	} else if _, ok := list[len(list)-1].(*ast.ReturnStmt); !ok {
		nils++ // (an end it may reach)
	}
	return falses == 0, nils == 0 || falses == 0
}

func isNilExpr(e ast.Expr) bool   { _, ok := e.(*ast.NilExpr); return ok }
func isFalseExpr(e ast.Expr) bool { _, ok := e.(*ast.FalseExpr); return ok }

// returnsValue reports whether a function body of list has a return of a
// value (not in a function it defines).
func returnsValue(list []ast.Stmt) bool {
	for _, st := range list {
		if r, ok := st.(*ast.ReturnStmt); ok && len(r.Exprs) > 0 {
			return true
		}
		for _, b := range blocksOf(st) {
			if returnsValue(b) {
				return true
			}
		}
	}
	return false
}

// blocksOf lists the statement lists st holds: an if's branches, a do
// block's or a loop's body (not a function's).
func blocksOf(st ast.Stmt) [][]ast.Stmt {
	switch x := st.(type) {
	case *ast.IfStmt:
		return [][]ast.Stmt{x.Then, x.Else}
	case *ast.DoBlockStmt:
		return [][]ast.Stmt{x.Stmts}
	case *ast.WhileStmt:
		return [][]ast.Stmt{x.Stmts}
	case *ast.RepeatStmt:
		return [][]ast.Stmt{x.Stmts}
	case *ast.NumberForStmt:
		return [][]ast.Stmt{x.Stmts}
	case *ast.GenericForStmt:
		return [][]ast.Stmt{x.Stmts}
	}
	return nil
}

// guardNonzero records that the locals named hold a number that is not 0
// in the innermost scope (see local.nonzeroGuard).
func (w *walker) guardNonzero(names []string) {
	for _, n := range names {
		if l, _ := w.lookup(n); l != nil && !(l.nonzeroGuard != 0 && slices.Contains(w.scopeIDs, l.nonzeroGuard)) {
			l.nonzeroGuard = w.scopeIDs[len(w.scopeIDs)-1]
		}
	}
}

// nonzeroLocal reports whether e is a local known to hold a number that is
// not 0 where the walker is: the variable of a numeric for that never
// reaches 0, or one a condition around shows not to be 0 (n < 0, n ~= 0,
// not assigned since; not one a function assigns, which a call may have).
func (w *walker) nonzeroLocal(e ast.Expr) bool {
	id, ok := e.(*ast.IdentExpr)
	if !ok {
		return false
	}
	l, _ := w.lookup(id.Value)
	if l == nil {
		return false
	}
	return l.counter && l.nonzero ||
		!l.fnAssigned && l.nonzeroGuard != 0 && slices.Contains(w.scopeIDs, l.nonzeroGuard)
}

// nonzeroGuards are the locals a condition, when it is true (or false,
// with isFalse), shows to hold a number that is not 0: n compared with a
// number so that 0 fails (n < 0, n > 0, n >= 1, n ~= 0, n == 5, 0 < n), and
// either side of and (with isFalse: of or, and the comparison turned).
// Comparisons are of numbers: Lua fails the script on a string and a
// number, and NaN, which passes some, is no 0 either.
func (w *walker) nonzeroGuards(e ast.Expr, isFalse bool) []string {
	switch x := e.(type) {
	case *ast.RelationalOpExpr:
		op, lhs, rhs := x.Operator, x.Lhs, x.Rhs
		if _, ok := w.constNumber(lhs); ok { // 0 < n: n > 0
			lhs, rhs = rhs, lhs
			op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "~=": "~="}[op]
		}
		if isFalse {
			op = map[string]string{"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "~=", "~=": "=="}[op]
		}
		id, ok := lhs.(*ast.IdentExpr)
		if !ok || !w.isLocal(id.Value) {
			return nil
		}
		c, ok := w.constNumber(rhs)
		if !ok {
			return nil
		}
		if op == "<" && c <= 0 || op == "<=" && c < 0 || op == ">" && c >= 0 || op == ">=" && c > 0 || op == "~=" && c == 0 || op == "==" && c != 0 {
			return []string{id.Value}
		}
	case *ast.UnaryNotOpExpr:
		return w.nonzeroGuards(x.Expr, !isFalse)
	case *ast.LogicalOpExpr:
		if (x.Operator == "or") == isFalse {
			return append(w.nonzeroGuards(x.Lhs, isFalse), w.nonzeroGuards(x.Rhs, isFalse)...)
		}
	}
	return nil
}

// wholeGuard is a local a condition shows a divisor divides evenly.
type wholeGuard struct {
	name, by string
	byLocal  *local // the local by names, nil for a number
}

// wholeGuards are the locals a condition, when it is true (or false, with
// isFalse), shows to be divided evenly by a number or another local: n %
// d == 0 (0 == n % d; n % d ~= 0 when false), either side of and (with
// isFalse: of or). In Lua n % 0 is NaN, which equals nothing: d is not 0
// there either.
func (w *walker) wholeGuards(e ast.Expr, isFalse bool) []wholeGuard {
	switch x := e.(type) {
	case *ast.RelationalOpExpr:
		lhs, rhs := x.Lhs, x.Rhs
		if c, ok := w.constNumber(lhs); ok && c == 0 {
			lhs, rhs = rhs, lhs
		}
		if c, ok := w.constNumber(rhs); !ok || c != 0 || x.Operator != map[bool]string{false: "==", true: "~="}[isFalse] {
			return nil
		}
		m, ok := lhs.(*ast.ArithmeticOpExpr)
		if !ok || m.Operator != "%" {
			return nil
		}
		n, ok := m.Lhs.(*ast.IdentExpr)
		if !ok || !w.isLocal(n.Value) {
			return nil
		}
		switch d := m.Rhs.(type) {
		case *ast.NumberExpr:
			// A whole number: by a fraction, n % d is computed with
			// rounding, and 21 % 0.7 == 0 while 21 / 0.7 is
			// 30.000000000000004.
			if f, ok := w.constNumber(d); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return []wholeGuard{{n.Value, d.Value, nil}}
			}
		case *ast.IdentExpr:
			// (Nor a local that holds such a number: local d = 0.7.)
			if f, ok := w.constNumber(d); ok && (f != math.Trunc(f) || math.Abs(f) >= 1<<53) {
				return nil
			}
			if dl, _ := w.lookup(d.Value); dl != nil && d.Value != n.Value {
				return []wholeGuard{{n.Value, d.Value, dl}}
			}
		}
	case *ast.UnaryNotOpExpr:
		return w.wholeGuards(x.Expr, !isFalse)
	case *ast.LogicalOpExpr:
		if (x.Operator == "or") == isFalse {
			return append(w.wholeGuards(x.Lhs, isFalse), w.wholeGuards(x.Rhs, isFalse)...)
		}
	}
	return nil
}

// guardWhole records the guards in the innermost scope (see
// local.wholeGuard).
func (w *walker) guardWhole(guards []wholeGuard) {
	for _, g := range guards {
		if l, _ := w.lookup(g.name); l != nil {
			l.wholeGuard, l.wholeBy, l.wholeByLocal, l.wholeFn = w.scopeIDs[len(w.scopeIDs)-1], g.by, g.byLocal, w.depth
		}
	}
}

// wholeDivision reports whether e is n / d where a condition around shows
// that d divides n evenly (see local.wholeGuard): it has no fraction.
func (w *walker) wholeDivision(e ast.Expr) bool {
	x, ok := e.(*ast.ArithmeticOpExpr)
	if !ok || x.Operator != "/" {
		return false
	}
	n, ok := x.Lhs.(*ast.IdentExpr)
	if !ok {
		return false
	}
	var by string
	var byLocal *local
	switch d := x.Rhs.(type) {
	case *ast.NumberExpr:
		by = d.Value
	case *ast.IdentExpr:
		// (Not a divisor a function assigns: a call may change it.)
		if byLocal, _ = w.lookup(d.Value); byLocal == nil || byLocal.fnAssigned {
			return false
		}
		by = d.Value
	default:
		return false
	}
	l, _ := w.lookup(n.Value)
	return l != nil && !l.fnAssigned && l.wholeGuard != 0 && l.wholeBy == by && l.wholeByLocal == byLocal && l.wholeFn == w.depth && slices.Contains(w.scopeIDs, l.wholeGuard)
}

func (w *walker) guardedBlock(list []ast.Stmt, guards []string) {
	w.push()
	w.guard(guards)
	w.stmts(list)
	w.pop()
}

// falseNames are the locals e, as a condition, shows false or nil where it
// holds (holds set) or where it does not: not v, and not v and ..., where
// they hold; v, and v or ..., where they do not.
func (w *walker) falseNames(e ast.Expr, holds bool) []string {
	switch x := e.(type) {
	case *ast.IdentExpr:
		if !holds && w.isLocal(x.Value) {
			return []string{x.Value}
		}
	case *ast.UnaryNotOpExpr:
		return w.falseNames(x.Expr, !holds)
	case *ast.LogicalOpExpr:
		if x.Operator == "and" && holds || x.Operator == "or" && !holds {
			return append(w.falseNames(x.Lhs, holds), w.falseNames(x.Rhs, holds)...)
		}
	}
	return nil
}

// markFalse records that the locals named are false or nil in the
// innermost scope.
func (w *walker) markFalse(names []string) {
	for _, n := range names {
		if l, _ := w.lookup(n); l != nil {
			l.falseIn = w.scopeIDs[len(w.scopeIDs)-1]
		}
	}
}

// nilOnlyNames are the locals e, as a condition, shows not nil, and no
// more, where it holds (holds set) or where it does not: v ~= nil and
// type(v) ~= 'nil' (or a local given type(v)) where they hold, v == nil
// and type(v) == 'nil' where they do not, and either side of an and (or
// of an or) there. Such a local may hold false: a reply Redis gave as nil.
// (Not one that holds a reply on every path: the comparison is refused,
// as always true or false, already.)
func (w *walker) nilOnlyNames(e ast.Expr, holds bool) []string {
	local := func(n string) []string {
		if l, _ := w.lookup(n); l != nil && !(l.nilv.set && !l.nilv.some) {
			return []string{n}
		}
		return nil
	}
	switch x := e.(type) {
	case *ast.UnaryNotOpExpr:
		return w.nilOnlyNames(x.Expr, !holds)
	case *ast.LogicalOpExpr:
		if (x.Operator == "and") == holds {
			return append(w.nilOnlyNames(x.Lhs, holds), w.nilOnlyNames(x.Rhs, holds)...)
		}
	case *ast.RelationalOpExpr:
		if x.Operator != "==" && x.Operator != "~=" || (x.Operator == "~=") != holds {
			return nil
		}
		if arg, name, ok := w.typeTest(x); ok {
			if id, isID := arg.(*ast.IdentExpr); isID && name == "nil" {
				return local(id.Value)
			}
			return nil
		}
		for _, side := range [][2]ast.Expr{{x.Lhs, x.Rhs}, {x.Rhs, x.Lhs}} {
			id, isID := side[0].(*ast.IdentExpr)
			if _, isNil := side[1].(*ast.NilExpr); isID && isNil {
				return local(id.Value)
			}
		}
	}
	return nil
}

// fullGuards are nilGuards(e, isNil) but for the tests nilOnlyNames
// lists: the locals e shows to hold neither nil nor false.
func (w *walker) fullGuards(e ast.Expr, isNil bool) []string {
	w.fullOnly = true
	defer func() { w.fullOnly = false }()
	return w.nilGuards(e, isNil)
}

// markNilOnly records that a condition shows the locals names not nil,
// and no more, in the innermost scope, and markFull that one shows the
// locals full neither nil nor false there (see local.nilOnlyIn).
func (w *walker) markNilOnly(names, full []string) {
	id := w.scopeIDs[len(w.scopeIDs)-1]
	for _, n := range names {
		if l, _ := w.lookup(n); l != nil {
			l.nilOnlyIn = id
		}
	}
	for _, n := range full {
		if l, _ := w.lookup(n); l != nil && (l.fullIn == 0 || !slices.Contains(w.scopeIDs, l.fullIn)) {
			l.fullIn = id
		}
	}
}

// knownNilOnly reports whether a condition shows the local l not nil, and
// no more, in a scope still being walked, and none shows it neither nil
// nor false: it may hold false there.
func (w *walker) knownNilOnly(l *local) bool {
	return l.nilOnlyIn != 0 && l.fn == w.depth && slices.Contains(w.scopeIDs, l.nilOnlyIn) &&
		!(l.fullIn != 0 && slices.Contains(w.scopeIDs, l.fullIn))
}

// knownFalse reports whether a condition shows the local false or nil in
// a scope still being walked: a reply it holds is false there, whatever
// the script read of it before. (Not in a function defined there: it runs
// when called, maybe once the local holds another value.)
func (w *walker) knownFalse(l *local) bool {
	return l.falseIn != 0 && l.fn == w.depth && slices.Contains(w.scopeIDs, l.falseIn)
}

// guard records that the locals named hold neither nil nor false in the
// innermost scope, unless a guard in an enclosing scope (still being
// walked) says so already.
func (w *walker) guard(names []string) {
	for _, n := range names {
		if table, key, ok := strings.Cut(n, fieldSep); ok {
			if l, _ := w.lookup(table); l != nil && !w.fieldGuarded(l, key) {
				if l.fieldGuards == nil {
					l.fieldGuards = map[string]int{}
				}
				l.fieldGuards[key] = w.scopeIDs[len(w.scopeIDs)-1]
			}
			continue
		}
		if l, _ := w.lookup(n); l != nil && !w.guarded(l) {
			l.guard = w.scopeIDs[len(w.scopeIDs)-1]
		}
	}
}

// guardGiven records, as guard does, that the locals named hold a value
// in the innermost scope, given on every path that reached it (see
// local.given).
func (w *walker) guardGiven(names []string) {
	w.guard(names)
	for _, n := range names {
		if l, _ := w.lookup(n); l != nil && !w.givenHere(l) {
			l.given = w.scopeIDs[len(w.scopeIDs)-1]
		}
	}
}

// givenHere reports whether the local l holds a value given on every path
// that reached where the walker is (see local.given).
func (w *walker) givenHere(l *local) bool {
	return l.given != 0 && slices.Contains(w.scopeIDs, l.given)
}

// testedCopies reports, for each of n names assigned list, whether it is
// given a local tested here (if v then local w = v): the copy holds
// neither nil nor false either, in this block.
func (w *walker) testedCopies(list []ast.Expr, n int) []bool {
	out := make([]bool, n)
	for i := range min(n, len(list)) {
		if id, ok := list[i].(*ast.IdentExpr); ok {
			if l, _ := w.lookup(id.Value); l != nil && w.guarded(l) {
				out[i] = true
			}
		}
	}
	return out
}

// fieldSep joins a table local's name and a field's key (see fieldKey) in
// the names nilGuards gives for a field.
const fieldSep = "\x00"

// fieldGuarded reports whether the field key of the table local l is known
// to hold neither nil nor false where the walker is.
func (w *walker) fieldGuarded(l *local, key string) bool {
	id := l.fieldGuards[key]
	return id != 0 && slices.Contains(w.scopeIDs, id)
}

// guarded reports whether the local l is known to hold neither nil nor
// false where the walker is.
func (w *walker) guarded(l *local) bool {
	if a := l.aliasOf; a != nil && !a.assigned && a.guard != 0 && slices.Contains(w.scopeIDs, a.guard) {
		return true
	}
	return l.guard != 0 && slices.Contains(w.scopeIDs, l.guard)
}

// heldNil is the reply l holds (local.nilv), taken as tested where a test
// around shows it neither nil nor false (after if not v then return end,
// in the body of if v): a value made of it there (tonumber(v), a call
// passing it) is too.
func (w *walker) heldNil(l *local) nilSource {
	ns := l.nilv
	if ns.set && w.guarded(l) && !w.knownFalse(l) {
		ns.tested = true
	}
	return ns
}

// paramTyped reports whether the parameter l (or the one it copies) had its
// type tested (see local.typed).
func paramTyped(l *local) bool { return l.typed || l.aliasOf != nil && l.aliasOf.typed }

// paramValueRead reports whether the parameter l (or the one it copies)
// was read in a test other than of its truth alone (see
// local.valueTested).
func paramValueRead(l *local) bool {
	return l.valueTested || l.aliasOf != nil && l.aliasOf.valueTested
}

// nilGuards are the locals a condition, when it is true (or false, with
// isNil false), shows to hold neither nil nor false: v, v ~= false, v ~=
// nil, and either side of and (with isNil: not v, v == false, v == nil,
// and either side of or); not e as e read the other way. v == nil is taken as meant (a reply is false,
// not nil, and that comparison is refused on its own); not for a local
// that may hold false (or, against false, nil), which it lets through.
func (w *walker) nilGuards(e ast.Expr, isNil bool) []string {
	local := func(e ast.Expr) string {
		if id, ok := e.(*ast.IdentExpr); ok && w.isLocal(id.Value) {
			return id.Value
		}
		// A field of a table local (t.w, t[2]) is named with its key.
		if a, ok := e.(*ast.AttrGetExpr); ok && w.tableLocal(a.Object) != nil && fieldKey(a.Key) != "" {
			return a.Object.(*ast.IdentExpr).Value + fieldSep + fieldKey(a.Key)
		}
		return ""
	}
	nilOrFalse := func(e ast.Expr) bool {
		switch e.(type) {
		case *ast.NilExpr, *ast.FalseExpr:
			return true
		}
		return false
	}
	switch x := e.(type) {
	case *ast.IdentExpr, *ast.AttrGetExpr:
		if n := local(x); n != "" && !isNil {
			return []string{n}
		}
	case *ast.UnaryNotOpExpr:
		// not e is false where e is true, and true where e is false: not
		// v, not (v and v ~= ''), not not v.
		return w.nilGuards(x.Expr, !isNil)
	case *ast.RelationalOpExpr:
		// type(v) == 'nil' is v == nil; type(v) == 'string' when true (or
		// ~= when false) shows v neither nil nor false.
		if arg, name, ok := w.typeTest(x); ok {
			switch name {
			case "nil":
				if w.fullOnly {
					return nil
				}
				return w.nilGuards(&ast.RelationalOpExpr{Operator: x.Operator, Lhs: arg, Rhs: &ast.NilExpr{}}, isNil)
			case "string", "number", "table", "function", "userdata", "thread":
				if n := local(arg); n != "" && (x.Operator == "==") != isNil {
					return []string{n}
				}
			}
			return nil
		}
		// v == 'x' when true, v ~= 'x' when false: v holds that string
		// or number.
		if x.Operator == "==" && !isNil || x.Operator == "~=" && isNil {
			if n := local(x.Lhs); n != "" && stringOrNumber(x.Rhs) {
				return []string{n}
			}
			if n := local(x.Rhs); n != "" && stringOrNumber(x.Lhs) {
				return []string{n}
			}
		}
		if (x.Operator == "==") != isNil || (x.Operator != "==" && x.Operator != "~=") {
			return nil
		}
		// (v ~= nil leaves false, v ~= false nil: each shows a value
		// only of a local that cannot hold the other.)
		if w.fullOnly && (isNilExpr(x.Lhs) || isNilExpr(x.Rhs)) {
			return nil
		}
		if n := local(x.Lhs); n != "" && nilOrFalse(x.Rhs) && !w.mayHoldOther(x.Lhs, x.Rhs) {
			return []string{n}
		}
		if n := local(x.Rhs); n != "" && nilOrFalse(x.Lhs) && !w.mayHoldOther(x.Rhs, x.Lhs) {
			return []string{n}
		}
	case *ast.LogicalOpExpr:
		if (x.Operator == "or") == isNil {
			return append(w.nilGuards(x.Lhs, isNil), w.nilGuards(x.Rhs, isNil)...)
		}
	}
	return nil
}

// mayHoldOther reports whether the local e may hold false when lit, the
// literal it is compared with, is nil (given false or a comparison on some
// path), or nil when lit is false (given nil, declared without a value,
// or an element of KEYS or ARGV). Not one merged from values of either
// kind (Return.MayNil), which does not tell which.
func (w *walker) mayHoldOther(e, lit ast.Expr) bool {
	id, ok := e.(*ast.IdentExpr)
	if !ok {
		return false // (a field of a table local: nil when missing)
	}
	l, _ := w.lookup(id.Value)
	if l == nil {
		return false
	}
	alts := append([]Return{l.reply}, l.reply.Alts...)
	if isFalseExpr(lit) {
		// (An element of KEYS or ARGV is nil past a short list's end.)
		v := l.val
		return !v.Derived && !v.Stringified && (v.Source == SourceArgv || v.Source == SourceKey) || slices.ContainsFunc(alts, func(r Return) bool {
			return r.Kind == ReturnNil && r.LuaNil
		})
	}
	// (Or an and whose left is a comparison: false where that is.)
	return l.andFalse || slices.ContainsFunc(alts, func(r Return) bool {
		return r.Kind == ReturnNil && !r.LuaNil || r.Boolean
	})
}

// typeTest reads x as type(v) == 'name' or 'name' ~= type(v) (the
// global type, either side): v and the name.
func (w *walker) typeTest(x *ast.RelationalOpExpr) (ast.Expr, string, bool) {
	if x.Operator != "==" && x.Operator != "~=" {
		return nil, "", false
	}
	for _, side := range [][2]ast.Expr{{x.Lhs, x.Rhs}, {x.Rhs, x.Lhs}} {
		c, ok := side[0].(*ast.FuncCallExpr)
		str, isStr := side[1].(*ast.StringExpr)
		if !ok || !isStr || c.Receiver != nil || len(c.Args) != 1 {
			continue
		}
		if f, isF := c.Func.(*ast.IdentExpr); isF && f.Value == "type" && !w.isLocal("type") {
			return c.Args[0], str.Value, true
		}
	}
	// A local given the type of another (local t = type(v)), neither
	// assigned since: t == 'nil' tests v as type(v) == 'nil' does.
	for _, side := range [][2]ast.Expr{{x.Lhs, x.Rhs}, {x.Rhs, x.Lhs}} {
		id, ok := side[0].(*ast.IdentExpr)
		str, isStr := side[1].(*ast.StringExpr)
		if !ok || !isStr {
			continue
		}
		t, _ := w.lookup(id.Value)
		if t == nil || !t.typeOfHeld() {
			continue
		}
		name, _, _ := strings.Cut(t.typeOf.decl, "#")
		if of, _ := w.lookup(name); of == t.typeOf {
			return &ast.IdentExpr{Value: name}, str.Value, true
		}
	}
	return nil, "", false
}

// name is the local's name, as written.
func (l *local) name() string {
	n, _, _ := strings.Cut(l.decl, "#")
	return n
}

// typeOfHeld reports whether l was given the type of a local (local t =
// type(v)) that holds still the value it held then: not assigned since
// (in the body of a loop, one assigned anywhere in it is, from its first
// pass), nor in a function, which may run between.
func (l *local) typeOfHeld() bool {
	return l.typeOf != nil && l.typeOf.assigns == l.typeOfAt && !l.typeOf.fnAssigned
}

// stringOrNumber reports whether e is a string or number literal.
func stringOrNumber(e ast.Expr) bool {
	switch e.(type) {
	case *ast.StringExpr, *ast.NumberExpr:
		return true
	}
	return false
}

// exits reports whether a block ends in a return or a call of error: the
// statements after the if that holds it run only when it does not run.
func exits(list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	switch s := list[len(list)-1].(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.FuncCallStmt:
		c, ok := s.Expr.(*ast.FuncCallExpr)
		if !ok {
			return false
		}
		id, ok := c.Func.(*ast.IdentExpr)
		return ok && id.Value == "error"
	}
	return false
}

// breaks reports whether list leaves the loop it is the body of by a
// break (in it or a block in it; not in a nested loop or function, nor in
// a branch no run takes: if false then break end leaves nothing).
func breaks(list []ast.Stmt) bool {
	for _, s := range list {
		switch x := s.(type) {
		case *ast.BreakStmt:
			return true
		case *ast.IfStmt:
			if !alwaysFalse(x.Condition) && breaks(x.Then) || !alwaysTrue(x.Condition) && breaks(x.Else) {
				return true
			}
		case *ast.DoBlockStmt:
			if breaks(x.Stmts) {
				return true
			}
		}
	}
	return false
}

// leftByBreaks records what a loop left only by a break (while true do
// ... end, repeat ... until nil), of body list, leaves after it: a local
// that holds a value at each break holds it after the loop.
func (w *walker) leftByBreaks(list []ast.Stmt) {
	given, assigned := w.givenAtBreaks(list)
	w.guard(given)
	w.guardGiven(assigned)
	for _, n := range given {
		if l, _ := w.lookup(n); l != nil {
			l.nilv = nilSource{} // (no reply it held before the loop)
		}
	}
}

// givenAtBreaks lists the locals that hold a value neither nil nor false at
// each break of a loop's body, list: given one by the statements before the
// one that holds the break (and not assigned in it), or tested by it (if v
// then break end). Not the body's own locals. assigned lists those of them
// given a value before each break, not only tested: what they held before
// the loop is gone (see local.given).
func (w *walker) givenAtBreaks(list []ast.Stmt) (given, assigned []string) {
	w.judged = append(w.judged, list)
	defer func() { w.judged = w.judged[:len(w.judged)-1] }()
	var names []string
	add := func(n string) {
		if w.isLocal(n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var collect func(list []ast.Stmt)
	collect = func(list []ast.Stmt) {
		for _, st := range list {
			switch x := st.(type) {
			case *ast.AssignStmt:
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.IdentExpr); ok {
						add(id.Value)
					}
				}
			case *ast.IfStmt:
				collect(x.Then)
				collect(x.Else)
			case *ast.DoBlockStmt:
				collect(x.Stmts)
			}
		}
	}
	collect(list)
	for _, st := range list {
		if x, ok := st.(*ast.IfStmt); ok {
			for _, n := range w.nilGuards(x.Condition, false) {
				add(n)
			}
		}
	}
	// Which statements hold a break, and which locals a condition of
	// an if among them tests: read once, not once a name.
	holds := make([]bool, len(list))
	tests := make([][]string, len(list))
	for i, st := range list {
		holds[i] = breaks([]ast.Stmt{st})
		if x, ok := st.(*ast.IfStmt); ok && holds[i] && !breaks(x.Else) {
			tests[i] = w.nilGuards(x.Condition, false)
		}
	}
	for _, n := range names {
		// gives is whether the statements before the one read give n
		// a value (branchGives of them, read as it goes).
		ok, any, gives, tested := true, false, false, false
		for i, st := range list {
			if holds[i] {
				any = true
				switch {
				case !assigns([]ast.Stmt{st}, n) && (gives || i > 0 && exits(list[i-1:i])):
					tested = tested || !gives
				case slices.Contains(tests[i], n) && !assigns(st.(*ast.IfStmt).Then, n):
					// if v then break end
					tested = true
				case w.givenAtInnerBreaks(st, n, gives, false, &tested):
					// if c then v = 'a' break end
				default:
					ok = false
				}
			}
			var hidden bool
			if gives, hidden = w.givesAfter(gives, st, n); hidden {
				ok = false // the body's own: another local
			}
			if !ok {
				break
			}
		}
		if ok && any {
			given = append(given, n)
			if !tested {
				assigned = append(assigned, n)
			}
		}
	}
	return given, assigned
}

// givenAtInnerBreaks reports whether name holds a value neither nil nor
// false at each break in st, a statement of a loop's body that holds one
// in a block of its (if c then v = 'a' break end, an elseif, a nested if
// or do): gives is whether it did before st, byTest whether that was
// shown by a test rather than given. A break reached by a test only sets
// *tested. A local of that name declared in a block hides it: not read.
func (w *walker) givenAtInnerBreaks(st ast.Stmt, name string, gives, byTest bool, tested *bool) bool {
	block := func(list []ast.Stmt, gives, byTest bool) bool {
		for _, st := range list {
			if _, ok := st.(*ast.BreakStmt); ok {
				if !gives {
					return false
				}
				*tested = *tested || byTest
				return true // (what follows it never runs)
			}
			if !w.givenAtInnerBreaks(st, name, gives, byTest, tested) {
				return false
			}
			after, hidden := w.givesAfter(gives, st, name)
			if hidden {
				return false
			}
			if assigns([]ast.Stmt{st}, name) {
				byTest = false
			}
			gives = after
		}
		return true
	}
	switch x := st.(type) {
	case *ast.IfStmt:
		if !breaks([]ast.Stmt{x}) {
			return true
		}
		thenGives, thenByTest := gives, byTest
		if !gives && slices.Contains(w.nilGuards(x.Condition, false), name) {
			thenGives, thenByTest = true, true // if v then ... break end
		}
		// (A branch no run takes holds no break that counts.)
		return (alwaysFalse(x.Condition) || block(x.Then, thenGives, thenByTest)) &&
			(alwaysTrue(x.Condition) || block(x.Else, gives, byTest))
	case *ast.DoBlockStmt:
		return !breaks(x.Stmts) || block(x.Stmts, gives, byTest)
	}
	return true
}

// listedReply is 1 + the index in File.Calls of the reply a generic for
// walks with pairs or ipairs (a direct call, or a local holding its reply),
// 0 otherwise; it runs before the loop's expressions are walked.
func (w *walker) listedReply(exprs []ast.Expr) int {
	if len(exprs) != 1 {
		return 0
	}
	c, ok := exprs[0].(*ast.FuncCallExpr)
	if !ok || len(c.Args) != 1 {
		return 0
	}
	id, ok := c.Func.(*ast.IdentExpr)
	if !ok || (id.Value != "pairs" && id.Value != "ipairs") || w.isLocal(id.Value) {
		return 0
	}
	switch x := c.Args[0].(type) {
	case *ast.FuncCallExpr:
		if _, ok := callReply(x, len(w.f.Calls)); ok {
			return len(w.f.Calls) + 1
		}
	case *ast.IdentExpr:
		if l, _ := w.lookup(x.Value); l != nil && l.reply.Kind == ReturnCall {
			return l.reply.Call + 1
		}
	}
	return 0
}

// forIn walks a generic for's body once, with its loop variables; listed
// is listedReply's answer for the loop.
func (w *walker) forIn(s *ast.GenericForStmt, listed int) {
	w.push()
	// for i, k in ipairs(KEYS): k is a key
	elem := Value{Source: SourceUnknown}
	if len(s.Exprs) == 1 {
		if c, ok := s.Exprs[0].(*ast.FuncCallExpr); ok && len(c.Args) == 1 {
			if id, ok := c.Args[0].(*ast.IdentExpr); ok && (id.Value == "KEYS" || id.Value == "ARGV") {
				elem = Value{Source: sourceOfTable(id.Value), Text: id.Value + "[i]"}
			} else if f, ok := c.Func.(*ast.IdentExpr); ok && (f.Value == "ipairs" || f.Value == "pairs") && !w.isLocal(f.Value) {
				if v, ok := w.elemsOf(c.Args[0]); ok {
					elem = v // for _, k in ipairs(t)
				}
			}
		}
	}
	for i, n := range s.Names {
		if i == 1 {
			w.declare(n, elem)
		} else {
			w.declare(n, Value{Source: SourceUnknown})
		}
	}
	if listed > 0 && len(s.Names) > 0 {
		l, _ := w.lookup(s.Names[0])
		l.indexOf = listed
	}
	w.stmts(s.Stmts)
	w.pop()
}

func (w *walker) function(f *ast.FunctionExpr) {
	// Every function is in File.Funcs: where it runs tells the protocol
	// its calls of redis.call are made in (see Func).
	if !w.dry {
		w.funcIndex(f)
	}
	if w.isLocal("error") || declaresError(f) {
		if w.errorLocal == nil {
			w.errorLocal = map[*ast.FunctionExpr]bool{}
		}
		w.errorLocal[f] = true
	}
	w.depth++
	w.fns = append(w.fns, f)
	conds, loops := w.conds, w.loops
	w.conds, w.loops = nil, nil // the body runs whole when the function does
	defer func() { w.depth--; w.fns = w.fns[:len(w.fns)-1]; w.conds, w.loops = conds, loops }()
	// The end of the body, if reached, returns nothing.
	w.result(Value{Source: SourceNil})
	w.push()
	if f.ParList != nil {
		for i, n := range f.ParList.Names {
			v := Value{Source: SourceUnknown}
			if vals, ok := w.paramVals[f]; ok && i < len(vals) {
				v = vals[i]
			} else if w.paramVals == nil {
				v = Value{Source: sourcePending} // the first walk: nothing known yet
			}
			w.declare(n, v)
			l, _ := w.lookup(n)
			l.paramOf, l.param = f, i+1
		}
	}
	from := len(w.f.Calls)
	w.stmts(f.Stmts)
	w.pop()
	if !w.dry {
		if w.fnCallSpan == nil {
			w.fnCallSpan = map[*ast.FunctionExpr][2]int{}
		}
		w.fnCallSpan[f] = [2]int{from, len(w.f.Calls)}
	}
}

func (w *walker) exprs(list []ast.Expr) {
	for _, e := range list {
		w.expr(e)
	}
}

func (w *walker) expr(e ast.Expr) {
	switch e := e.(type) {
	case nil:
	case *ast.IdentExpr:
		if l, _ := w.lookup(e.Value); l != nil {
			l.nilv.tested = true // read: the script may deal with nil here
			if l.table {
				w.spoil(l) // passed, returned, aliased: it may change out of sight
			}
			if !w.keeps[e] {
				w.open(e.Value)
			}
			if l.fnExpr != nil {
				// A local function used as a value may be called where
				// its parameters' values cannot be followed.
				if w.escaped == nil {
					w.escaped = map[*ast.FunctionExpr]bool{}
				}
				w.escaped[l.fnExpr] = true
			}
			return
		}
		// A global: its position is the next occurrence of its name on
		// its line.
		pos, _ := w.identPos(e.Line(), e.Value)
		if e.Value == "KEYS" || e.Value == "ARGV" {
			w.addUse(e.Value, Use{Pos: pos, Bare: true})
			w.changed(e.Value) // passed on or held: tableRead takes the reads
			if !w.dry {
				w.f.TableWrites = append(w.f.TableWrites, TableWrite{Pos: pos, Name: e.Value, Table: e.Value, Held: true})
			}
		}
		if w.isRedis(e) {
			w.f.RedisValues = append(w.f.RedisValues, RedisValue{Pos: pos, Text: e.Value})
		}
		if escapeGlobals[e.Value] {
			w.f.Escapes = append(w.f.Escapes, RedisValue{Pos: pos, Text: e.Value})
		}
		w.globalRead(e.Value, pos)
	case *ast.AttrGetExpr:
		if id, ok := e.Object.(*ast.IdentExpr); ok && w.isRedis(id) {
			// redis.call as a value (pcall(redis.call, ...), a local
			// alias) or redis[expr]; other fields (redis.LOG_WARNING)
			// are harmless.
			pos, _ := w.identPos(id.Line(), id.Value)
			w.globalRead(id.Value, pos)
			key, lit := e.Key.(*ast.StringExpr)
			switch {
			case !lit:
				w.f.RedisValues = append(w.f.RedisValues, RedisValue{Pos: pos, Text: id.Value + "[...]"})
				w.expr(e.Key)
			case key.Value == "call" || key.Value == "pcall":
				w.f.RedisValues = append(w.f.RedisValues, RedisValue{Pos: pos, Text: id.Value + "." + key.Value})
			case id.Value == "redis":
				w.redisField(id.Line(), key.Value, false)
			}
			return
		}
		if lib := w.readOnlyTable(e.Object); lib != "" {
			if key, ok := e.Key.(*ast.StringExpr); ok {
				w.expr(e.Object)
				w.libField(e.Key.Line(), lib, key.Value)
				return
			}
		}
		if id, ok := e.Object.(*ast.IdentExpr); ok && (id.Value == "KEYS" || id.Value == "ARGV") {
			pos, _ := w.identPos(id.Line(), id.Value)
			u := Use{Pos: pos}
			if num, ok := e.Key.(*ast.NumberExpr); ok {
				if n, ok := luaIndex(num.Value); ok {
					u.Index = n
				} else {
					u.BadLiteral = num.Value
				}
			} else {
				u.Dynamic = true
			}
			w.addUse(id.Value, u)
			w.expr(e.Key)
			return
		}
		if name, ok := w.fieldName(e.Key); ok {
			index := "." + name
			if id, isIdent := e.Key.(*ast.IdentExpr); isIdent {
				index = "[" + id.Value + "]"
			}
			w.fieldRead(e.Object, name, index)
		} else {
			index := "[...]"
			switch k := e.Key.(type) {
			case *ast.NumberExpr:
				index = "[" + k.Value + "]"
			case *ast.IdentExpr:
				index = "[" + k.Value + "]"
			}
			w.elemRead(e.Object, "index", func(t string) string { return t + index })
		}
		if !w.tableRead(e.Object) {
			w.expr(e.Object)
		}
		w.expr(e.Key)
	case *ast.TableExpr:
		w.errTable(e)
		for _, f := range e.Fields {
			w.expr(f.Key)
			w.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		if id, ok := e.Func.(*ast.IdentExpr); ok && (id.Value == "ipairs" || id.Value == "pairs") && !w.isLocal(id.Value) && len(e.Args) == 1 {
			w.elemRead(e.Args[0], id.Value, func(t string) string { return id.Value + "(" + t + ")" })
		}
		if id, ok := e.Func.(*ast.IdentExpr); ok && id.Value == "unpack" && !w.isLocal(id.Value) && len(e.Args) > 0 {
			w.elemRead(e.Args[0], "unpack", func(t string) string { return "unpack(" + t + ")" })
		}
		if id, ok := e.Func.(*ast.IdentExpr); ok && id.Value == "assert" && !w.isLocal(id.Value) && len(e.Args) > 0 {
			// assert(ARGV[3]) fails the script when the list is short.
			w.elemOperand(e.Args[0], "assert", w.peekPos(id.Line(), id.Value, false))
		}
		if a, ok := e.Func.(*ast.AttrGetExpr); ok && len(e.Args) > 0 {
			lib, ok1 := a.Object.(*ast.IdentExpr)
			fn, ok2 := a.Key.(*ast.StringExpr)
			if ok1 && ok2 && lib.Value == "table" && fn.Value == "concat" && !w.isLocal("table") {
				w.elemRead(e.Args[0], "table.concat", func(t string) string { return "table.concat(" + t + ")" })
			}
			// table.remove(t) takes the last element off, which leaves the
			// others where they were (the counts, which follow Changed,
			// are what it changes); with a position it moves those after.
			if ok1 && ok2 && lib.Value == "table" && (fn.Value == "insert" || fn.Value == "remove" && len(e.Args) > 1 || fn.Value == "sort") && !w.isLocal("table") {
				if id, ok := e.Args[0].(*ast.IdentExpr); ok {
					w.tableWrite(id, "table."+fn.Value+"("+id.Value+", ...)")
				}
			}
		}
		if id, ok := e.Func.(*ast.IdentExpr); ok && id.Value == "rawset" && !w.isLocal(id.Value) && len(e.Args) > 0 {
			if t, ok := e.Args[0].(*ast.IdentExpr); ok {
				w.tableWrite(t, "rawset("+t.Value+", ...)")
			}
		}
		if id, ok := e.Func.(*ast.IdentExpr); ok && !w.dry {
			// A call of a local function: what it passes each parameter.
			if l, _ := w.lookup(id.Value); l != nil && l.fnExpr != nil {
				if w.args == nil {
					w.args = map[*ast.FunctionExpr][][]Value{}
					w.called = map[*ast.FunctionExpr]bool{}
				}
				fn := l.fnExpr
				w.called[fn] = true
				if w.fnCalls == nil {
					w.fnCalls = map[*ast.FunctionExpr][]Pos{}
				}
				pos, _ := w.identPos(id.Line(), id.Value)
				w.fnCalls[fn] = append(w.fnCalls[fn], pos)
				if w.fnCallsIn == nil {
					w.fnCallsIn = map[*ast.FunctionExpr][][]*ast.FunctionExpr{}
				}
				w.fnCallsIn[fn] = append(w.fnCallsIn[fn], slices.Clone(w.fns))
				if w.fnConds == nil {
					w.fnConds = map[*ast.FunctionExpr][][2]int{}
				}
				var cond [2]int
				if n := len(w.conds); n > 0 {
					cond = w.conds[n-1]
				}
				w.fnConds[fn] = append(w.fnConds[fn], cond)
				if w.fnLoops == nil {
					w.fnLoops = map[*ast.FunctionExpr][][][2]int{}
					w.fnBlocks = map[*ast.FunctionExpr][][]int{}
				}
				w.fnLoops[fn] = append(w.fnLoops[fn], slices.Clone(w.loops))
				w.fnBlocks[fn] = append(w.fnBlocks[fn], slices.Clone(w.scopeIDs))
				n := len(e.Args)
				if fn.ParList != nil {
					n = max(n, len(fn.ParList.Names))
				}
				for len(w.args[fn]) < n {
					w.args[fn] = append(w.args[fn], nil)
				}
				for i := range n {
					w.args[fn][i] = append(w.args[fn][i], w.passed(e.Args, i))
				}
				if !(len(w.fns) > 0 && w.dead[w.fns[len(w.fns)-1]]) && w.fixedFunc(e.Func) != nil {
					args := make([]argPass, n)
					for i := range n {
						args[i].nilv = w.passed(e.Args, i).Source == SourceNil
						args[i].falsev = i < len(e.Args) && (isFalseExpr(e.Args[i]) || notStringExpr(e.Args, i) == "a comparison, true or false")
						args[i].bad = notStringExpr(e.Args, i)
						if i < len(e.Args)-1 || i < len(e.Args) && !expands(e.Args[i]) {
							args[i].kind, args[i].text = literalPass(e.Args[i])
						} else if len(e.Args) > 0 && expands(e.Args[len(e.Args)-1]) {
							args[i].open = true
						}
					}
					if w.passes == nil {
						w.passes = map[*ast.FunctionExpr][][]argPass{}
					}
					w.passes[fn] = append(w.passes[fn], args)
					// (Read where the call is written: a constant local
					// passed is one in scope here.)
					mc := msgCall{at: pos, name: id.Value, args: args, msgs: make([]msgArg, len(e.Args))}
					for i, a := range e.Args {
						m := &mc.msgs[i]
						m.lit, m.joined, m.ok = messageStart(a, w.stringLiteral)
						m.str, m.isStr = w.stringLiteral(a)
					}
					if w.msgCalls == nil {
						w.msgCalls = map[*ast.FunctionExpr][]msgCall{}
					}
					w.msgCalls[fn] = append(w.msgCalls[fn], mc)
				}
				for i := range n {
					if len(w.fns) > 0 && w.dead[w.fns[len(w.fns)-1]] {
						break // (never made)
					}
					// (Not a function the script also assigns: the call
					// may run the other.)
					if bad := notStringExpr(e.Args, i); bad != "" && w.fixedFunc(e.Func) != nil {
						if w.badArgs == nil {
							w.badArgs = map[*ast.FunctionExpr]map[int]string{}
						}
						if w.badArgs[fn] == nil {
							w.badArgs[fn] = map[int]string{}
						}
						w.badArgs[fn][i] = bad
					}
					if w.passed(e.Args, i).Source == SourceNil && w.fixedFunc(e.Func) != nil {
						if w.nilArgs == nil {
							w.nilArgs = map[*ast.FunctionExpr]map[int]bool{}
						}
						if w.nilArgs[fn] == nil {
							w.nilArgs[fn] = map[int]bool{}
						}
						w.nilArgs[fn][i] = true
					}
					if i < len(e.Args) && w.fixedFunc(e.Func) != nil && (isFalseExpr(e.Args[i]) || notStringExpr(e.Args, i) == "a comparison, true or false") {
						if w.falseArgs == nil {
							w.falseArgs = map[*ast.FunctionExpr]map[int]bool{}
						}
						if w.falseArgs[fn] == nil {
							w.falseArgs[fn] = map[int]bool{}
						}
						w.falseArgs[fn][i] = true
					}
				}
				for i, a := range e.Args {
					if len(w.fns) > 0 && w.dead[w.fns[len(w.fns)-1]] || w.fixedFunc(e.Func) == nil {
						break // (never made, or a call that may run another function)
					}
					rp := replyPass{at: pos}
					if ps := w.passes[fn]; len(ps) > 0 {
						args := ps[len(ps)-1] // (recorded above for this call)
						rp.args = &args
					}
					if c, ok := a.(*ast.FuncCallExpr); ok {
						if name, direct := redisFunc(c); direct && (name == "call" || name == "pcall") {
							rp.call = c
						}
					} else if id, ok := a.(*ast.IdentExpr); ok {
						if l, _ := w.lookup(id.Value); l != nil && l.nilv.set && !l.nilv.tonumber {
							rp.ns = w.heldNil(l)
						}
					}
					if id, ok := a.(*ast.IdentExpr); ok && rp.call == nil && !rp.ns.set {
						if p, _ := w.lookup(id.Value); p != nil && p.paramOf != nil && p.paramOf != fn && !p.assigned && p.fn == w.depth && !w.guarded(p) && !paramTyped(p) {
							// (Not guarded here: a test elsewhere shows
							// nothing of the value passed on here.)
							w.replyFwds = append(w.replyFwds, replyFwd{from: p.paramOf, fi: p.param - 1, to: fn, ti: i, at: pos})
						}
					}
					if rp.call != nil || rp.ns.set {
						if w.replyArgs == nil {
							w.replyArgs = map[*ast.FunctionExpr]map[int][]replyPass{}
						}
						if w.replyArgs[fn] == nil {
							w.replyArgs[fn] = map[int][]replyPass{}
						}
						w.replyArgs[fn][i] = append(w.replyArgs[fn][i], rp)
					}
				}
				for i, a := range e.Args {
					if len(w.fns) > 0 && w.dead[w.fns[len(w.fns)-1]] {
						break // (never made)
					}
					elems := w.callElems(a) // f(g()), g returning ARGV[3]
					if table, n, _ := w.elemNeed(a); n > 0 {
						elems = append(elems, elemPass{table, n})
					}
					if len(elems) > 0 {
						if w.elemArgs == nil {
							w.elemArgs = map[*ast.FunctionExpr]map[int][]elemPass{}
						}
						if w.elemArgs[fn] == nil {
							w.elemArgs[fn] = map[int][]elemPass{}
						}
						w.elemArgs[fn][i] = append(w.elemArgs[fn][i], elems...)
					}
				}
			}
		}
		w.unpack(e)
		w.ignoredArgs(e)
		w.numberArgsOf(e)
		before := len(w.f.Calls)
		w.call(e)
		fname, direct := redisFunc(e)
		if l := w.localFunc(e.Func); l != nil {
			l.nilv.tested = true // a call of a local function by name: its calls are followed
		} else if !direct {
			w.expr(e.Func) // a direct redis.X is not a use as a value
		}
		if e.Receiver != nil {
			// v:sub(1, 3): a method of the value, which fails on false.
			at := w.operation(e.Receiver, ":"+e.Method, Pos{})
			pos, _ := w.tokenPos(e.Line(), e.Method, true)
			if at >= 0 {
				w.f.Operations[at].Pos = pos
			}
		}
		if w.isStringFormat(e) {
			// string.format(f, ...): its values must be strings or
			// numbers, whatever the directive.
			pos, _ := w.tokenPos(e.Line(), "format", true)
			w.expr(e.Args[0])
			for i, a := range e.Args[1:] {
				if at := w.operation(a, "string.format", pos); at >= 0 {
					w.f.Operations[at].Arg = i + 2
				}
			}
		} else if fn, ok := w.stringArgFunc(e); ok {
			// string.len(v), cjson.decode(v): a library function that
			// takes a string first.
			pos, _ := w.tokenPos(e.Line(), fn[strings.IndexByte(fn, '.')+1:], true)
			if id, ok := e.Args[0].(*ast.IdentExpr); ok && fn == "table.concat" && w.listTable(id) {
				w.listPassed(id)
			} else {
				w.operation(e.Args[0], fn, pos)
			}
			w.exprs(e.Args[1:])
		} else if direct && (fname == "call" || fname == "pcall") && len(w.f.Calls) > before && len(e.Args) > 0 {
			// redis.call's arguments: Redis refuses false, nil and a table.
			w.f.Calls[before].Outer = w.outer
			w.outer = before + 1
			w.expr(e.Args[0])
			for i, a := range e.Args[1:] {
				w.numberText(a, "arg", w.f.Calls[before].Args[i].Pos, before)
				if at := w.operation(a, "arg", Pos{}); at >= 0 {
					o := &w.f.Operations[at]
					o.Pos, o.In, o.Arg = w.f.Calls[before].Args[i].Pos, before, i+1
				}
			}
			w.outer = w.f.Calls[before].Outer
		} else {
			if id, ok := e.Func.(*ast.IdentExpr); ok && id.Value == "tostring" && !w.isLocal("tostring") && len(e.Args) == 1 {
				pos, _ := w.identPos(e.Line(), "tostring")
				w.numberText(e.Args[0], "tostring", pos, 0)
			}
			args := e.Args
			if len(args) > 0 && w.keepsFields(e) {
				if id, ok := args[0].(*ast.IdentExpr); ok {
					w.keep(id)
					if w.listTable(id) {
						w.listPassed(id)
						args = args[1:]
					}
				}
			}
			if id, ok := e.Func.(*ast.IdentExpr); ok && len(args) > 0 && (id.Value == "ipairs" || id.Value == "pairs" || id.Value == "unpack") && !w.isLocal(id.Value) && w.tableRead(args[0]) {
				args = args[1:] // they read the table, not change it
			}
			w.exprs(args)
		}
	case *ast.LogicalOpExpr:
		w.markTested(e)
		done := w.probe(e.Lhs)
		w.expr(e.Lhs)
		w.logicRight++
		// The right of v and ... (or t.w and ...) runs only where v holds
		// a value, that of not v or ... too.
		fields := w.nilGuards(e.Lhs, e.Operator == "or")
		// (And the right of v or ..., of not v and ..., runs where v is
		// false or nil.)
		falses := w.falseNames(e.Lhs, e.Operator == "and")
		if len(fields) > 0 || len(falses) > 0 {
			w.push()
			w.guard(fields)
			w.markFalse(falses)
		}
		w.expr(e.Rhs)
		if len(fields) > 0 || len(falses) > 0 {
			w.pop()
		}
		w.logicRight--
		done()
	case *ast.RelationalOpExpr:
		w.markTested(e)
		// In order (left, operator, right), so the n-th operator walked on a
		// line is the n-th in its text.
		c := Compare{Op: e.Operator, Left: w.operand(e.Lhs, len(w.f.Calls))}
		var typeOf Operand
		if arg, _, ok := w.typeTest(e); ok {
			typeOf = w.operand(arg, len(w.f.Calls))
			if id, ok := arg.(*ast.IdentExpr); ok {
				if l, _ := w.lookup(id.Value); l != nil {
					l.typed = true
				}
			}
		}
		order := e.Operator != "==" && e.Operator != "~="
		left := -1
		if order {
			left = w.operation(e.Lhs, e.Operator, Pos{})
		} else {
			w.expr(e.Lhs)
		}
		c.Pos, _ = w.tokenPos(e.Line(), e.Operator, false)
		if left >= 0 {
			w.f.Operations[left].Pos = c.Pos
		}
		c.Right = w.operand(e.Rhs, len(w.f.Calls))
		if order {
			w.operation(e.Rhs, e.Operator, c.Pos)
		} else {
			w.expr(e.Rhs)
		}
		// v ~= nil, v a local given the replies of several calls (one
		// before a loop, another in its body): a reply whichever it
		// holds, which is never nil.
		if c.Right.Type == OperandNil && c.Left.Type == OperandUnknown {
			c.Left = w.repliesOperand(e.Lhs)
		} else if c.Left.Type == OperandNil && c.Right.Type == OperandUnknown {
			c.Right = w.repliesOperand(e.Rhs)
		}
		// type(r) == 'nil' compares r with nil, as r == nil does.
		if _, name, ok := w.typeTest(e); ok && name == "nil" {
			c.Left, c.Right = typeOf, Operand{Type: OperandNil, Text: "nil"}
		}
		if c.Left.Type != OperandUnknown && c.Right.Type != OperandUnknown {
			w.f.Compares = append(w.f.Compares, c)
		} else if c.Left.Type != c.Right.Type && !w.dry {
			// A parameter compared: with what the calls pass it (see
			// settleParamOps).
			side, other := e.Lhs, c.Right
			if c.Left.Type != OperandUnknown {
				side, other = e.Rhs, c.Left
			}
			if id, ok := side.(*ast.IdentExpr); ok && other.Type != OperandUnknown {
				if p, _ := w.lookup(id.Value); p != nil && p.paramOf != nil && !p.assigned && p.fn == w.depth {
					w.paramCmps = append(w.paramCmps, paramCmp{c: c, left: side == e.Lhs, l: p, name: id.Value})
				}
			}
		}
	case *ast.StringConcatOpExpr:
		w.binaryOperation(e.Lhs, "..", e.Rhs, e.Line())
	case *ast.ArithmeticOpExpr:
		w.numberArg(e.Lhs)
		w.numberArg(e.Rhs)
		w.binaryOperation(e.Lhs, e.Operator, e.Rhs, e.Line())
	case *ast.UnaryMinusOpExpr:
		w.numberArg(e.Expr)
		pos, _ := w.tokenPos(e.Line(), "-", false)
		w.elemOperand(e.Expr, "unary -", pos)
		w.nilOperand(e.Expr, "unary -", pos)
		w.operation(e.Expr, "unary -", pos)
	case *ast.UnaryNotOpExpr:
		w.markTested(e)
		w.truth(e.Expr, true)
		w.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		if id, ok := e.Expr.(*ast.IdentExpr); ok && (id.Value == "KEYS" || id.Value == "ARGV") && !w.isLocal(id.Value) {
			w.measured(id.Value, MeasuredAll)
		}
		// The length of a table local that lists elements of them (local
		// t = {ARGV[3]}, if #t > 0 then): 0 when the list is short, so a
		// test of the elements too (of all of them: the script may read
		// it as such).
		if l := w.tableLocal(e.Expr); l != nil {
			for _, f := range l.fields {
				if f.Source == SourceArgv || f.Source == SourceKey {
					table := map[Source]string{SourceArgv: "ARGV", SourceKey: "KEYS"}[f.Source]
					n := elemIndex(f.Text, table)
					if n == 0 {
						n = MeasuredAll // (derived from one: which, unknown)
					}
					w.measured(table, n)
				}
			}
		}
		if w.tableRead(e.Expr) {
			break
		}
		pos, _ := w.tokenPos(e.Line(), "#", false)
		w.nilOperand(e.Expr, "#", pos)
		w.operation(e.Expr, "#", pos)
	case *ast.FunctionExpr:
		w.function(e)
	}
}

// binaryOperation walks lhs op rhs, recording its operands as operations
// at the operator (found after lhs is walked: the n-th operator walked on a
// line is the n-th in its text).
func (w *walker) binaryOperation(lhs ast.Expr, op string, rhs ast.Expr, line int) {
	left := w.operation(lhs, op, Pos{})
	pos := w.operatorPos(line, rhs.Line(), op)
	if left >= 0 {
		w.f.Operations[left].Pos = pos
	}
	if op == ".." {
		w.numberText(lhs, op, pos, 0)
		w.numberText(rhs, op, pos, 0)
	}
	w.elemOperand(lhs, op, pos)
	w.elemOperand(rhs, op, pos)
	w.nilOperand(lhs, op, pos)
	w.nilOperand(rhs, op, pos)
	w.operation(rhs, op, pos)
}

// operatorPos is the position of a binary operator op whose expression
// starts on line and whose right side starts on last: the next one not yet
// walked on line, or, when all there are, on the first line up to last that
// has one left ('a'\n  .. v puts it on the next line).
func (w *walker) operatorPos(line, last int, op string) Pos {
	for l := line; l <= last; l++ {
		left := 0
		for _, t := range w.toks {
			if t.line == l && t.str == op && t.typ != luaparse.TString {
				left++
			}
		}
		if w.seen[identKey{l, op}] < left {
			pos, _ := w.tokenPos(l, op, false)
			return pos
		}
	}
	pos, _ := w.tokenPos(line, op, false)
	return pos
}

// nilOperand records e as a NilOperand of op at pos when it is a local
// that may hold nil or false there, as an argument of redis.call is
// checked (see Arg.MayNil): not tested, not a command's reply (an
// Operation), not one a function assigns (a call of it may have given it
// a value), not on the right of an and/or (whose left may test it).
func (w *walker) nilOperand(e ast.Expr, op string, pos Pos) {
	if w.dry || w.logicRight > 0 {
		return
	}
	id, ok := e.(*ast.IdentExpr)
	if !ok {
		return
	}
	l, _ := w.lookup(id.Value)
	if l == nil || l.fn != w.depth || l.paramOf != nil && !l.assigned || l.fnAssigned || l.nilv.set || l.fnExpr != nil || w.guarded(l) {
		return
	}
	isNil := func(r Return) bool { return r.Kind == ReturnNil }
	o := NilOperand{Pos: pos, Op: op, Name: id.Value}
	switch {
	case isNil(l.reply) && l.reply.LuaNil:
		o.Always = "nil"
	case isNil(l.reply):
		o.Always, o.False = "false", true
	case l.reply.Kind == ReturnOneOf && slices.ContainsFunc(l.reply.Alts, isNil):
		o.False = !slices.ContainsFunc(l.reply.Alts, func(r Return) bool { return isNil(r) && r.LuaNil })
	case l.andFalse:
		o.False = true
	case l.reply.Kind == ReturnUnknown && l.reply.MayNil:
	default:
		return
	}
	w.f.NilOperands = append(w.f.NilOperands, o)
	w.nilOpFns = append(w.nilOpFns, slices.Clone(w.fns))
}

// tonumberParam is the parameter p (and its name) when e is tonumber(p),
// p a parameter of the function being walked, never assigned and not
// tested here: the elements the calls pass p, nil for a short list, make
// it nil.
func (w *walker) tonumberParam(e ast.Expr) (*local, string) {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return nil, ""
	}
	arg, ok := w.tonumberArg(c)
	if !ok {
		return nil, ""
	}
	id, ok := arg.(*ast.IdentExpr)
	if !ok {
		return nil, ""
	}
	if p, _ := w.lookup(id.Value); p != nil && p.paramOf != nil && !p.assigned && p.fn == w.depth && !w.guarded(p) {
		return p, id.Value
	}
	return nil, ""
}

// elemOperand records e as an ElemOp of op (an operator, or assert) at pos
// when it is KEYS[n] or
// ARGV[n] written in place, tonumber(ARGV[n]), or a local holding either,
// not tested here.
func (w *walker) elemOperand(e ast.Expr, op string, pos Pos) {
	if w.dry || w.logicRight > 0 {
		return
	}
	table, n, text := "", 0, ""
	onPaths := false
	// elems takes the largest of elems, each the operand on some paths.
	elems := func(list []elemPass, what string) {
		for _, p := range list {
			if p.N > n {
				table, n, text, onPaths = p.Table, p.N, what+" ("+p.Table+"["+strconv.Itoa(p.N)+"])", true
			}
		}
	}
	switch x := e.(type) {
	case *ast.AttrGetExpr:
		if id, ok := x.Object.(*ast.IdentExpr); ok && (id.Value == "KEYS" || id.Value == "ARGV") && !w.isLocal(id.Value) {
			if k, ok := x.Key.(*ast.NumberExpr); ok {
				if i, err := strconv.Atoi(k.Value); err == nil && i >= 1 {
					table, n, text = id.Value, i, id.Value+"["+k.Value+"]"
				}
			}
		}
	case *ast.FuncCallExpr:
		if i := w.tonumberElem(x); i > 0 {
			table, n, text = "ARGV", i, "tonumber(ARGV["+strconv.Itoa(i)+"])"
		} else if p, name := w.tonumberParam(x); p != nil {
			// tonumber of a parameter: the elements the calls pass it
			// (see settleElemOps).
			w.opParams = append(w.opParams, opParam{l: p, name: "tonumber(" + name + ")", op: op, pos: pos, e: e, fns: slices.Clone(w.fns)})
			return
		} else if id, ok := x.Func.(*ast.IdentExpr); ok {
			// A call of a local function that may return it (local
			// function f() return ARGV[3] end, then f() + 1).
			elems(w.callElems(x), id.Value+"()")
		}
	case *ast.LogicalOpExpr:
		// An and with the element on either side ((ARGV[3] and 1) + 1,
		// 'x' .. (c and ARGV[3])) is nil or false for a short list, whatever
		// the other side: Lua fails there on every path.
		if x.Operator == "and" {
			for _, side := range []ast.Expr{x.Lhs, x.Rhs} {
				if t, i, bare := w.elemNeed(side); bare && i > n {
					table, n, text = t, i, t+"["+strconv.Itoa(i)+"] in and"
				}
			}
		}
	case *ast.IdentExpr:
		l, _ := w.lookup(x.Value)
		if l != nil && l.paramOf != nil && !l.assigned && l.fn == w.depth && !w.guarded(l) && !w.dry {
			// A parameter: the elements the calls pass it, once the
			// whole chunk is walked (see settleElemOps).
			w.opParams = append(w.opParams, opParam{l: l, name: x.Value, op: op, pos: pos, e: e, fns: slices.Clone(w.fns)})
			return
		}
		if l != nil && l.fn < w.depth && l.paramOf == nil && !w.dry {
			// A local of an enclosing function: what it is assigned
			// anywhere, once the whole chunk is walked.
			w.opUpvals = append(w.opUpvals, opParam{l: l, name: x.Value, op: op, pos: pos, e: e, fns: slices.Clone(w.fns)})
			return
		}
		if l == nil || l.fn != w.depth || l.paramOf != nil || l.fnAssigned || w.guarded(l) {
			return
		}
		if v := l.val; !v.Derived && !v.Stringified && (v.Source == SourceArgv || v.Source == SourceKey) {
			t := map[Source]string{SourceArgv: "ARGV", SourceKey: "KEYS"}[v.Source]
			if rest, ok := strings.CutPrefix(v.Text, t+"["); ok && strings.HasSuffix(rest, "]") {
				if i, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil && i >= 1 {
					table, n, text = t, i, x.Value+" ("+v.Text+")"
				}
			}
		} else if l.numArg > 0 && l.numElem > 0 {
			table, n, text = "ARGV", l.numElem, x.Value+" (tonumber(ARGV["+strconv.Itoa(l.numElem)+"]))"
		} else if p := l.numParam; p != nil && !p.assigned && !w.guarded(p) {
			// (local n = tonumber(x), x a parameter; not where a test of
			// x made since shows it holds a value.)
			w.opParams = append(w.opParams, opParam{l: p, name: x.Value + " (tonumber(" + l.numParamName + "))", op: op, pos: pos, e: e, fns: slices.Clone(w.fns)})
			return
		}
		if n == 0 {
			// Or given it on some paths only (local v = 'x', if c then
			// v = ARGV[3] end), or by a call of a local function that may
			// return it (local v = f()).
			var alts []elemPass
			for _, r := range append([]Return{l.reply}, l.reply.Alts...) {
				for _, t := range []string{"KEYS", "ARGV"} {
					rest, ok := strings.CutPrefix(r.Text, t+"[")
					if i, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); ok && r.Kind == ReturnString && err == nil && i >= 1 && strings.HasSuffix(rest, "]") {
						alts = append(alts, elemPass{t, i})
					}
				}
			}
			elems(append(alts, l.fnElems...), x.Value)
		}
	}
	if n == 0 {
		return
	}
	w.f.ElemOps = append(w.f.ElemOps, ElemOp{Pos: pos, Table: table, N: n, Text: text + " in " + op, OnPaths: onPaths})
	w.elemOpFns = append(w.elemOpFns, slices.Clone(w.fns))
	w.elemOpExprs = append(w.elemOpExprs, e)
}

// upvalElem is n when l, a local that a function reads from an enclosing
// one, holds table[n] (KEYS or ARGV) written in place wherever it is
// assigned, and the script never tests it: nil in the function when the
// list is short. 0 otherwise.
func upvalElem(l *local) (string, int) {
	v := l.all
	if l.tested || l.table || v.Derived || v.Stringified || v.Source != SourceArgv && v.Source != SourceKey {
		return "", 0
	}
	table := map[Source]string{SourceArgv: "ARGV", SourceKey: "KEYS"}[v.Source]
	rest, ok := strings.CutPrefix(v.Text, table+"[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return "", 0
	}
	if i, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil && i >= 1 {
		return table, i
	}
	return "", 0
}

// settleUpvalElems gives an argument of redis.call, or an operand of
// arithmetic or a concatenation, that is a local of an enclosing function
// the element that local holds (local v = ARGV[3]; local function f()
// redis.call('SET', KEYS[1], v) end): nil there when the list is short, as
// the element written in place is. It runs once the whole chunk is walked,
// when every assignment and test of the local is seen.
func (w *walker) settleUpvalElems() {
	for _, u := range w.upvals {
		a := &w.f.Calls[u.call].Args[u.arg]
		if table, n := upvalElem(u.l); n > a.Indexed && (table == "KEYS") == (a.Value.Source == SourceKey) && (a.Value.Source == SourceKey || a.Value.Source == SourceArgv) {
			// (The function may run on some paths only.)
			a.Indexed, a.IndexedOnPaths = n, true
		}
	}
	for _, u := range w.opUpvals {
		if table, n := upvalElem(u.l); n > 0 {
			text := u.name + " (" + table + "[" + strconv.Itoa(n) + "])"
			w.f.ElemOps = append(w.f.ElemOps, ElemOp{Pos: u.pos, Table: table, N: n, Text: text + " in " + u.op, OnPaths: true})
			w.elemOpFns = append(w.elemOpFns, u.fns)
			w.elemOpExprs = append(w.elemOpExprs, u.e)
		}
	}
}

// opParam is an operand of op at pos that is a parameter of the function
// being walked (l, named name), untested there; fns are the functions
// being walked there.
type opParam struct {
	l        *local
	name, op string
	pos      Pos
	e        ast.Expr
	fns      []*ast.FunctionExpr
}

// settleElemOps records an operand that is an untested parameter of a
// local function as the ElemOp of the element a call of the function passes
// it in place (local function f(v) return v .. ':x' end; f(ARGV[3])): nil
// there when the list is short, and Lua fails the script. It runs once the
// whole chunk is walked, when every call is seen.
func (w *walker) settleElemOps() {
	for _, u := range w.opParams {
		var best elemPass
		for _, p := range w.elemArgs[u.l.paramOf][u.l.param-1] {
			if p.N > best.N {
				best = p
			}
		}
		if best.N == 0 {
			continue
		}
		text := u.name + " (" + best.Table + "[" + strconv.Itoa(best.N) + "])"
		// (Another call may pass the function another value.)
		w.f.ElemOps = append(w.f.ElemOps, ElemOp{Pos: u.pos, Table: best.Table, N: best.N, Text: text + " in " + u.op, OnPaths: true})
		w.elemOpFns = append(w.elemOpFns, u.fns)
		w.elemOpExprs = append(w.elemOpExprs, u.e)
	}
}

// cond walks a condition, recording the replies it tests for truth: the
// whole condition, or each operand of and/or.
func (w *walker) cond(e ast.Expr) {
	if l, ok := e.(*ast.LogicalOpExpr); ok {
		w.cond(l.Lhs)
		// (The right runs only where the left shows a local or a field to
		// hold a value, as in any expression: see expr.)
		fields := w.nilGuards(l.Lhs, l.Operator == "or")
		falses := w.falseNames(l.Lhs, l.Operator == "and")
		if len(fields) > 0 || len(falses) > 0 {
			w.push()
			w.guard(fields)
			w.markFalse(falses)
		}
		w.cond(l.Rhs)
		if len(fields) > 0 || len(falses) > 0 {
			w.pop()
		}
		return
	}
	w.truth(e, false)
	w.measuredElem(e)
	w.markTested(e)
	w.expr(e)
}

// nilOrFalse reports whether e is nil or false written so.
func nilOrFalse(e ast.Expr) bool {
	switch e.(type) {
	case *ast.NilExpr, *ast.FalseExpr:
		return true
	}
	return false
}

// markTested marks the locals e reads as tested (see local.tested), and
// as valueTested those it reads other than for their truth.
func (w *walker) markTested(e ast.Expr) {
	truth := map[*ast.IdentExpr]bool{}
	var leaves func(e ast.Expr)
	leaves = func(e ast.Expr) {
		switch x := e.(type) {
		case *ast.IdentExpr:
			truth[x] = true
		case *ast.UnaryNotOpExpr:
			leaves(x.Expr)
		case *ast.LogicalOpExpr:
			leaves(x.Lhs)
			leaves(x.Rhs)
		case *ast.RelationalOpExpr:
			// v ~= nil, v == false: no more than a test of its truth.
			if x.Operator == "==" || x.Operator == "~=" {
				if nilOrFalse(x.Rhs) {
					leaves(x.Lhs)
				} else if nilOrFalse(x.Lhs) {
					leaves(x.Rhs)
				}
			}
		}
	}
	leaves(e)
	inspect([]ast.Stmt{&ast.ReturnStmt{Exprs: []ast.Expr{e}}}, func(ast.Stmt) {}, func(e ast.Expr) {
		if id, ok := e.(*ast.IdentExpr); ok {
			if l, _ := w.lookup(id.Value); l != nil {
				l.tested = true
				if !truth[id] {
					l.valueTested = true
				}
				// (t = type(v): the condition tests v's type.)
				if l.typeOfHeld() {
					l.typeOf.tested, l.typeOf.valueTested, l.typeOf.typed = true, true, true
				}
			}
		}
	})
}

// measuredElem records a condition that tests whether KEYS or ARGV holds
// an element (KEYS[1], not KEYS[1], ARGV[1] == nil) as a read of the
// table's length: the script may leave before a command gets it empty.
func (w *walker) measuredElem(e ast.Expr) {
	if n, ok := e.(*ast.UnaryNotOpExpr); ok {
		e = n.Expr
	}
	if r, ok := e.(*ast.RelationalOpExpr); ok && (r.Operator == "==" || r.Operator == "~=") {
		// (Or with a string or number: if ARGV[3] == 'x' then.)
		if _, ok := r.Rhs.(*ast.NilExpr); ok || stringOrNumber(r.Rhs) {
			e = r.Lhs
		} else if _, ok := r.Lhs.(*ast.NilExpr); ok || stringOrNumber(r.Lhs) {
			e = r.Rhs
		}
		// type(ARGV[3]) == 'string', 'nil' ~= type(KEYS[2]): a test of
		// its type tells whether it is there.
		for _, side := range [][2]ast.Expr{{r.Lhs, r.Rhs}, {r.Rhs, r.Lhs}} {
			c, ok := side[0].(*ast.FuncCallExpr)
			if _, str := side[1].(*ast.StringExpr); !ok || !str {
				continue
			}
			if f, isF := c.Func.(*ast.IdentExpr); isF && f.Value == "type" && !w.isLocal("type") && c.Receiver == nil && len(c.Args) == 1 {
				e = c.Args[0]
			}
		}
	}
	if c, ok := e.(*ast.FuncCallExpr); ok {
		// if tonumber(ARGV[3]) then: nil for nil, so a test of it too.
		if arg, ok := w.tonumberArg(c); ok {
			e = arg
		}
	}
	a, ok := e.(*ast.AttrGetExpr)
	if !ok {
		return
	}
	if id, ok := a.Object.(*ast.IdentExpr); ok && (id.Value == "KEYS" || id.Value == "ARGV") && !w.isLocal(id.Value) {
		// The element at a number (if ARGV[3] then) shows the list holds
		// it and those before it; one at an index the checker cannot
		// read (ARGV[i]) may be any.
		n := MeasuredAll
		if num, ok := a.Key.(*ast.NumberExpr); ok {
			if i, err := strconv.Atoi(num.Value); err == nil && i >= 1 {
				n = i
			}
		}
		w.measured(id.Value, n)
	}
	// A field of a table local that lists one (local t = {ARGV[3]}, if
	// t[1] then) tests it as well.
	if _, table, i := w.listedElem(a); i > 0 {
		w.measured(table, i)
	}
}

// elemIndex is n when text is table[n] (ARGV[3]), 0 else.
func elemIndex(text, table string) int {
	rest, ok := strings.CutPrefix(text, table+"[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return 0
	}
	i, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	if err != nil || i < 1 {
		return 0
	}
	return i
}

// listedElem is the field a of a table local, neither spoiled nor
// assigned, whose constructor lists KEYS[n] or ARGV[n] there (local t =
// {ARGV[3]}, then t[1]; local t = {v = KEYS[2]}, then t.v): the field's
// value, its table and n; n 0 for another.
func (w *walker) listedElem(a *ast.AttrGetExpr) (Value, string, int) {
	if _, ok := w.elemsOf(a.Object); !ok {
		return Value{}, "", 0
	}
	l := w.tableLocal(a.Object)
	if l == nil || l.fn != w.depth {
		return Value{}, "", 0
	}
	f, ok := l.fields[fieldKey(a.Key)]
	if !ok || f.Derived || f.Stringified || f.Source != SourceArgv && f.Source != SourceKey {
		return Value{}, "", 0
	}
	table := "ARGV"
	if f.Source == SourceKey {
		table = "KEYS"
	}
	rest, ok := strings.CutPrefix(f.Text, table+"[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return Value{}, "", 0
	}
	i, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	if err != nil || i < 1 {
		return Value{}, "", 0
	}
	return f, table, i
}

// measured records that the script tests whether KEYS or ARGV (table)
// holds its element n, or reads its length (n MeasuredAll).
func (w *walker) measured(table string, n int) {
	if w.f.Measured == nil {
		w.f.Measured = map[string]int{}
	}
	w.f.Measured[table] = max(w.f.Measured[table], n)
}

// truth records e as a truth test when it is a command's reply; it runs
// before e is walked, so e's own call is the next one recorded.
func (w *walker) truth(e ast.Expr, not bool) {
	op := w.operand(e, len(w.f.Calls))
	if op.Type != OperandReply && (op.Type != OperandString || op.Argv == 0) {
		return // a reply, or exactly ARGV[n] (which @arg tells)
	}
	t := Truth{Not: not, Operand: op}
	if id, ok := e.(*ast.IdentExpr); ok {
		t.Pos, _ = w.identPos(id.Line(), id.Value)
	}
	if a, ok := e.(*ast.AttrGetExpr); ok {
		if id, ok := a.Object.(*ast.IdentExpr); ok {
			t.Pos, _ = w.identPos(id.Line(), id.Value) // ARGV[n]
		}
	}
	w.f.Truths = append(w.f.Truths, t)
}

// operand is the Lua type of e, as compared; call is the index in
// File.Calls e's own redis.call will have.
func (w *walker) operand(e ast.Expr, call int) Operand {
	switch x := e.(type) {
	case *ast.StringExpr:
		return Operand{Type: OperandString, Text: strconv.Quote(x.Value), Literal: x.Value}
	case *ast.TrueExpr:
		return Operand{Type: OperandBool, Text: "true"}
	case *ast.FalseExpr:
		return Operand{Type: OperandBool, Text: "false"}
	case *ast.NilExpr:
		return Operand{Type: OperandNil, Text: "nil"}
	case *ast.StringConcatOpExpr:
		return Operand{Type: OperandString, Text: "a concatenation"}
	case *ast.NumberExpr:
		return Operand{Type: OperandNumber, Text: x.Value}
	case *ast.ArithmeticOpExpr, *ast.UnaryMinusOpExpr:
		return Operand{Type: OperandNumber, Text: "a number computed"}
	case *ast.UnaryLenOpExpr:
		return Operand{Type: OperandNumber, Text: "a length (#)"}
	case *ast.AttrGetExpr:
		if id, ok := x.Object.(*ast.IdentExpr); ok && (id.Value == "KEYS" || id.Value == "ARGV") && !w.isLocal(id.Value) {
			v := w.value(x)
			return Operand{Type: OperandString, Text: v.Text, Argv: argvIndex(v)}
		}
	case *ast.FuncCallExpr:
		if c, ok := callReply(x, call); ok {
			return Operand{Type: OperandReply, Text: "the reply of " + strings.ToUpper(c.Command), Call: c.Call}
		}
		// A call of a local function that returns a command's reply
		// (local function f() return redis.call('GET', k) end) is it.
		if i, c, ok := w.returnedReply(x); ok {
			return Operand{Type: OperandReply, Text: "the reply of " + strings.ToUpper(c.Command) + " that " + exprText(x) + " returns", Call: i}
		}
	case *ast.IdentExpr:
		l, _ := w.lookup(x.Value)
		if l == nil {
			return Operand{}
		}
		if v := l.val; (v.Source == SourceArgv || v.Source == SourceKey) && !v.Derived && strings.HasSuffix(v.Text, "]") {
			return Operand{Type: OperandString, Text: x.Value + " (" + v.Text + ")", Argv: argvIndex(v)}
		}
		if r := l.reply; r.Kind == ReturnCall {
			return Operand{Type: OperandReply, Text: x.Value + " (the reply of " + strings.ToUpper(r.Command) + ")", Call: r.Call}
		}
		// (Given such a call of a local function, local v = f().)
		if ns := l.nilv; ns.set && !ns.tonumber && !ns.some && l.reply.Kind == ReturnUnknown {
			return Operand{Type: OperandReply, Text: x.Value + " (the reply of " + strings.ToUpper(ns.command) + ")", Call: ns.call}
		}
	}
	return Operand{}
}

// repliesOperand is e as an operand of a comparison with nil when it is a
// local that holds the reply of one of several calls on every path (each
// of its values a command's reply), an unknown operand otherwise.
func (w *walker) repliesOperand(e ast.Expr) Operand {
	id, ok := e.(*ast.IdentExpr)
	if !ok {
		return Operand{}
	}
	l, _ := w.lookup(id.Value)
	if l == nil || l.reply.Kind != ReturnOneOf || len(l.reply.Alts) == 0 {
		return Operand{}
	}
	var cmds []string
	var calls []int
	for _, a := range l.reply.Alts {
		if a.Kind != ReturnCall {
			return Operand{}
		}
		if c := strings.ToUpper(a.Command); !slices.Contains(cmds, c) {
			cmds = append(cmds, c)
		}
		calls = append(calls, a.Call)
	}
	return Operand{Type: OperandReply, Text: id.Value + " (the reply of " + strings.Join(cmds, " or ") + ")", Call: calls[0], Calls: calls}
}

// fieldName is the string a table index is for certain: a string literal,
// or a local holding one (local f = 'owner' ... t[f]).
func (w *walker) fieldName(key ast.Expr) (string, bool) {
	switch k := key.(type) {
	case *ast.StringExpr:
		return k.Value, true
	case *ast.IdentExpr:
		if v, ok := w.local(k.Value); ok && v.Source == SourceLiteral && !v.Derived && strings.HasPrefix(v.Text, `"`) {
			if s, err := strconv.Unquote(v.Text); err == nil {
				return s, true
			}
		}
	}
	return "", false
}

// shapeFields are the fields of the tables RESP3 hands a map, a set, a
// double, a big number or a verbatim string to Lua as.
var shapeFields = map[string]bool{"map": true, "set": true, "double": true, "big_number": true, "verbatim_string": true}

// probe marks, until the function it returns is called, the calls whose
// reply a local holds and e reads a RESP3 shape field of (r.map, outside
// function bodies): the statement reads the reply as either protocol hands
// it to Lua.
func (w *walker) probe(e ast.Expr) func() {
	var calls []int
	var visit func(e ast.Expr)
	visit = func(e ast.Expr) {
		switch x := e.(type) {
		case *ast.AttrGetExpr:
			if id, ok := x.Object.(*ast.IdentExpr); ok {
				if k, ok := x.Key.(*ast.StringExpr); ok && shapeFields[k.Value] {
					if l, _ := w.lookup(id.Value); l != nil && l.reply.Kind == ReturnCall && l.reply.CallFunc == "redis.call" {
						calls = append(calls, l.reply.Call)
					}
				}
			}
			visit(x.Object)
			visit(x.Key)
		case *ast.LogicalOpExpr:
			visit(x.Lhs)
			visit(x.Rhs)
		case *ast.RelationalOpExpr:
			visit(x.Lhs)
			visit(x.Rhs)
		case *ast.UnaryNotOpExpr:
			visit(x.Expr)
		case *ast.FuncCallExpr:
			// type(h.map) == 'table' tests the field as h.map does.
			if id, ok := x.Func.(*ast.IdentExpr); ok && id.Value == "type" && !w.isLocal("type") && len(x.Args) == 1 {
				visit(x.Args[0])
			}
		}
	}
	visit(e)
	return markCalls(&w.probed, calls)
}

// markCalls counts calls in *m until the function it returns is called.
func markCalls(m *map[int]int, calls []int) func() {
	if len(calls) == 0 {
		return func() {}
	}
	if *m == nil {
		*m = map[int]int{}
	}
	for _, c := range calls {
		(*m)[c]++
	}
	return func() {
		for _, c := range calls {
			(*m)[c]--
		}
	}
}

// shape marks, until the function it returns is called, the calls whose
// reply e finds in a RESP3 shape when it is truth (see shapeKnown).
func (w *walker) shape(e ast.Expr, truth bool) func() {
	return markCalls(&w.shaped, w.shapeKnown(e, truth))
}

// shapeKnown returns the calls whose reply a local holds that are surely
// in a RESP3 shape (h.map present) when e is truth: h.map, h.map ~= nil,
// type(h.map) == 'table', and their negations, joined by and (when true)
// or or (when false).
func (w *walker) shapeKnown(e ast.Expr, truth bool) []int {
	field := func(e ast.Expr) (int, bool) {
		x, ok := e.(*ast.AttrGetExpr)
		if !ok {
			return 0, false
		}
		id, ok := x.Object.(*ast.IdentExpr)
		k, isStr := x.Key.(*ast.StringExpr)
		if !ok || !isStr || !shapeFields[k.Value] {
			return 0, false
		}
		if l, _ := w.lookup(id.Value); l != nil && l.reply.Kind == ReturnCall && l.reply.CallFunc == "redis.call" {
			return l.reply.Call, true
		}
		return 0, false
	}
	switch x := e.(type) {
	case *ast.AttrGetExpr:
		if c, ok := field(x); ok && truth {
			return []int{c}
		}
	case *ast.UnaryNotOpExpr:
		return w.shapeKnown(x.Expr, !truth)
	case *ast.LogicalOpExpr:
		if x.Operator == "and" && truth || x.Operator == "or" && !truth {
			return append(w.shapeKnown(x.Lhs, truth), w.shapeKnown(x.Rhs, truth)...)
		}
	case *ast.RelationalOpExpr:
		if x.Operator != "==" && x.Operator != "~=" {
			return nil
		}
		present := x.Operator == "~="
		l, r := x.Lhs, x.Rhs
		if _, ok := l.(*ast.NilExpr); ok {
			l, r = r, l
		}
		if s, ok := l.(*ast.StringExpr); ok {
			l, r = r, s
		}
		if _, ok := r.(*ast.NilExpr); ok {
			if c, ok := field(l); ok && present == truth {
				return []int{c}
			}
			return nil
		}
		s, ok := r.(*ast.StringExpr)
		call, isCall := l.(*ast.FuncCallExpr)
		if !ok || s.Value != "table" || !isCall || len(call.Args) != 1 {
			return nil
		}
		if id, ok := call.Func.(*ast.IdentExpr); ok && id.Value == "type" && !w.isLocal("type") {
			if c, ok := field(call.Args[0]); ok && (x.Operator == "==") == truth {
				return []int{c}
			}
		}
	}
	return nil
}

// fieldRead records obj.name when obj is a command's reply: a direct call
// (its index is the next in File.Calls, as obj is walked next) or a local
// that holds one.
func (w *walker) fieldRead(obj ast.Expr, name, index string) {
	switch x := obj.(type) {
	case *ast.FuncCallExpr:
		if c, ok := callReply(x, len(w.f.Calls)); ok && c.CallFunc == "redis.call" {
			// Pos is the call's, once it is walked (zero here).
			w.f.Fields = append(w.f.Fields, FieldRead{Text: "redis.call(...)" + index, Name: name, Call: c.Call, Probed: w.probed[c.Call] > 0})
		}
	case *ast.IdentExpr:
		l, _ := w.lookup(x.Value)
		if l == nil || l.reply.Kind != ReturnCall || l.reply.CallFunc != "redis.call" {
			return
		}
		pos, _ := w.identPos(x.Line(), x.Value)
		w.f.Fields = append(w.f.Fields, FieldRead{Pos: pos, Text: x.Value + index, Name: name, Call: l.reply.Call, Probed: w.probed[l.reply.Call] > 0})
	}
}

// elemRead records a read of obj by an index, ipairs or pairs (how) when
// obj is a command's reply, as fieldRead does; text gives what is written
// from obj's text.
func (w *walker) elemRead(obj ast.Expr, how string, text func(string) string) {
	if w.dry {
		return
	}
	switch x := obj.(type) {
	case *ast.FuncCallExpr:
		if c, ok := callReply(x, len(w.f.Calls)); ok && c.CallFunc == "redis.call" {
			w.f.ElemReads = append(w.f.ElemReads, ElemRead{How: how, Text: text("redis.call(...)"), Obj: "redis.call(...)", Call: c.Call, Probed: w.probed[c.Call] > 0 && w.shaped[c.Call] == 0})
		}
	case *ast.IdentExpr:
		l, _ := w.lookup(x.Value)
		if l == nil || l.reply.Kind != ReturnCall || l.reply.CallFunc != "redis.call" {
			return
		}
		pos, _ := w.identPos(x.Line(), x.Value)
		w.f.ElemReads = append(w.f.ElemReads, ElemRead{Pos: pos, How: how, Text: text(x.Value), Obj: x.Value, Call: l.reply.Call, Probed: w.probed[l.reply.Call] > 0 && w.shaped[l.reply.Call] == 0})
	}
}

// argvIndex is n for a value that is exactly ARGV[n], else 0.
func argvIndex(v Value) int {
	if v.Source != SourceArgv || v.Derived {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(v.Text, "ARGV["), "]"))
	if err != nil {
		return 0
	}
	return n
}

// luaIndex is the array index a Lua 5.1 number literal gives (KEYS[0x1],
// KEYS[1.0] and KEYS[1e0] are KEYS[1], as in Redis); ok is false for a
// number that is not a positive integer.
func luaIndex(lit string) (int, bool) {
	var f float64
	if hex, ok := strings.CutPrefix(strings.ToLower(lit), "0x"); ok {
		n, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			return 0, false
		}
		f = float64(n)
	} else {
		v, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			return 0, false
		}
		f = v
	}
	if f < 1 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

func (w *walker) addUse(table string, u Use) {
	if table == "KEYS" {
		w.f.Keys = append(w.f.Keys, u)
	} else {
		w.f.Argv = append(w.f.Argv, u)
	}
}

// tableWrite records a change to KEYS or ARGV, when id names either
// (File.TableWrites).
func (w *walker) tableWrite(id *ast.IdentExpr, name string) {
	if (id.Value != "KEYS" && id.Value != "ARGV") || w.isLocal(id.Value) || w.dry {
		return
	}
	w.f.TableWrites = append(w.f.TableWrites, TableWrite{Pos: w.peekPos(id.Line(), id.Value, false), Name: name, Table: id.Value})
}

// changed records that the script may change KEYS or ARGV (table).
func (w *walker) changed(table string) {
	if w.f.Changed == nil {
		w.f.Changed = map[string]bool{}
	}
	w.f.Changed[table] = true
}

func sourceOfTable(name string) Source {
	if name == "KEYS" {
		return SourceKey
	}
	return SourceArgv
}

// indexText is t[key] as messages show it: t[1], t.name, t[i], t[...].
func indexText(t string, key ast.Expr) string {
	switch k := key.(type) {
	case *ast.NumberExpr:
		return t + "[" + k.Value + "]"
	case *ast.IdentExpr:
		return t + "[" + k.Value + "]"
	case *ast.StringExpr:
		if identRe.MatchString(k.Value) {
			return t + "." + k.Value
		}
		return t + "[" + strconv.Quote(k.Value) + "]"
	}
	return t + "[...]"
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// literalLocal is the literal the local x holds, when it holds no other
// value anywhere in the script (as the previous walk found: upAll): its
// text as Lua writes it for a number (number set), or the string.
func (w *walker) literalLocal(x *ast.IdentExpr) (lit string, number, ok bool) {
	l, _ := w.lookup(x.Value)
	if l == nil || l.paramOf != nil || l.fnExpr != nil || l.table || w.upAll == nil {
		return "", false, false
	}
	all, known := w.upAll[l.decl]
	if !known || all != l.val || all.Source != SourceLiteral || all.Derived || all.Text == "" {
		return "", false, false
	}
	if strings.HasPrefix(all.Text, `"`) {
		s, err := strconv.Unquote(all.Text)
		return s, false, err == nil
	}
	return all.Text, true, true
}

// value classifies where an expression's value comes from.
func (w *walker) value(e ast.Expr) Value {
	switch x := e.(type) {
	case *ast.StringExpr:
		return Value{Source: SourceLiteral, Text: strconv.Quote(x.Value)}
	case *ast.NumberExpr:
		return Value{Source: SourceLiteral, Text: x.Value}
	case *ast.UnaryMinusOpExpr:
		if n, ok := x.Expr.(*ast.NumberExpr); ok { // -1, -0
			return Value{Source: SourceLiteral, Text: "-" + n.Value}
		}
	case *ast.NilExpr, *ast.FalseExpr:
		return Value{Source: SourceNil}
	case *ast.AttrGetExpr:
		if id, ok := x.Object.(*ast.IdentExpr); ok {
			if id.Value == "KEYS" || id.Value == "ARGV" {
				idx := "i"
				if n, ok := x.Key.(*ast.NumberExpr); ok {
					idx = n.Value
					if i, ok := luaIndex(n.Value); ok {
						idx = strconv.Itoa(i) // KEYS[0x1] is KEYS[1]
					}
				}
				return Value{Source: sourceOfTable(id.Value), Text: id.Value + "[" + idx + "]"}
			}
			if v, ok := w.local(id.Value); ok && v.Source == SourceRedis {
				return v // a field of a reply is data read from Redis too
			}
			if v, ok := w.local(id.Value); ok && v == argvTable {
				return Value{Source: SourceArgv, Text: "ARGV[i]", Derived: true} // args[1] with args = ARGV
			}
			if v, ok := w.elemsOf(id); ok {
				// t[1] or t.lock of local t = {KEYS[1], lock = KEYS[2]}:
				// the value listed there.
				l := w.tableLocal(id)
				if _, ok := l.fields[fieldKey(x.Key)]; !ok && l.fieldsAll && fieldKey(x.Key) != "" {
					// t[2] of local t = {KEYS[1]}, a table the script
					// never changes: nil.
					return Value{Source: SourceNil, Text: indexText(id.Value, x.Key)}
				}
				if f, ok := l.fields[fieldKey(x.Key)]; ok {
					f.Derived = true
					if v.Text == "" && f.Source != SourceKey && f.Source != SourceKeyChanged {
						f.Text = indexText(id.Value, x.Key) // named as written
					}
					return f
				}
				if v.Text == "" {
					// Several values (t = {'a', 'b'}): messages name
					// what is written, as for a local.
					v.Text = indexText(id.Value, x.Key)
				}
				return v
			}
		}
	case *ast.LogicalOpExpr:
		// a and b gives b, or a when a is nil or false (no key, and no
		// value redis.call takes); a or b gives a, or b when a is nil or
		// false.
		lhs := Value{Source: SourceNil}
		if x.Operator == "or" {
			lhs = w.value(x.Lhs)
		}
		v := mergeValue(lhs, w.value(x.Rhs))
		v.Derived = true
		return v
	case *ast.StringConcatOpExpr:
		// A key extended on the right keeps its hash tag: {name}:suffix.
		v := w.value(x.Lhs)
		v.Derived = true
		v.Extended = v.Source == SourceKey
		return v
	case *ast.IdentExpr:
		if l, _ := w.lookup(x.Value); l != nil {
			v := l.val
			if all, ok := w.upAll[l.decl]; ok && l.fn < w.depth {
				// A local of an enclosing function: the function may
				// run after any of its assignments.
				if m := mergeValue(v, all); m != v {
					v = m
					if v.Source != SourceLiteral {
						v.Text = x.Value // several values: messages name the local
					}
				}
			}
			if v.Text == "" {
				v.Text = x.Value
			}
			return v
		}
		if x.Value == "ARGV" {
			// The table itself, held in a local (local args = ARGV) or
			// passed on: its values are arguments, which the walker no
			// longer tells apart.
			return argvTable
		}
	case *ast.FuncCallExpr:
		if name, ok := redisFunc(x); ok && (name == "call" || name == "pcall") {
			return Value{Source: SourceRedis}
		}
		if l := w.localFunc(x.Func); l != nil {
			// What the function returns, as the last walk found; for one
			// the script also assigns (f = function ... end), what any of
			// the functions assigned it returns: a call may run either.
			// (Unknown when it is assigned anything else.)
			fns := []*ast.FunctionExpr{l.fnExpr}
			if a := w.fnAssigns[l.fnExpr]; a != nil {
				if a.other {
					return Value{Source: SourceUnknown}
				}
				fns = append(fns, a.fns...)
			}
			v := Value{Source: sourcePending}
			for _, fn := range fns {
				r, ok := w.returned[fn]
				if !ok {
					return Value{Source: SourceUnknown}
				}
				v = mergeValue(v, r)
			}
			v.Derived = true
			return v
		}
		if id, ok := x.Func.(*ast.IdentExpr); ok && id.Value == "assert" && !w.isLocal("assert") && len(x.Args) > 0 && !expands(x.Args[0]) {
			// assert(v, ...) gives v, or fails the script for nil or false.
			return w.value(x.Args[0])
		}
		if id, ok := x.Func.(*ast.IdentExpr); ok && id.Value == "tostring" && len(x.Args) == 1 {
			v := w.value(x.Args[0])
			v.Stringified = v.Source == SourceArgv || v.Source == SourceKey
			return v
		}
		// ('%s:x'):format(KEYS[1]) is string.format('%s:x', KEYS[1]).
		if f, ok := x.Receiver.(*ast.StringExpr); ok && x.Method == "format" {
			v := Value{Source: SourceLiteral, Text: strconv.Quote(f.Value)}
			if strings.HasPrefix(f.Value, "%s") {
				if len(x.Args) < 1 {
					return Value{Source: SourceUnknown}
				}
				v = w.value(x.Args[0])
				v.Extended = v.Source == SourceKey && (v.Extended || f.Value != "%s")
			}
			v.Derived = true
			return v
		}
		// A method of a value (ARGV[1]:lower()) is built from that value.
		if x.Receiver != nil {
			v := w.value(x.Receiver)
			switch v.Source {
			case SourceUnknown, SourceNil:
				return Value{Source: SourceUnknown}
			case SourceKey, SourceKeyChanged:
				rest := "..."
				if len(x.Args) == 0 {
					rest = ""
				}
				return Value{Source: SourceKeyChanged, Text: v.Text + ":" + x.Method + "(" + rest + ")", Derived: true}
			}
			v.Derived = true
			return v
		}
		// string.sub(KEYS[1], 1, 3), string.lower(KEYS[1]): another key.
		if name, ok := w.libFunc(x); ok && strings.HasPrefix(name, "string.") && name != "string.format" {
			if v := w.value(x.Args[0]); v.Source == SourceKey || v.Source == SourceKeyChanged {
				rest := ", ..."
				if len(x.Args) == 1 {
					rest = ""
				}
				return Value{Source: SourceKeyChanged, Text: name + "(" + v.Text + rest + ")", Derived: true}
			}
		}
		// string.format(f, ...) is built from its format, as a concatenation
		// from its leftmost operand: from the first value when f starts
		// with %s.
		if a, ok := x.Func.(*ast.AttrGetExpr); ok && len(x.Args) > 0 {
			obj, isIdent := a.Object.(*ast.IdentExpr)
			key, isStr := a.Key.(*ast.StringExpr)
			if f, isLit := x.Args[0].(*ast.StringExpr); isIdent && isStr && isLit &&
				obj.Value == "string" && key.Value == "format" && !w.isLocal("string") {
				v := Value{Source: SourceLiteral, Text: strconv.Quote(f.Value)}
				if strings.HasPrefix(f.Value, "%s") {
					if len(x.Args) < 2 {
						return Value{Source: SourceUnknown}
					}
					v = w.value(x.Args[1])
					// string.format('%s:x', KEYS[1]) extends the key on
					// the right, as KEYS[1] .. ':x' does.
					v.Extended = v.Source == SourceKey && (v.Extended || f.Value != "%s")
				}
				v.Derived = true
				return v
			}
		}
		// select(n, ...) gives the values after the n-th (select('#', ...)
		// their count).
		if id, ok := x.Func.(*ast.IdentExpr); ok && id.Value == "select" && !w.isLocal("select") && len(x.Args) > 1 {
			if n, ok := x.Args[0].(*ast.StringExpr); !ok || n.Value != "#" {
				v := w.value(x.Args[1])
				v.Derived = true
				return v
			}
		}
		// unpack(ARGV) gives the arguments themselves (unpack(KEYS) the keys).
		if id, ok := x.Func.(*ast.IdentExpr); ok && id.Value == "unpack" && !w.isLocal("unpack") && len(x.Args) > 0 {
			if t, ok := x.Args[0].(*ast.IdentExpr); ok && (t.Value == "KEYS" || t.Value == "ARGV") && !w.isLocal(t.Value) {
				return Value{Source: sourceOfTable(t.Value), Text: "unpack(" + t.Value + ")", Derived: true}
			}
			if v, ok := w.elemsOf(x.Args[0]); ok {
				if id, isIdent := x.Args[0].(*ast.IdentExpr); isIdent && v.Text == "" {
					v.Text = "unpack(" + id.Value + ")"
				}
				return v
			}
			// unpack({a, b}) gives the list's values.
			if t, ok := x.Args[0].(*ast.TableExpr); ok && len(x.Args) == 1 {
				v := Value{Source: sourcePending}
				for _, f := range t.Fields {
					if f.Key == nil {
						v = mergeValue(v, w.value(f.Value))
					}
				}
				if v.Source == sourcePending {
					return Value{Source: SourceNil}
				}
				if v.Text == "" {
					v.Text = "unpack({...})"
				}
				v.Derived = true
				return v
			}
		}
	}
	return Value{Source: SourceUnknown}
}

// globalRead records a read of the global name at pos when Redis's script
// sandbox does not define it (server, the redis table's name in Valkey).
func (w *walker) globalRead(name string, pos Pos) {
	if !sandboxGlobals[name] && !escapeGlobals[name] {
		w.f.UnknownGlobals = append(w.f.UnknownGlobals, Global{Pos: pos, Name: name})
	}
}

// sandboxGlobals are the globals a script can read in Redis 7.0's script
// sandbox, from the allow lists of src/script_lua.c (the Lua 5.1 libraries
// string, table, math and Redis's cjson, cmsgpack, bit and struct; redis;
// the Lua base functions), with KEYS and ARGV, which EVAL sets. Left out:
// the escapeGlobals, reported on their own; print, dofile and loadfile
// (Redis's deny list) and debug (removed once Redis has set up its error
// handler), which a script cannot read; newproxy, allow-listed but
// undocumented and missing from some 7.0 builds (Debian's 7.0.15); and
// __redis__err__handler, Redis's own.
var sandboxGlobals = map[string]bool{
	"KEYS": true, "ARGV": true, "redis": true,
	"string": true, "table": true, "math": true, "cjson": true, "cmsgpack": true, "bit": true, "struct": true,
	"assert": true, "collectgarbage": true, "coroutine": true, "error": true, "gcinfo": true,
	"getmetatable": true, "ipairs": true, "next": true, "pairs": true, "pcall": true,
	"rawequal": true, "rawget": true, "rawset": true, "select": true, "setmetatable": true,
	"tonumber": true, "tostring": true, "type": true, "unpack": true, "xpcall": true, "_VERSION": true,
}

// redisFields are the fields of the redis table in a Redis 7.0 script
// (EVAL; FUNCTION's register_function is not among them), as pairs(redis)
// lists them on the server.
var redisFields = map[string]bool{
	"call": true, "pcall": true, "log": true, "error_reply": true, "status_reply": true, "sha1hex": true,
	"setresp": true, "set_repl": true, "replicate_commands": true, "breakpoint": true, "debug": true,
	"acl_check_cmd": true, "LOG_DEBUG": true, "LOG_VERBOSE": true, "LOG_NOTICE": true, "LOG_WARNING": true,
	"REPL_ALL": true, "REPL_AOF": true, "REPL_NONE": true, "REPL_REPLICA": true, "REPL_SLAVE": true,
	"REDIS_VERSION": true, "REDIS_VERSION_NUM": true,
}

// libFields are the fields of the libraries a Redis 7.0 script has, as
// pairs(lib) lists them on the server: Lua 5.1's string, table and math, and
// Redis's cjson, cmsgpack, bit and struct.
var libFields = map[string]map[string]bool{
	"string": setOf("byte char dump find format gfind gmatch gsub len lower match rep reverse sub upper"),
	"table":  setOf("concat foreach foreachi getn insert maxn remove setn sort"),
	"math": setOf("abs acos asin atan atan2 ceil cos cosh deg exp floor fmod frexp huge ldexp log log10 max min mod modf pi pow rad random randomseed " +
		"sin sinh sqrt tan tanh"),
	"cjson": setOf("_NAME _VERSION decode decode_invalid_numbers decode_max_depth encode encode_invalid_numbers encode_keep_buffer encode_max_depth " +
		"encode_number_precision encode_sparse_array new null"),
	"cmsgpack": setOf("_COPYRIGHT _DESCRIPTION _NAME _VERSION pack unpack unpack_limit unpack_one"),
	"bit":      setOf("arshift band bnot bor bswap bxor lshift rol ror rshift tobit tohex"),
	"struct":   setOf("pack size unpack"),
}

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// LibFields lists the fields of each library a Redis 7.0 script has, sorted.
func LibFields() map[string][]string {
	out := map[string][]string{}
	for lib, fields := range libFields {
		out[lib] = slices.Sorted(maps.Keys(fields))
	}
	return out
}

// unpack records unpack(t) of a whole command reply, t a direct call or a
// local holding one; its position is taken without using up the
// occurrence, which walking the function name reads next.
func (w *walker) unpack(e *ast.FuncCallExpr) {
	id, ok := e.Func.(*ast.IdentExpr)
	if !ok || id.Value != "unpack" || w.isLocal("unpack") || len(e.Args) != 1 || e.Receiver != nil || w.dry {
		return
	}
	var u Unpack
	switch x := e.Args[0].(type) {
	case *ast.FuncCallExpr:
		r, ok := callReply(x, len(w.f.Calls))
		if !ok {
			return
		}
		u.Command, u.Call, u.Text = r.Command, r.Call, "the reply of "+strings.ToUpper(r.Command)
	case *ast.IdentExpr:
		l, _ := w.lookup(x.Value)
		if l == nil || l.reply.Kind != ReturnCall {
			return
		}
		u.Command, u.Call, u.Text = l.reply.Command, l.reply.Call, x.Value+" (the reply of "+strings.ToUpper(l.reply.Command)+")"
	default:
		return
	}
	u.Pos = w.peekPos(id.Line(), id.Value, false)
	w.f.Unpacks = append(w.f.Unpacks, u)
}

// lua51Args are the library functions that take fewer arguments in Lua 5.1
// than in later Lua, which reads one more: Lua 5.1 ignores it.
var lua51Args = map[string]int{"math.log": 1, "math.atan": 1, "string.rep": 2}

// ignoredArgs records a call of a lua51Args function given the argument
// Lua 5.1 ignores; its position is peeked, since walking the function name
// may look it up.
func (w *walker) ignoredArgs(e *ast.FuncCallExpr) {
	a, ok := e.Func.(*ast.AttrGetExpr)
	if !ok || w.dry {
		return
	}
	lib := w.readOnlyTable(a.Object)
	key, lit := a.Key.(*ast.StringExpr)
	if lib == "" || !lit {
		return
	}
	name := lib + "." + key.Value
	if n, ok := lua51Args[name]; !ok || len(e.Args) <= n {
		return
	}
	pos := w.peekPos(a.Key.Line(), key.Value, true)
	w.f.IgnoredArgs = append(w.f.IgnoredArgs, Global{Pos: pos, Name: name})
}

// libField records a read of lib.name that the library does not define.
func (w *walker) libField(line int, lib, name string) {
	if libFields[lib][name] || w.dry {
		return
	}
	pos, _ := w.tokenPos(line, name, true)
	w.f.UnknownLibFields = append(w.f.UnknownLibFields, Global{Pos: pos, Name: lib + "." + name})
}

// readOnlyTable is the name of the read-only table t is (redis, or a
// library), "" for any other expression.
func (w *walker) readOnlyTable(t ast.Expr) string {
	id, ok := t.(*ast.IdentExpr)
	if !ok || w.isLocal(id.Value) {
		return ""
	}
	if _, lib := libFields[id.Value]; lib || w.isRedis(id) {
		return id.Value
	}
	return ""
}

// RedisFields lists the fields of the redis table in a Redis 7.0 script,
// sorted.
func RedisFields() []string { return slices.Sorted(maps.Keys(redisFields)) }

// redisField records a read or call of redis.name that Redis does not
// define; the field's column is that of its name.
func (w *walker) redisField(line int, name string, called bool) {
	pos, _ := w.tokenPos(line, name, true)
	if !redisFields[name] {
		w.f.UnknownRedisFields = append(w.f.UnknownRedisFields, Global{Pos: pos, Name: name, Function: called})
	}
}

// escapeGlobals reach redis.call without naming it (_G.redis.call,
// getfenv(1).redis) or run code compiled at run time.
var escapeGlobals = map[string]bool{
	"_G": true, "getfenv": true, "setfenv": true, "loadstring": true, "load": true,
	"dofile": true, "loadfile": true,
}

// isRedis reports whether id is the global redis (or server) table.
func (w *walker) isRedis(id *ast.IdentExpr) bool {
	return (id.Value == "redis" || id.Value == "server") && !w.isLocal(id.Value)
}

// redisFunc returns X of a redis.X(...) or server.X(...) call.
func redisFunc(e *ast.FuncCallExpr) (string, bool) {
	attr, ok := e.Func.(*ast.AttrGetExpr)
	if !ok {
		return "", false
	}
	obj, ok := attr.Object.(*ast.IdentExpr)
	if !ok || (obj.Value != "redis" && obj.Value != "server") {
		return "", false
	}
	key, ok := attr.Key.(*ast.StringExpr)
	if !ok {
		return "", false
	}
	return key.Value, true
}

// expands reports whether e, as the last argument of a call, gives any
// number of values (a call or ...).
func expands(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.FuncCallExpr:
		return !x.AdjustRet
	case *ast.Comma3Expr:
		return !x.AdjustRet
	}
	return false
}

// call records redis.call / redis.pcall (and server.*) sites, error replies
// and error() calls.
func (w *walker) call(e *ast.FuncCallExpr) {
	if id, ok := e.Func.(*ast.IdentExpr); ok && id.Value == "error" && !w.isLocal("error") && len(e.Args) > 0 {
		pos, _ := w.identPos(id.Line(), id.Value)
		// error({err = 'CODE ...'}) fails the script with that error
		// reply, as returning the table does: the table is recorded as
		// such when it is walked.
		site := -1
		if lit, joined, ok := messageStart(e.Args[0], w.stringLiteral); ok {
			site = len(w.f.ErrorSites)
			w.f.ErrorSites = append(w.f.ErrorSites, ErrorSite{Pos: pos, Text: lit, Via: "error()", Joined: joined})
		}
		w.paramErr(e.Args[0], "error()", site)
		return
	}
	name, ok := redisFunc(e)
	if !ok {
		return
	}
	obj := e.Func.(*ast.AttrGetExpr).Object.(*ast.IdentExpr)
	pos, ti := w.identPos(obj.Line(), obj.Value)
	if !w.isLocal(obj.Value) {
		w.globalRead(obj.Value, pos)
		if obj.Value == "redis" {
			w.redisField(obj.Line(), name, true)
		}
	}
	if (name != "call" && name != "pcall" || len(e.Args) == 0) && !w.dry {
		lc := RedisLibCall{Pos: pos, Name: name, Args: len(e.Args)}
		if n := len(e.Args); n > 0 && expands(e.Args[n-1]) {
			lc.Args = -1
		}
		if len(e.Args) > 0 {
			switch x := e.Args[0].(type) {
			case *ast.StringExpr:
				lc.First = Operand{Type: OperandString, Text: strconv.Quote(x.Value), Literal: x.Value}
			case *ast.NumberExpr:
				lc.First = Operand{Type: OperandNumber, Text: x.Value}
			case *ast.UnaryMinusOpExpr:
				if n, ok := x.Expr.(*ast.NumberExpr); ok {
					lc.First = Operand{Type: OperandNumber, Text: "-" + n.Value}
				}
			case *ast.AttrGetExpr:
				if id, ok := x.Object.(*ast.IdentExpr); ok && w.isRedis(id) {
					if k, ok := x.Key.(*ast.StringExpr); ok && strings.HasPrefix(k.Value, "LOG_") {
						lc.First = Operand{Type: OperandNumber, Text: id.Value + "." + k.Value}
					}
				}
			}
		}
		if len(w.fns) > 0 {
			lc.Fn = w.funcIndex(w.fns[len(w.fns)-1])
		}
		lc.Loops = slices.Clone(w.loops)
		lc.Blocks = slices.Clone(w.scopeIDs)
		if n := len(w.conds); n > 0 {
			lc.From, lc.Until = w.conds[n-1][0], w.conds[n-1][1]
		}
		w.f.RedisLibCalls = append(w.f.RedisLibCalls, lc)
	}
	switch name {
	case "setresp":
		// redis.setresp(2) keeps the protocol a script starts in: replies
		// keep their RESP2 shapes.
		if len(e.Args) != 1 || !numberIs(e.Args[0], 2) {
			w.f.SetResp = true
		}
		return
	case "error_reply":
		if len(e.Args) > 0 {
			// A message that is not a literal is recorded with no text: its
			// code cannot be checked.
			lit, joined, _ := messageStart(e.Args[0], w.stringLiteral)
			w.f.ErrorSites = append(w.f.ErrorSites, ErrorSite{Pos: pos, Text: lit, Via: obj.Value + ".error_reply", Joined: joined})
			w.paramErr(e.Args[0], obj.Value+".error_reply", len(w.f.ErrorSites)-1)
		}
		return
	case "call", "pcall":
	default:
		return
	}
	if len(e.Args) == 0 {
		return
	}
	argPos := w.argPositions(ti)
	if n := len(e.Args); n > 1 {
		// unpack({KEYS[1], 'v'}) last gives what its constructor lists:
		// each is checked as if written in place (key positions, counts,
		// groups), at the unpack's position.
		if u, ok := e.Args[n-1].(*ast.FuncCallExpr); ok && u.Receiver == nil && len(u.Args) == 1 {
			f, isF := u.Func.(*ast.IdentExpr)
			t, isT := u.Args[0].(*ast.TableExpr)
			if isF && isT && f.Value == "unpack" && !w.isLocal("unpack") && listed(t) > 0 {
				ex := *e
				ex.Args = slices.Clip(e.Args[:n-1])
				for _, fl := range t.Fields {
					ex.Args = append(ex.Args, fl.Value)
				}
				if n-1 < len(argPos) {
					at := argPos[n-1]
					argPos = slices.Clip(argPos[:n-1])
					for range t.Fields {
						argPos = append(argPos, at)
					}
				}
				e = &ex
			}
		}
	}
	c := Call{Pos: pos, Func: obj.Value + "." + name}
	if cmd, ok := e.Args[0].(*ast.StringExpr); ok {
		c.Command = cmd.Value
		if cmd.Value == "" {
			c.NoName = `""`
		}
	} else if n, ok := e.Args[0].(*ast.NumberExpr); ok {
		c.NoName = n.Value
	} else if n, ok := e.Args[0].(*ast.UnaryMinusOpExpr); ok && isNumber(n.Expr) {
		c.NoName = "-" + n.Expr.(*ast.NumberExpr).Value
	} else if what := notString(e.Args[0]); what != "" {
		c.NameNotString = what
	} else {
		c.Dynamic = w.value(e.Args[0])
		if c.Dynamic.Text == "" {
			c.Dynamic.Text = "an expression"
		}
	}
	if len(argPos) > 0 {
		c.CommandPos = argPos[0]
	} else {
		c.CommandPos = pos
	}
	var ups, pars, elemPars []upval
	for i, a := range e.Args[1:] {
		arg := Arg{Pos: pos, Value: w.value(a)}
		if id, ok := a.(*ast.IdentExpr); ok {
			if l, _ := w.lookup(id.Value); l != nil && l.indexOf > 0 {
				arg.IndexOf, arg.Name = l.indexOf, id.Value
			}
			if l, _ := w.lookup(id.Value); l != nil && l.fn < w.depth && !w.dry {
				ups = append(ups, upval{arg: i, l: l, name: id.Value})
			}
			if l, _ := w.lookup(id.Value); l != nil && l.paramOf != nil && !l.assigned && !w.dry {
				pars = append(pars, upval{arg: i, l: l, name: id.Value})
			}
			if l, _ := w.lookup(id.Value); l != nil && l.paramOf != nil && !l.assigned && l.fn == w.depth && !w.dry {
				elemPars = append(elemPars, upval{arg: i, l: l, name: id.Value, tested: paramValueRead(l), guarded: w.guarded(l), nilOnly: w.knownNilOnly(l), conds: w.condsOf(l.paramOf)})
			}
			// A local given a parameter on some paths (y = v), also
			// one assigned since (v = 'x'): it holds what a call passed.
			if l, _ := w.lookup(id.Value); l != nil && (l.paramOf == nil || l.assigned) && l.fn == w.depth && !w.dry {
				for j, m := range l.mayParams {
					if p := m.p; !slices.ContainsFunc(l.mayParams[:j], func(o mayParam) bool { return o.p == p }) {
						// (The parameter itself on the paths that do not
						// assign it: as the parameter.)
						elemPars = append(elemPars, upval{arg: i, l: p, name: id.Value, via: p != l, tested: paramValueRead(l), guarded: w.guarded(l), nilOnly: w.knownNilOnly(l), conds: w.condsOf(p.paramOf)})
					}
				}
			}
			// A local given tonumber of a parameter (local n =
			// tonumber(x)), neither it nor the parameter tested here.
			if l, _ := w.lookup(id.Value); l != nil && l.numParam != nil && !l.numParam.assigned && l.fn == w.depth && !l.fnAssigned && !w.guarded(l) && !w.guarded(l.numParam) && !w.dry {
				elemPars = append(elemPars, upval{arg: i, l: l.numParam, name: l.numParamName, tonumber: true})
			}
		}
		if i+1 < len(argPos) {
			arg.Pos = argPos[i+1]
		}
		if lit, ok := leadingLiteral(a); ok {
			arg.Literal = &lit
		}
		switch x := a.(type) {
		case *ast.AttrGetExpr:
			// KEYS[3], ARGV[3] written in place (see Arg.Indexed).
			id, ok := x.Object.(*ast.IdentExpr)
			n, ok2 := x.Key.(*ast.NumberExpr)
			if ok && ok2 && (id.Value == "KEYS" || id.Value == "ARGV") && !w.isLocal(id.Value) {
				if i, err := strconv.Atoi(n.Value); err == nil && i >= 1 {
					arg.Indexed = i
				}
			}
			// Or a field of a table local that lists it (local t =
			// {ARGV[3]}, then t[1]).
			if _, table, i := w.listedElem(x); i > 0 && table != "" {
				arg.Indexed = i
			}
			// A field a table the script never changes does not list
			// (t[2] of local t = {KEYS[1]}) is nil; unless the script
			// tests it, and may pass it only where it holds a value (if
			// t[2] then).
			if id, ok := x.Object.(*ast.IdentExpr); ok && arg.Value.Source == SourceNil && arg.NotString == "" && w.tableLocal(id) != nil && !w.fieldGuarded(w.tableLocal(id), fieldKey(x.Key)) {
				arg.NotString = "nil (" + arg.Value.Text + ": local " + id.Value + " lists no such field)"
			}
		case *ast.FuncCallExpr:
			// Or tonumber of it (tonumber(ARGV[3])): nil for nil.
			if n := w.tonumberElem(x); n > 0 {
				arg.Indexed = n
			}
			// Or of a parameter a call passes it (see settleElemParams).
			if p, name := w.tonumberParam(x); p != nil && !w.dry {
				elemPars = append(elemPars, upval{arg: i, l: p, name: name, tonumber: true})
			}
			// Or a call of a local function that may return it (local
			// function f() return ARGV[3] end, then f()).
			w.indexedBy(&arg, w.callElems(x))
			arg.Returned = returnedArg(w.callElems(x))
		case *ast.LogicalOpExpr:
			// Or the right of an and/or (c and 'z' or ARGV[3]), which
			// Redis gets on some paths.
			if table, n, _ := w.elemNeed(x); n > 0 && (table == "KEYS") == (w.value(x).Source == SourceKey) {
				arg.Indexed, arg.IndexedOnPaths = n, true
			}
		case *ast.IdentExpr:
			// Or held by a local given it alone (local v = ARGV[3]), not
			// tested here (if v then), in this function.
			if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && l.paramOf == nil && !l.fnAssigned && !w.guarded(l) &&
				!l.val.Derived && !l.val.Stringified && (l.val.Source == SourceArgv || l.val.Source == SourceKey) {
				rest, _ := strings.CutPrefix(l.val.Text, map[Source]string{SourceArgv: "ARGV[", SourceKey: "KEYS["}[l.val.Source])
				if i, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil && i >= 1 && strings.HasSuffix(rest, "]") {
					arg.Indexed = i
				}
			}
			// Or tonumber of it (local n = tonumber(ARGV[3])).
			if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && l.paramOf == nil && !l.fnAssigned && !w.guarded(l) && l.numArg > 0 && l.numElem > 0 {
				arg.Indexed = max(arg.Indexed, l.numElem)
			}
			// Or a call of a local function that may return it (local v
			// = f()).
			if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && l.paramOf == nil && !l.fnAssigned && !w.guarded(l) {
				w.indexedBy(&arg, l.fnElems)
			}
			if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && l.paramOf == nil && !l.fnAssigned {
				arg.Returned = returnedArg(l.fnElems)
			}
			// Or given it on some paths only (local v = 'x', if c then v
			// = ARGV[3] end): the values it may hold, of the table its
			// value tells (Indexed is read as one of it).
			if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && l.paramOf == nil && !l.fnAssigned && !w.guarded(l) {
				prefix := "ARGV["
				if w.value(x).Source == SourceKey {
					prefix = "KEYS["
				}
				before := arg.Indexed
				for _, r := range append([]Return{l.reply}, l.reply.Alts...) {
					rest, ok := strings.CutPrefix(r.Text, prefix)
					if i, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); ok && r.Kind == ReturnString && err == nil && i >= 1 && strings.HasSuffix(rest, "]") {
						arg.Indexed = max(arg.Indexed, i)
					}
				}
				if arg.Indexed > before && len(l.reply.Alts) > 0 {
					arg.IndexedOnPaths = true
				}
			}
		}
		switch x := a.(type) {
		case *ast.NumberExpr:
			s := x.Value
			arg.Literal, arg.Exact, arg.Number = &s, true, true
		case *ast.UnaryMinusOpExpr:
			if n, ok := x.Expr.(*ast.NumberExpr); ok { // -1
				s := "-" + n.Value
				arg.Literal, arg.Exact, arg.Number = &s, true, true
			} else {
				arg.Negation = w.negation(x)
			}
		case *ast.StringExpr:
			arg.Exact = true
		case *ast.IdentExpr:
			// A local that only ever holds one literal (local n = -0) is
			// checked as that literal is.
			if lit, number, ok := w.literalLocal(x); ok {
				arg.Literal, arg.Exact, arg.Number = &lit, true, number
			} else if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && l.paramOf == nil && !l.table && !l.fnAssigned {
				// One that holds a literal on some paths only (local n =
				// '01'; if c then n = 5 end) sends it on those. (Not one a
				// function assigns: a call of it above may have replaced it.)
				arg.Held, arg.HeldBy, arg.HeldMore = slices.Clone(l.lits), x.Value, l.litsMore
			}
			// A local that holds arithmetic that may have a fraction (local
			// n = ttl / 1000), as that arithmetic written in place does.
			if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && l.paramOf == nil && l.reply.Fraction != "" {
				arg.Fraction = x.Value + ", " + l.reply.Fraction
			}
			// A local that holds a negation (local d = -n), on some paths
			// at least, as that negation written in place.
			// (Not one a condition around shows not to be 0: if d ~= 0.)
			if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && l.paramOf == nil && !w.nonzeroLocal(x) {
				for _, r := range append([]Return{l.reply}, l.reply.Alts...) {
					if r.Negation.Shown != "" {
						arg.Negation = r.Negation
						arg.Negation.Local = x.Value
						break
					}
				}
			}
			// A local that holds nil or false (local v, local v = false),
			// always or on some paths (given a value in an if only), and
			// is not tested here: Redis refuses either as an argument.
			// (A parameter once assigned holds what it was given, on
			// those paths: checked as a local, as a copy given another
			// value is; what the calls pass it is no longer followed.)
			if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && (l.paramOf == nil || l.assigned) && !w.guarded(l) {
				isNil := func(r Return) bool { return r.Kind == ReturnNil }
				switch {
				case isNil(l.reply) && l.reply.LuaNil:
					arg.NotString = x.Value + ", which holds nil there"
				case isNil(l.reply):
					arg.NotString = x.Value + ", which holds false there"
				case (l.reply.Kind == ReturnOneOf && slices.ContainsFunc(l.reply.Alts, isNil) || l.reply.Kind == ReturnUnknown && l.reply.MayNil || l.andFalse) && !l.fnAssigned:
					// (Not one a function assigns: a call of it above may
					// have given it its value.)
					arg.MayNil = x.Value
				}
			}
			// A local that holds a comparison (local b = a == c, not v),
			// true or a table, always or on some paths: Redis refuses
			// each. (Not one a function assigns: a call of it above may
			// have given it another value.)
			if l, _ := w.lookup(x.Value); l != nil && l.fn == w.depth && l.paramOf == nil && !l.fnAssigned && arg.NotString == "" {
				isNot := func(r Return) bool { return notStringKind(r) != "" }
				switch {
				case isNot(l.reply):
					arg.NotString = x.Value + ", which holds " + notStringKind(l.reply)
				case (l.reply.Kind == ReturnOneOf || l.reply.Kind == ReturnEither) && slices.ContainsFunc(l.reply.Alts, isNot) && !w.givenHere(l) && !l.valueTested:
					// (Not one an if gives a value on every path: its
					// alternatives keep the value it held before. Nor one
					// the script tested, type(b) == 'boolean', b == true:
					// it may pass it only where it holds a string. A test
					// of its truth, if b then, leaves true, so it counts
					// for nothing here.)
					i := slices.IndexFunc(l.reply.Alts, isNot)
					arg.MayNotString = x.Value + ", a local that holds " + notStringKind(l.reply.Alts[i]) + ", on some paths"
				case w.orNotString(l) != "" && !w.givenHere(l) && !l.valueTested:
					// (local b = a == c or 'y': true when a == c, if b
					// then ... end or not.)
					arg.MayNotString = x.Value + ", a local that holds " + l.orNotString + ", on some paths"
				}
			}
		case *ast.NilExpr:
			arg.NotString = "nil"
		case *ast.TrueExpr:
			arg.NotString = "true"
		case *ast.FalseExpr:
			arg.NotString = "false"
		case *ast.ArithmeticOpExpr:
			if !w.wholeDivision(x) {
				arg.Fraction = fraction(x)
			}
			arg.Negation = w.negation(x)
		case *ast.RelationalOpExpr, *ast.UnaryNotOpExpr:
			arg.NotString = "a comparison, true or false"
		case *ast.TableExpr:
			arg.NotString = "a table"
		case *ast.FunctionExpr:
			arg.NotString = "a function"
		case *ast.FuncCallExpr:
			// A call of a local function each of whose returns (and an
			// end without one) gives nil or false, as the last walk found.
			// (As the last argument, one that may give no value at all,
			// an end without a return, passes nothing: DEL k, f() is DEL
			// k.)
			last := i == len(e.Args)-2 && !x.AdjustRet
			if l := w.fixedFunc(x.Func); l != nil && x.Receiver == nil {
				if v, ok := w.returned[l.fnExpr]; ok && v == (Value{Source: SourceNil}) {
					text := exprText(x)
					if x.AdjustRet {
						text = "(" + text + ")"
					}
					switch {
					case !last || givesValues(l.fnExpr.Stmts):
						arg.NotString = text + ", a call of a local function that returns nil or false alone"
					case !returnsValue(l.fnExpr.Stmts):
						arg.Nothing = true
					}
				}
			}
		}
		if g, ok := a.(*ast.FuncCallExpr); ok && g.Receiver == nil && arg.NotString == "" && !arg.Nothing {
			// A local function whose returns pass Redis a value that is
			// no string or number: the first value, or every value when
			// the call is last (return 'x', {}).
			if l := w.fixedFunc(g.Func); l != nil {
				what, every, some := badReturns(l.fnExpr, i == len(e.Args)-2 && !g.AdjustRet, w.errorLocal[l.fnExpr])
				text := exprText(g)
				if g.AdjustRet {
					text = "(" + text + ")"
				}
				switch {
				case every:
					arg.NotString = text + ", a call of a local function every return of which passes " + what
				case some && what != "nil" && what != "false":
					// (Nil or false on some paths is left to the script, as
					// for a local given such a call.)
					arg.MayNotString = text + ", a call of a local function some returns of which pass " + what
				}
			}
		}
		if i == len(e.Args)-2 && expands(a) {
			arg.Expands = true
			if g, ok := a.(*ast.FuncCallExpr); ok && g.Receiver == nil {
				if l := w.fixedFunc(g.Func); l != nil {
					arg.Gives = returnCount(l.fnExpr, w.errorLocal[l.fnExpr])
					if n := returnCounts(l.fnExpr, w.errorLocal[l.fnExpr]); len(n) > 1 {
						arg.GivesOnPaths = n
					}
					arg.OnPaths = w.returnPaths(l.fnExpr, arg.Pos)
				}
			}
			if g, ok := a.(*ast.FuncCallExpr); ok {
				name, lib := w.libFunc(g)
				arg.Gsub = lib && name == "string.gsub" || g.Receiver != nil && g.Method == "gsub"
			}
			if u, ok := a.(*ast.FuncCallExpr); ok && len(u.Args) >= 1 && len(u.Args) <= 3 && u.Receiver == nil {
				f, isF := u.Func.(*ast.IdentExpr)
				t, isT := u.Args[0].(*ast.IdentExpr)
				// unpack(t, i, j) gives t[i] to t[j]: bounds other than
				// integer literals leave the count unknown.
				from, to, bounds := 0, 0, true
				if len(u.Args) > 1 {
					from, bounds = intLiteral(u.Args[1], 1)
				}
				if len(u.Args) > 2 && bounds {
					to, bounds = intLiteral(u.Args[2], 1)
				}
				if isF && isT && bounds && f.Value == "unpack" && !w.isLocal("unpack") && (t.Value == "KEYS" || t.Value == "ARGV") && !w.isLocal(t.Value) {
					arg.Unpacks, arg.UnpackFrom, arg.UnpackTo = t.Value, from, to
				}
			}
		}
		c.Args = append(c.Args, arg)
	}
	w.f.Calls = append(w.f.Calls, c)
	if !w.dry {
		if w.calls == nil {
			w.calls = map[*ast.FuncCallExpr]int{}
		}
		w.calls[e] = len(w.f.Calls) - 1
		if n := len(w.fns); n > 0 {
			if w.callIn == nil {
				w.callIn = map[int]*ast.FunctionExpr{}
			}
			w.callIn[len(w.f.Calls)-1] = w.fns[n-1]
		}
	}
	for _, u := range ups {
		u.call = len(w.f.Calls) - 1
		w.upvals = append(w.upvals, u)
	}
	for _, u := range pars {
		u.call = len(w.f.Calls) - 1
		w.params = append(w.params, u)
	}
	for _, u := range elemPars {
		u.call = len(w.f.Calls) - 1
		w.elemParams = append(w.elemParams, u)
	}
}

// returnCount is n when every path of fn returns n values, n >= 1, none
// of them a call or ... that gives any number (see Arg.Gives); 0 when not
// known: a path may end without a return, or returns give other counts.
func returnCount(fn *ast.FunctionExpr, errorLocal bool) int {
	if n := returnCounts(fn, errorLocal); len(n) == 1 && n[0] >= 1 {
		return n[0]
	}
	return 0
}

// badReturns reads the returns of fn (not those of the functions written
// in it) for a value Redis refuses as a command argument, written so (nil,
// true, false, a table, a function, a comparison): the first value of
// each, or all its values when the call is last (all). what names the
// first found; every is set when each path passes one (an end without a
// return passes nil as a first value, nothing as the last argument),
// some when one does.
func badReturns(fn *ast.FunctionExpr, all, errorLocal bool) (what string, every, some bool) {
	kind := func(e ast.Expr) string {
		switch e.(type) {
		case *ast.NilExpr:
			return "nil"
		case *ast.TrueExpr:
			return "true"
		case *ast.FalseExpr:
			return "false"
		case *ast.TableExpr:
			return "a table"
		case *ast.FunctionExpr:
			return "a function"
		case *ast.RelationalOpExpr, *ast.UnaryNotOpExpr:
			return "a comparison, true or false"
		}
		return ""
	}
	good, other := 0, ""
	reachableReturns(fn.Stmts, errorLocal, func(r *ast.ReturnStmt) {
		exprs := r.Exprs
		if !all && len(exprs) > 1 {
			exprs = exprs[:1]
		}
		bad := ""
		for _, e := range exprs {
			if bad = kind(e); bad != "" {
				break
			}
		}
		if !all && len(exprs) == 0 {
			bad = "nil"
		}
		if bad == "" {
			good++
			return
		}
		if what == "" {
			what = bad
		}
		if other == "" && bad != "nil" && bad != "false" {
			other = bad
		}
	})
	if !ends(fn.Stmts) && all {
		good++ // (nothing passed: a count the arity checks)
	}
	if !ends(fn.Stmts) && !all {
		if what == "" {
			what = "nil"
		}
	}
	some = what != ""
	if every = some && good == 0; !every && other != "" {
		what = other // (the kind a path is warned of)
	}
	return what, every, some
}

// returnPaths are the values each return of fn gives, as arguments at pos
// (a literal as written, Exact; anything else unknown), and none for a
// path that may end without a return (see Arg.OnPaths). Nil when a
// return's last value is a call or ..., which gives any number.
func (w *walker) returnPaths(fn *ast.FunctionExpr, pos Pos) [][]Arg {
	var paths [][]Arg
	if !ends(fn.Stmts) {
		paths = append(paths, []Arg{})
	}
	ok := true
	reachableReturns(fn.Stmts, w.errorLocal[fn], func(r *ast.ReturnStmt) {
		if k := len(r.Exprs); k > 0 && expands(r.Exprs[k-1]) {
			ok = false
		}
		vals := make([]Arg, 0, len(r.Exprs))
		for _, e := range r.Exprs {
			a := Arg{Pos: pos}
			switch x := e.(type) {
			case *ast.StringExpr:
				v := x.Value
				a.Literal, a.Exact = &v, true
			case *ast.NumberExpr:
				v := x.Value
				a.Literal, a.Exact, a.Number = &v, true, true
			}
			vals = append(vals, a)
		}
		paths = append(paths, vals)
	})
	if !ok {
		return nil
	}
	return paths
}

// returnCounts are the counts of values fn's paths return, sorted and
// distinct: a path that may end without a return gives none. Nil when a
// return's last value is a call or ..., which gives any number.
func returnCounts(fn *ast.FunctionExpr, errorLocal bool) []int {
	var counts []int
	if !ends(fn.Stmts) {
		counts = append(counts, 0)
	}
	ok := true
	reachableReturns(fn.Stmts, errorLocal, func(r *ast.ReturnStmt) {
		k := len(r.Exprs)
		if k > 0 && expands(r.Exprs[k-1]) {
			ok = false
		}
		counts = append(counts, k)
	})
	if !ok {
		return nil
	}
	slices.Sort(counts)
	return slices.Compact(counts)
}

// reachableReturns calls visit with each return of list (not of a function
// defined in it) that a run may reach: not one after a statement that ends
// every path (a return, error(...), an if whose every branch does, a loop
// no break leaves), nor one in a branch or a loop whose condition never
// holds (if false, while nil), nor in the else of if true. With
// errorLocal, error names a local, whose call may return: it ends no path.
func reachableReturns(list []ast.Stmt, errorLocal bool, visit func(*ast.ReturnStmt)) {
	for i, st := range list {
		switch x := st.(type) {
		case *ast.ReturnStmt:
			visit(x)
		case *ast.IfStmt:
			if !alwaysFalse(x.Condition) {
				reachableReturns(x.Then, errorLocal, visit)
			}
			if !alwaysTrue(x.Condition) {
				reachableReturns(x.Else, errorLocal, visit)
			}
		case *ast.WhileStmt:
			if !alwaysFalse(x.Condition) {
				reachableReturns(x.Stmts, errorLocal, visit)
			}
		case *ast.DoBlockStmt:
			reachableReturns(x.Stmts, errorLocal, visit)
		case *ast.RepeatStmt:
			reachableReturns(x.Stmts, errorLocal, visit)
		case *ast.NumberForStmt:
			reachableReturns(x.Stmts, errorLocal, visit)
		case *ast.GenericForStmt:
			reachableReturns(x.Stmts, errorLocal, visit)
		}
		if endsWith(list[:i+1], errorLocal) {
			return
		}
	}
}

// ends reports whether no path of list reaches its end: it ends in a return
// or a call of error, an if whose every branch (an else among them) does,
// or a loop no break leaves (while true do ... end, repeat ... until
// false).
func ends(list []ast.Stmt) bool { return endsWith(list, false) }

// endsWith is ends, where with errorLocal a call of error(...) is a local's
// (local function error() end), which may return: it ends no path.
func endsWith(list []ast.Stmt, errorLocal bool) bool {
	if exits(list) {
		if _, call := list[len(list)-1].(*ast.FuncCallStmt); !call || !errorLocal {
			return true
		}
	}
	if len(list) == 0 {
		return false
	}
	switch s := list[len(list)-1].(type) {
	case *ast.IfStmt:
		return len(s.Else) > 0 && endsWith(s.Then, errorLocal) && endsWith(s.Else, errorLocal)
	case *ast.DoBlockStmt:
		return endsWith(s.Stmts, errorLocal)
	case *ast.WhileStmt:
		return alwaysTrue(s.Condition) && !breaks(s.Stmts)
	case *ast.RepeatStmt:
		return alwaysFalse(s.Condition) && !breaks(s.Stmts)
	}
	return false
}

// declaresError reports whether the function f declares a local named
// error, a parameter among them, which its calls of error(...) may call.
func declaresError(f *ast.FunctionExpr) bool {
	found := f.ParList != nil && slices.Contains(f.ParList.Names, "error")
	inspectShallow(f.Stmts, func(s ast.Stmt) {
		switch x := s.(type) {
		case *ast.LocalAssignStmt:
			found = found || slices.Contains(x.Names, "error")
		case *ast.NumberForStmt:
			found = found || x.Name == "error"
		case *ast.GenericForStmt:
			found = found || slices.Contains(x.Names, "error")
		}
	}, func(ast.Expr) {})
	return found
}

// alwaysTrue reports whether the condition e holds whenever it is read:
// true, and also a number or a string (while 1 do), which Lua takes as
// true, 0 and the empty string too.
func alwaysTrue(e ast.Expr) bool {
	switch e.(type) {
	case *ast.TrueExpr, *ast.NumberExpr, *ast.StringExpr:
		return true
	}
	return false
}

// alwaysFalse reports whether the condition e never holds: false or nil
// (repeat ... until nil).
func alwaysFalse(e ast.Expr) bool {
	switch e.(type) {
	case *ast.FalseExpr, *ast.NilExpr:
		return true
	}
	return false
}

// returnedArg is n when elems hold ARGV[n] and no other element (see
// Arg.Returned), 0 otherwise.
func returnedArg(elems []elemPass) int {
	n := 0
	for _, p := range elems {
		if p.Table != "ARGV" || n != 0 && p.N != n {
			return 0
		}
		n = p.N
	}
	return n
}

// indexedBy sets a's Indexed to the largest of elems of the table its
// value is of, on some paths: the function may return other values too.
func (w *walker) indexedBy(a *Arg, elems []elemPass) {
	for _, p := range elems {
		if (p.Table == "KEYS") == (a.Value.Source == SourceKey) && p.N > a.Indexed {
			a.Indexed, a.IndexedOnPaths = p.N, true
		}
	}
}

// elemNeed is the table (KEYS or ARGV) and the count of it under which e,
// KEYS[n] or ARGV[n] written in place, or an and/or of them, gives nil on
// some path (c and 'z' or ARGV[3]: 3; ARGV[2] or ARGV[3]: 2; ARGV[3] or
// 'z': none), n 0 for none. bare is set when e is the element alone,
// which is nil or false exactly under that count.
func (w *walker) elemNeed(e ast.Expr) (table string, n int, bare bool) {
	switch x := e.(type) {
	case *ast.AttrGetExpr:
		id, ok := x.Object.(*ast.IdentExpr)
		num, ok2 := x.Key.(*ast.NumberExpr)
		if ok && ok2 && (id.Value == "KEYS" || id.Value == "ARGV") && !w.isLocal(id.Value) {
			if i, err := strconv.Atoi(num.Value); err == nil && i >= 1 {
				return id.Value, i, true
			}
		}
	case *ast.LogicalOpExpr:
		lt, l, lbare := w.elemNeed(x.Lhs)
		rt, r, _ := w.elemNeed(x.Rhs)
		if l > 0 && r > 0 && lt != rt {
			return "", 0, false
		}
		switch x.Operator {
		case "and":
			// Nil where the left is, or else where the right is; a left
			// that is nil or false ends there.
			switch x.Lhs.(type) {
			case *ast.NilExpr, *ast.FalseExpr:
				return "", 0, false
			}
			if r == 0 {
				return lt, l, false
			}
			return rt, max(l, r), false
		case "or":
			// Nil where the left is nil or false and the right is nil: a
			// left never false gives itself.
			switch x.Lhs.(type) {
			case *ast.StringExpr, *ast.NumberExpr, *ast.TrueExpr, *ast.TableExpr, *ast.FunctionExpr:
				return "", 0, false
			}
			if r == 0 {
				return "", 0, false
			}
			if lbare {
				return rt, min(l, r), false
			}
			// A left that reads the element may test it (ARGV[3] == nil
			// and 'z' or ARGV[3], not ARGV[3] and ...): the right may be
			// reached only when it is there.
			if w.readsElem(x.Lhs, rt, r) {
				return "", 0, false
			}
			return rt, r, false
		}
	}
	return "", 0, false
}

// readsElem reports whether e reads table[n] (KEYS or ARGV) written in
// place anywhere in it.
func (w *walker) readsElem(e ast.Expr, table string, n int) bool {
	found := false
	inspect([]ast.Stmt{&ast.ReturnStmt{Exprs: []ast.Expr{e}}}, func(ast.Stmt) {}, func(e ast.Expr) {
		if t, i, bare := w.elemNeed(e); bare && t == table && i == n {
			found = true
		}
	})
	return found
}

// spoil records that the table local l may not hold what its constructor
// lists.
func (w *walker) spoil(l *local) {
	if w.spoiled == nil {
		w.spoiled = map[string]bool{}
	}
	w.spoiled[l.decl] = true
}

// listTable reports whether e names KEYS or ARGV.
func (w *walker) listTable(e ast.Expr) bool {
	id, ok := e.(*ast.IdentExpr)
	return ok && (id.Value == "KEYS" || id.Value == "ARGV") && !w.isLocal(id.Value)
}

// listPassed records KEYS or ARGV (id) passed to a library function that
// reads it, or changes it where tableWrite sees the change: a use of the
// whole table that does not hold it out of the checker's sight.
func (w *walker) listPassed(id *ast.IdentExpr) {
	pos, _ := w.identPos(id.Line(), id.Value)
	w.addUse(id.Value, Use{Pos: pos, Bare: true})
	w.changed(id.Value)
}

// tableLocal is the table local e names, if any.
func (w *walker) tableLocal(e ast.Expr) *local {
	if id, ok := e.(*ast.IdentExpr); ok {
		if l, _ := w.lookup(id.Value); l != nil && l.table {
			return l
		}
	}
	return nil
}

// tableRead reports whether e names a table local read where that keeps
// what it holds (t.k, ipairs(t), #t): the caller then does not walk e,
// which would spoil it.
func (w *walker) tableRead(e ast.Expr) bool {
	if id, ok := e.(*ast.IdentExpr); ok && (id.Value == "KEYS" || id.Value == "ARGV") && !w.isLocal(id.Value) {
		pos, _ := w.identPos(id.Line(), id.Value)
		w.addUse(id.Value, Use{Pos: pos, Bare: true})
		return true
	}
	l := w.tableLocal(e)
	if l != nil {
		l.nilv.tested = true
	}
	return l != nil
}

// elemsOf is what a field of the table local e holds, when the checker
// can tell: the values of its constructor, for a local neither spoiled nor
// assigned (in the last walk).
func (w *walker) elemsOf(e ast.Expr) (Value, bool) {
	l := w.tableLocal(e)
	if l == nil || w.kept == nil || !w.kept[l.decl] {
		return Value{}, false
	}
	v := l.elems
	v.Derived = true
	return v, true
}

// tableElems merges the values a table constructor lists.
func (w *walker) tableElems(t *ast.TableExpr) Value {
	v := Value{Source: sourcePending}
	for _, f := range t.Fields {
		v = mergeValue(v, w.value(f.Value))
	}
	if v.Source == sourcePending {
		return Value{Source: SourceNil}
	}
	return v
}

// tableFields are the values a table constructor gives at a literal index
// or name, by fieldKey; a key listed twice merges both values. The
// positional values stop at a call or ... whose values are expanded.
func (w *walker) tableFields(t *ast.TableExpr) map[string]Value {
	out := map[string]Value{}
	add := func(k string, v Value) {
		if old, ok := out[k]; ok {
			v = mergeValue(old, v)
		}
		out[k] = v
	}
	n := 0
	for i, f := range t.Fields {
		if f.Key != nil {
			if k := fieldKey(f.Key); k != "" {
				add(k, w.value(f.Value))
			}
			continue
		}
		n++
		// (A call or ... in parentheses gives one value, as allFieldsListed
		// reads it.)
		if i == len(t.Fields)-1 && expands(f.Value) {
			return out
		}
		add(strconv.Itoa(n), w.value(f.Value))
	}
	return out
}

// allFieldsListed reports whether every field of t is at a literal index
// or name, with no call or ... last that gives any number of values.
func allFieldsListed(t *ast.TableExpr) bool {
	for i, f := range t.Fields {
		if f.Key != nil && fieldKey(f.Key) == "" {
			return false
		}
		if f.Key == nil && i == len(t.Fields)-1 && expands(f.Value) {
			return false
		}
	}
	return true
}

// fieldKey is a literal table key as a string: an integer index ("1") or
// a string; "" for any other.
func fieldKey(e ast.Expr) string {
	switch k := e.(type) {
	case *ast.NumberExpr:
		if i, ok := luaIndex(k.Value); ok {
			return strconv.Itoa(i)
		}
	case *ast.StringExpr:
		if _, err := strconv.Atoi(k.Value); err != nil {
			return k.Value // t['1'] is no t[1]
		}
		return "'" + k.Value
	}
	return ""
}

// keptTables are the table locals of this walk that were not spoiled.
func (w *walker) keptTables() map[string]bool {
	out := map[string]bool{}
	for _, l := range w.declared {
		if l.table && !w.spoiled[l.decl] {
			out[l.decl] = true
		}
	}
	return out
}

// result records v as a value the function being walked returns.
func (w *walker) result(v Value) {
	if w.results == nil {
		w.results = map[*ast.FunctionExpr]Value{}
	}
	fn := w.fns[len(w.fns)-1]
	if old, ok := w.results[fn]; ok {
		v = mergeValue(old, v)
	}
	w.results[fn] = v
}

// localFunc is the local whose function e names, if e is the name of a
// local function.
func (w *walker) localFunc(e ast.Expr) *local {
	if id, ok := e.(*ast.IdentExpr); ok {
		if l, _ := w.lookup(id.Value); l != nil && l.fnExpr != nil {
			return l
		}
	}
	return nil
}

// fixedFunc is localFunc's local when the script assigns its name nowhere
// (f = function ... end): a call of it runs that function. One assigned
// after a call of it is written (in a function run later) may run the
// other, whose returns say nothing of what the first one's give.
func (w *walker) fixedFunc(e ast.Expr) *local {
	l := w.localFunc(e)
	if l == nil || w.reassigned[e.(*ast.IdentExpr).Value] {
		return nil
	}
	return l
}

// passed is the value a call with args gives its parameter i (from 0): nil
// past the arguments; from an argument that gives any number of values
// (unpack(KEYS), f()), what the walker knows of them: unpack(KEYS) and
// unpack(ARGV) give their table's values, a call its first value first,
// anything else SourceUnknown.
func (w *walker) passed(args []ast.Expr, i int) Value {
	last := len(args) - 1
	if last >= 0 && i >= last && expands(args[last]) {
		v := w.value(args[last])
		if i == last || strings.HasPrefix(v.Text, "unpack(") && (v.Source == SourceKey || v.Source == SourceArgv) {
			return v
		}
		return Value{Source: SourceUnknown}
	}
	if i < len(args) {
		return w.value(args[i])
	}
	return Value{Source: SourceNil}
}

// allValues is what each local of the walk was assigned anywhere, by decl.
func (w *walker) allValues() map[string]Value {
	out := make(map[string]Value, len(w.declared))
	for _, l := range w.declared {
		out[l.decl] = l.all
	}
	return out
}

// resolvedParams is what the parameters of each local function are given,
// merged over its calls, for the next walk (see Parse): a function used as
// a value, or never called by name, is left out, and its parameters are
// unknown.
func (w *walker) resolvedParams() map[*ast.FunctionExpr][]Value {
	out := map[*ast.FunctionExpr][]Value{}
	for fn, params := range w.args {
		if !w.called[fn] || w.escaped[fn] {
			continue
		}
		vals := make([]Value, len(params))
		for i, vs := range params {
			if len(vs) == 0 {
				vals[i] = Value{Source: SourceUnknown}
				continue
			}
			vals[i] = vs[0]
			for _, v := range vs[1:] {
				vals[i] = mergeValue(vals[i], v)
			}
			if vals[i].Source == sourcePending {
				// Passed only values of its own (a recursion entered from
				// nowhere): nothing is known.
				vals[i] = Value{Source: SourceUnknown}
			} else if vals[i] != vs[0] && vals[i].Source != SourceLiteral && fn.ParList != nil && i < len(fn.ParList.Names) {
				// Several values: messages name the parameter.
				vals[i].Text = fn.ParList.Names[i]
			}
		}
		out[fn] = vals
	}
	return out
}

// settleUpvals gives an argument that is a local of an enclosing function
// the values that local is assigned after the function is defined too: the
// function may run after any of them (local k = KEYS[1]; local function f()
// redis.call('DEL', k) end; k = ARGV[1]; f()). It runs once the whole chunk
// is walked, when each local holds what assign gathered of all its values.
func (w *walker) settleUpvals() {
	for _, u := range w.upvals {
		mergeArg(&w.f.Calls[u.call].Args[u.arg], u.l.all, u.name)
	}
}

// settleParams gives an argument that is a parameter of a local function
// the values the calls of that function pass it (local function del(k)
// redis.call('DEL', k) end; del(ARGV[1])). It runs once the whole chunk is
// walked; a parameter the function assigns is left alone.
func (w *walker) settleParams() {
	for _, u := range w.params {
		vals := w.args[u.l.paramOf]
		if u.l.param > len(vals) {
			continue
		}
		for _, v := range vals[u.l.param-1] {
			mergeArg(&w.f.Calls[u.call].Args[u.arg], v, u.name)
		}
	}
}

// elemPass is KEYS[n] or ARGV[n] (Table) written in place, or an and/or
// of them, that a call of a local function passes a parameter, nil on
// some path when the list is shorter than N (see walker.elemNeed).
type elemPass struct {
	Table string
	N     int
}

// replyPass is a command's reply a call of a local function passes a
// parameter: the call written in place, or what a local passed holds.
type replyPass struct {
	call *ast.FuncCallExpr
	ns   nilSource
	// at is where the call of the function is written (its name).
	at Pos
	// args is what that call passes each parameter (see argPass): nil
	// when not known (a reply passed on by another function).
	args *[]argPass
}

// replyFwd is a parameter (fi, from 0) of from that a call of to,
// written at at, passes on as its parameter ti.
type replyFwd struct {
	from, to *ast.FunctionExpr
	fi, ti   int
	at       Pos
}

// settleReplyFwds gives a parameter the replies passed the parameter a
// call passes on to it (local function f(v) g(v) end; f(redis.call('GET',
// k))), through any number of such calls. It runs once the whole chunk
// is walked, before settleParamOps reads them.
func (w *walker) settleReplyFwds() {
	// Each reply a parameter is given is passed on once, along the
	// calls that pass that parameter on (a work list, with a set of what
	// each parameter holds): passes over every call until nothing grows
	// took a pass per function of a chain, each over all its replies.
	type param struct {
		fn *ast.FunctionExpr
		i  int
	}
	type item struct {
		p  param
		rp replyPass
	}
	on := map[param][]replyFwd{}
	var froms []param // (in the order written: the replies' order is kept)
	for _, fw := range w.replyFwds {
		p := param{fw.from, fw.fi}
		if on[p] == nil {
			froms = append(froms, p)
		}
		on[p] = append(on[p], fw)
	}
	held := map[param]map[replyPass]bool{}
	holds := func(p param) map[replyPass]bool {
		if held[p] == nil {
			held[p] = map[replyPass]bool{}
			for _, rp := range w.replyArgs[p.fn][p.i] {
				held[p][rp] = true
			}
		}
		return held[p]
	}
	var work []item
	for _, p := range froms {
		for _, rp := range w.replyArgs[p.fn][p.i] {
			work = append(work, item{p, rp})
		}
	}
	for len(work) > 0 {
		it := work[0]
		work = work[1:]
		for _, fw := range on[it.p] {
			rp, to := it.rp, param{fw.to, fw.ti}
			rp.at, rp.args = fw.at, nil // (another function's parameters)
			if h := holds(to); !h[rp] {
				h[rp] = true
				if w.replyArgs[fw.to] == nil {
					w.replyArgs[fw.to] = map[int][]replyPass{}
				}
				w.replyArgs[fw.to][fw.ti] = append(w.replyArgs[fw.to][fw.ti], rp)
				work = append(work, item{to, rp})
			}
		}
	}
	for range len(w.replyFwds) + 1 {
		grew := false
		for _, fw := range w.replyFwds {
			passes := w.replyArgs[fw.from][fw.fi]
			mixed := w.fwdMixed[fw.from][fw.fi] || w.escaped[fw.from] || len(passes) != len(w.args[fw.from][fw.fi]) ||
				slices.ContainsFunc(passes, func(rp replyPass) bool { return rp.ns.some })
			if !mixed || w.fwdMixed[fw.to][fw.ti] {
				continue
			}
			if w.fwdMixed == nil {
				w.fwdMixed = map[*ast.FunctionExpr]map[int]bool{}
			}
			if w.fwdMixed[fw.to] == nil {
				w.fwdMixed[fw.to] = map[int]bool{}
			}
			w.fwdMixed[fw.to][fw.ti] = true
			grew = true
		}
		if !grew {
			return
		}
	}
}

// paramOp is an operation (by index in File.Operations) on the parameter
// l, named name there.
type paramOp struct {
	at   int
	l    *local
	name string
	// conds are the tests of the function's other parameters that hold
	// where the operation is (see walker.pconds).
	conds []paramCond
	// tonumber is set when the operand is tonumber of the parameter, in
	// place or held by a local (named local then): nil for the false of
	// a nil reply.
	tonumber bool
	local    string
}

// passedReply is the operand a parameter named name is when a call passes
// it the reply rp.
func (w *walker) passedReply(rp replyPass, name string) (Operand, bool) {
	call, command := rp.ns.call, rp.ns.command
	if rp.call != nil {
		i, ok := w.calls[rp.call]
		if !ok || i >= len(w.f.Calls) {
			return Operand{}, false
		}
		call, command = i, w.f.Calls[i].Command
	}
	if command == "" {
		return Operand{}, false
	}
	return Operand{Type: OperandReply, Text: name + " (the reply of " + strings.ToUpper(command) + " a call passes it)", Call: call}, true
}

// paramCmp is a comparison of the parameter l, named name there, left or
// right of c.
type paramCmp struct {
	c    Compare
	left bool
	l    *local
	name string
}

// settleParamOps records each operation on an untested parameter of a local
// function as one on each command's reply a call of the function passes it
// (local function f(v) redis.call('SET', k, v) end; f(redis.call('GET',
// k2))): false where the command replies nil, a table for a list. The
// others are dropped.
func (w *walker) settleParamOps() {
	// A comparison of a parameter every call passes a reply is one of
	// each reply (v == nil is always false for GET's). (Not when a call
	// passes another value, which the comparison may be for, also through
	// a local that holds the reply on some paths only, or when the
	// function escaped: a call out of sight, pcall(f, nil), may pass nil.)
	for _, p := range w.paramCmps {
		passes := w.replyArgs[p.l.paramOf][p.l.param-1]
		if len(passes) == 0 || w.escaped[p.l.paramOf] || w.fwdMixed[p.l.paramOf][p.l.param-1] || len(passes) != len(w.args[p.l.paramOf][p.l.param-1]) || slices.ContainsFunc(passes, func(rp replyPass) bool { return rp.ns.some }) {
			continue
		}
		for _, rp := range passes {
			op, ok := w.passedReply(rp, p.name)
			if !ok {
				continue
			}
			c := p.c
			if p.left {
				c.Left = op
			} else {
				c.Right = op
			}
			w.f.Compares = append(w.f.Compares, c)
		}
	}
	if len(w.paramOps) == 0 {
		return
	}
	drop := map[int]bool{}
	var more []Operation
	for _, p := range w.paramOps {
		drop[p.at] = true
		for _, rp := range w.replyArgs[p.l.paramOf][p.l.param-1] {
			op, ok := w.passedReply(rp, p.name)
			if !ok || rp.args != nil && !w.escaped[p.l.paramOf] && !meets(*rp.args, p.conds) {
				continue // (or a call that never reaches the operation; one out of sight may)
			}
			o := w.f.Operations[p.at]
			o.Operand, o.Tested = op, rp.ns.tested
			if p.tonumber {
				o.Tonumber = true
				o.Operand.Text = "tonumber(" + op.Text + ")"
				if p.local != "" {
					o.Operand.Text = p.local + " (tonumber of " + op.Text + ")"
				}
			}
			// (Not when another call of the function, written before the
			// command, ran its commands first: f('a') then
			// f(redis.call('GET', k)).)
			o.Later = w.fnCallSpan[p.l.paramOf]
			got := w.f.Calls[op.Call].Pos
			for _, at := range w.fnCalls[p.l.paramOf] {
				if at != rp.at && (at.Line < got.Line || at.Line == got.Line && at.Col < got.Col) {
					o.Later = [2]int{}
				}
			}
			more = append(more, o)
		}
	}
	ops := w.f.Operations[:0:0]
	for i, o := range w.f.Operations {
		if !drop[i] {
			ops = append(ops, o)
		}
	}
	w.f.Operations = append(ops, more...)
}

// settleElemParams gives an argument that is an untested parameter of a
// local function the element a call of the function passes it in place
// as Arg.Indexed (local function f(v) redis.call('SET', k, v) end;
// f(ARGV[3])): nil there when the list is short. It runs after
// settleParams, which gives the argument the values passed.
func (w *walker) settleElemParams() {
	for _, u := range w.elemParams {
		a := &w.f.Calls[u.call].Args[u.arg]
		if u.tonumber {
			// tonumber of ARGV[n]: nil for nil, as tonumber(ARGV[n]).
			for _, p := range w.elemArgs[u.l.paramOf][u.l.param-1] {
				if p.Table == "ARGV" && p.N > a.Indexed {
					a.Indexed, a.IndexedOnPaths = p.N, true
				}
			}
			continue
		}
		// Or true, a comparison, a table (f(a == b), f({})): refused too.
		// (Not one the function tested first: if type(v) == 'table'. A
		// test of its truth, if v then, leaves true or a table.)
		if bad := w.badPassed(u.l.paramOf, u.l.param-1, u.conds); bad != "" && !u.tested && a.NotString == "" && a.MayNotString == "" {
			a.MayNotString = u.name + ", a parameter that a call of its function passes " + bad
			if u.via {
				a.MayNotString = u.name + ", a local given the parameter " + u.l.name() + ", which a call of its function passes " + bad
			}
		}
		if u.guarded {
			// (Or not nil only, if v ~= nil: false a call passes it is
			// refused there.)
			if u.nilOnly && w.falsePassed(u.l.paramOf, u.l.param-1, u.conds) && a.NotString == "" && a.MayNotString == "" && a.MayNil == "" {
				a.NilParam = u.name
				if u.via {
					a.NilParamOf = u.l.name()
				}
			}
			continue // neither nil nor false, nor a missing element, here
		}
		// A call passes it nil or false (f(nil), f()): Redis refuses
		// either.
		if w.nilPassed(u.l.paramOf, u.l.param-1, u.conds) && a.NotString == "" && a.MayNil == "" && a.NilParam == "" {
			a.NilParam = u.name
			if u.via {
				a.NilParamOf = u.l.name()
			}
		}
		if u.via {
			continue // (the elements a call passes: the parameter's own checks)
		}
		if a.Value.Source != SourceKey && a.Value.Source != SourceArgv {
			continue
		}
		for _, p := range w.elemArgs[u.l.paramOf][u.l.param-1] {
			if (p.Table == "KEYS") == (a.Value.Source == SourceKey) && p.N > a.Indexed {
				// (Another call may pass the function another value.)
				a.Indexed, a.IndexedOnPaths = p.N, true
			}
		}
	}
}

// mergeArg gives argument a also the value v, which the local name may
// hold there, as assign merges values.
func mergeArg(a *Arg, v Value, name string) {
	if v.Text == "" {
		v.Text = name
	}
	old := a.Value
	ext := old.Extended || v.Extended
	switch {
	case old == v:
		return
	case old.Source != v.Source && notKey(v.Source):
		if v.Source != SourceLiteral {
			v.Text = name // a literal is shown as it is
		}
		v.Derived = true
	case old.Source != v.Source && notKey(old.Source):
		v = old
		v.Derived = true
	case old.Source != v.Source:
		v = Value{Source: SourceUnknown, Text: name}
	case old.Text != v.Text:
		v = Value{Source: v.Source, Text: name, Derived: true}
	}
	v.Extended = v.Source == SourceKey && ext
	a.Value = v
}

// fractionOf is fraction for an expression that may be an operation.
func fractionOf(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.ArithmeticOpExpr:
		return fraction(x)
	case *ast.UnaryMinusOpExpr:
		return fractionOf(x.Expr)
	}
	return ""
}

// fractionIn is fractionOf, or for a local the fraction of a value it may
// hold ("n / 2, assigned to m at line 4").
func (w *walker) fractionIn(e ast.Expr) string {
	x, ok := e.(*ast.IdentExpr)
	if !ok {
		return fractionOf(e)
	}
	l, _ := w.lookup(x.Value)
	if l == nil {
		return ""
	}
	for _, r := range append([]Return{l.reply}, l.reply.Alts...) {
		if r.Fraction != "" {
			return fmt.Sprintf("%s (%s, assigned at line %d)", x.Value, r.Fraction, r.Pos.Line)
		}
	}
	return ""
}

// fraction says what an arithmetic expression is when it may give a
// number with a fraction: a division, a product with a literal that has one
// (x * 1.5), or a sum or product with either; "" otherwise.
func fraction(e *ast.ArithmeticOpExpr) string {
	switch e.Operator {
	case "/":
		return "a division"
	case "*":
		if n := fractionLiteral(e); n != "" {
			return "a product with " + n
		}
		for _, o := range []ast.Expr{e.Lhs, e.Rhs} {
			if f := fractionOf(o); f != "" {
				return "a product with " + f
			}
		}
	case "+", "-":
		// ARGV[1] + 0.5 has a fraction as surely as ARGV[1] * 1.5.
		if n := fractionLiteral(e); n != "" {
			return "a sum with " + n
		}
		for _, o := range []ast.Expr{e.Lhs, e.Rhs} {
			if f := fractionOf(o); f != "" {
				return "a sum with " + f
			}
		}
	}
	return ""
}

// negation is what e is when it negates a value the checker cannot read
// (Negation): -n, but not of a number literal, of a string or a local that
// only ever holds a nonzero number, of the variable of a numeric for that
// counts away from 0 from a nonzero number (for i = 1, n) or toward a
// nonzero limit from its side (for i = #t, 1, -1), nor of another
// negation (- -n is n); a
// product of such a negation, or of a negative number (n * -1, n * -k with
// local k = 5), with a value that is not negative too (-n * -1 is n) nor,
// for a negative number, a number (2 * -1 is -2). The zero Negation
// otherwise.
func (w *walker) negation(e ast.Expr) Negation {
	// -n, and n * -1, of a local known not to be 0 there (if n < 0 then
	// n = -n end) are not -0. (Only here: -n * m is -0 when m is 0.)
	switch x := e.(type) {
	case *ast.UnaryMinusOpExpr:
		if w.nonzeroLocal(x.Expr) {
			return Negation{}
		}
	case *ast.ArithmeticOpExpr:
		if x.Operator == "*" {
			for _, s := range [][2]ast.Expr{{x.Lhs, x.Rhs}, {x.Rhs, x.Lhs}} {
				if v, ok := w.constNumber(s[1]); ok && v != 0 && w.nonzeroLocal(s[0]) {
					return Negation{}
				}
			}
		}
	}
	return w.negationOf(e)
}

// negationOf is negation without the test of a local known not to be 0.
func (w *walker) negationOf(e ast.Expr) Negation {
	switch x := e.(type) {
	case *ast.UnaryMinusOpExpr:
		switch x.Expr.(type) {
		case *ast.NumberExpr, *ast.UnaryMinusOpExpr:
			// -0 is checked as a literal.
			return Negation{}
		}
		if v, ok := w.constNumber(x.Expr); ok && v != 0 {
			return Negation{}
		}
		if id, ok := x.Expr.(*ast.IdentExpr); ok {
			if l, _ := w.lookup(id.Value); l != nil && l.counter && l.nonzero {
				return Negation{} // for i = 1, n: -i is never -0
			}
		}
		of := exprText(x.Expr)
		return Negation{Shown: exprText(x), Of: of, Fix: "0 - " + operandText(x.Expr, of, precAdd, true)}
	case *ast.ArithmeticOpExpr:
		if x.Operator != "*" {
			return Negation{}
		}
		sides := []ast.Expr{x.Lhs, x.Rhs}
		// negConst is a side that is a negative number: -5, -k.
		negConst := func(e ast.Expr) bool {
			u, ok := e.(*ast.UnaryMinusOpExpr)
			if !ok {
				return false
			}
			v, ok := w.constNumber(u.Expr)
			return ok && v > 0
		}
		negs := []Negation{w.negationOf(x.Lhs), w.negationOf(x.Rhs)}
		for i, side := range sides {
			other := sides[1-i]
			if negs[1-i].Shown != "" || negConst(other) {
				continue // both sides negative, or this one is not
			}
			// mag is what side negates, and how tightly it binds.
			var mag string
			var prec int
			switch {
			case negs[i].Shown != "":
				mag, prec = negs[i].Of, precMul
				if u, ok := side.(*ast.UnaryMinusOpExpr); ok {
					prec = precOf(u.Expr)
				}
			case negConst(side):
				if _, ok := w.constNumber(other); ok {
					continue // a number
				}
				u := side.(*ast.UnaryMinusOpExpr)
				if v, _ := w.constNumber(u.Expr); v == 1 { // n * -1 negates n itself
					of := exprText(other)
					return Negation{Shown: exprText(x), Of: of, Fix: "0 - " + operandText(other, of, precAdd, true)}
				}
				mag, prec = exprText(u.Expr), precOf(u.Expr)
			default:
				continue
			}
			parts := []string{mag, operandText(other, exprText(other), precMul, i == 0)}
			if prec < precMul || i == 1 && prec == precMul {
				parts[0] = "(" + mag + ")"
			}
			if i == 1 {
				parts[0], parts[1] = parts[1], parts[0]
			}
			of := parts[0] + " * " + parts[1]
			return Negation{Shown: exprText(x), Of: of, Fix: "0 - " + of}
		}
	}
	return Negation{}
}

// constNumber is the number e always is: a number literal, a string literal
// Lua reads as one ('5'), or a local that only ever holds a number literal
// (literalLocal), or the negation of one of these.
func (w *walker) constNumber(e ast.Expr) (float64, bool) {
	var text string
	switch x := e.(type) {
	case *ast.UnaryMinusOpExpr:
		v, ok := w.constNumber(x.Expr)
		return -v, ok
	case *ast.NumberExpr:
		text = x.Value
	case *ast.StringExpr:
		text = strings.TrimSpace(x.Value)
	case *ast.IdentExpr:
		lit, number, ok := w.literalLocal(x)
		if !ok || !number {
			return 0, false
		}
		text = lit
	default:
		return 0, false
	}
	if v, err := strconv.ParseFloat(text, 64); err == nil {
		return v, true
	}
	if i, err := strconv.ParseInt(text, 0, 64); err == nil { // 0x10
		return float64(i), true
	}
	return 0, false
}

// Operator precedences, as Lua 5.1 binds them, for exprText.
const (
	precOr = iota + 1
	precAnd
	precCompare
	precConcat
	precAdd
	precMul
	precUnary
	precPow
	precAtom
)

// precOf is the precedence of e's outermost operator (precAtom for none).
func precOf(e ast.Expr) int {
	switch x := e.(type) {
	case *ast.LogicalOpExpr:
		if x.Operator == "or" {
			return precOr
		}
		return precAnd
	case *ast.RelationalOpExpr:
		return precCompare
	case *ast.StringConcatOpExpr:
		return precConcat
	case *ast.ArithmeticOpExpr:
		switch x.Operator {
		case "+", "-":
			return precAdd
		case "^":
			return precPow
		}
		return precMul
	case *ast.UnaryMinusOpExpr, *ast.UnaryNotOpExpr, *ast.UnaryLenOpExpr:
		return precUnary
	}
	return precAtom
}

// operandText is text, e's, as an operand of an operator of precedence
// prec: in parentheses when e binds less tightly, or as tightly on the
// side where Lua would group it otherwise (right: a - (b - c)).
func operandText(e ast.Expr, text string, prec int, right bool) string {
	if p := precOf(e); p < prec || right && p == prec && p != precAtom {
		return "(" + text + ")"
	}
	return text
}

// exprText is e as messages write it: ARGV[1], tonumber(ARGV[1]),
// -(n + 1), #KEYS; a function or a table as "function ... end" or "{...}".
func exprText(e ast.Expr) string {
	bin := func(l ast.Expr, op string, r ast.Expr) string {
		p := precOf(e)
		return operandText(l, exprText(l), p, false) + " " + op + " " + operandText(r, exprText(r), p, true)
	}
	switch x := e.(type) {
	case *ast.IdentExpr:
		return x.Value
	case *ast.NumberExpr:
		return x.Value
	case *ast.StringExpr:
		return "'" + strings.ReplaceAll(x.Value, "'", `\'`) + "'"
	case *ast.NilExpr:
		return "nil"
	case *ast.TrueExpr:
		return "true"
	case *ast.FalseExpr:
		return "false"
	case *ast.Comma3Expr:
		return "..."
	case *ast.AttrGetExpr:
		obj := operandText(x.Object, exprText(x.Object), precAtom, false)
		if k, ok := x.Key.(*ast.StringExpr); ok && identRe.MatchString(k.Value) {
			return obj + "." + k.Value
		}
		return obj + "[" + exprText(x.Key) + "]"
	case *ast.FuncCallExpr:
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i] = exprText(a)
		}
		f := ""
		if x.Receiver != nil {
			f = operandText(x.Receiver, exprText(x.Receiver), precAtom, false) + ":" + x.Method
		} else {
			f = operandText(x.Func, exprText(x.Func), precAtom, false)
		}
		return f + "(" + strings.Join(args, ", ") + ")"
	case *ast.UnaryMinusOpExpr:
		return "-" + operandText(x.Expr, exprText(x.Expr), precUnary, false)
	case *ast.UnaryLenOpExpr:
		return "#" + operandText(x.Expr, exprText(x.Expr), precUnary, false)
	case *ast.UnaryNotOpExpr:
		return "not " + operandText(x.Expr, exprText(x.Expr), precUnary, false)
	case *ast.ArithmeticOpExpr:
		return bin(x.Lhs, x.Operator, x.Rhs)
	case *ast.StringConcatOpExpr:
		return bin(x.Lhs, "..", x.Rhs)
	case *ast.RelationalOpExpr:
		return bin(x.Lhs, x.Operator, x.Rhs)
	case *ast.LogicalOpExpr:
		return bin(x.Lhs, x.Operator, x.Rhs)
	case *ast.FunctionExpr:
		return "function ... end"
	case *ast.TableExpr:
		return "{...}"
	}
	return "..."
}

// fractionLiteral is the text of an operand of e that is a number literal
// with a fraction (1.5), or "".
func fractionLiteral(e *ast.ArithmeticOpExpr) string {
	for _, o := range []ast.Expr{e.Lhs, e.Rhs} {
		if n, ok := o.(*ast.NumberExpr); ok {
			if v, err := strconv.ParseFloat(n.Value, 64); err == nil && v != math.Trunc(v) {
				return n.Value
			}
		}
	}
	return ""
}

// errTable records {err = 'CODE ...'} tables.
func (w *walker) errTable(t *ast.TableExpr) {
	for _, f := range t.Fields {
		k, ok := f.Key.(*ast.StringExpr)
		if !ok || k.Value != "err" {
			continue
		}
		lit, joined, _ := messageStart(f.Value, w.stringLiteral)
		pos, _ := w.tokenPos(f.Value.Line(), "err", true)
		w.f.ErrorSites = append(w.f.ErrorSites, ErrorSite{Pos: pos, Text: lit, Via: "{err = ...}", Joined: joined})
		w.paramErr(f.Value, "{err = ...}", len(w.f.ErrorSites)-1)
	}
}

// ret records what a return statement gives the caller.
func (w *walker) ret(s *ast.ReturnStmt) {
	pos, ti := w.identPos(s.Line(), "return")
	if ti >= 0 && ti+1 < len(w.toks) && len(s.Exprs) > 0 {
		pos = Pos{w.toks[ti+1].line, w.toks[ti+1].col}
	}
	r := Return{Pos: pos, Kind: ReturnUnknown}
	if len(s.Exprs) == 0 {
		r.Kind = ReturnNil
		w.f.Returns = append(w.f.Returns, r)
		return
	}
	r.Kind, r.Text = w.kindOf(s.Exprs[0])
	r.Boolean = isBoolean(s.Exprs[0])
	r.Fraction = fractionOf(s.Exprs[0])
	switch x := s.Exprs[0].(type) {
	case *ast.TableExpr:
		w.tableReturn(&r, x)
	case *ast.IdentExpr:
		if l, _ := w.lookup(x.Value); l != nil && l.table && l.reply.Table && l.ctor != nil && w.kept != nil && w.kept[l.decl] {
			// A table the script never changes: what its constructor
			// lists.
			r = *l.ctor
			r.Pos, r.Local, r.From = pos, x.Value, l.reply.Pos
		} else if l != nil && (l.reply.Kind != ReturnUnknown || l.reply.Fraction != "" || l.reply.Table) {
			from := l.reply
			r = from
			r.Pos, r.Local, r.From = pos, x.Value, from.Pos
			if r.Kind == ReturnOneOf {
				r.Alts = make([]Return, len(from.Alts))
				for i, a := range from.Alts {
					a.Pos, a.Local, a.From = pos, x.Value, a.Pos
					r.Alts[i] = a
				}
			}
			if w.guarded(l) {
				r = notNil(r)
			}
		}
	case *ast.LogicalOpExpr:
		r.Kind, r.Alts, w.altCalls = ReturnEither, nil, nil
		for i, a := range w.eitherOf(x) {
			a.Ret.Pos = pos
			for j, u := range a.unless {
				u.Ret.Pos = pos
				a.Ret.Unless = append(a.Ret.Unless, u.Ret)
				w.altCalls = append(w.altCalls, altCall{i, j, u.call})
			}
			r.Alts = append(r.Alts, a.Ret)
			w.altCalls = append(w.altCalls, altCall{i, -1, a.call})
		}
	case *ast.FuncCallExpr:
		if name, ok := redisFunc(x); ok {
			switch name {
			case "error_reply":
				r.Kind = ReturnError
			case "status_reply":
				r.Kind = ReturnString
			case "call", "pcall":
				if c, ok := callReply(x, len(w.f.Calls)); ok { // recorded next, when the expression is walked
					r.Kind, r.Command, r.CallFunc, r.Call = c.Kind, c.Command, c.CallFunc, c.Call
				}
			}
		}
	}
	r.More = len(s.Exprs) - 1 // after the cases above, which may replace r
	w.f.Returns = append(w.f.Returns, r)
}

// tableReturn fills r (Kind, Text, Boolean, Fraction and Pos set) with what
// table constructor x gives as a reply: an array of its values up to the
// first literal nil, or an error or status reply ({err = ...}, {ok = ...}).
// The calls of its values are in w.elemCalls and w.elemAlts, whose indexes
// in File.Calls fixElems sets once x is walked.
func (w *walker) tableReturn(r *Return, x *ast.TableExpr) {
	r.Kind = ReturnArray
	ended := false // by a literal nil
	for i, f := range x.Fields {
		if f.Key != nil {
			r.Len, r.Elems = -1, nil
			if k, ok := f.Key.(*ast.StringExpr); ok {
				r.Named = append(r.Named, k.Value) // [k] = v may be an index at run time
			}
		} else {
			r.Unnamed++
		}
		if f.Key == nil && r.Len >= 0 && !ended {
			if _, isNil := f.Value.(*ast.NilExpr); isNil {
				ended = true
				continue
			}
			r.Len++
			if ns := w.nilSourceOf(f.Value, len(w.f.Calls)); ns.set && ns.tonumber && !ns.tested {
				what := "tonumber of the reply of " + strings.ToUpper(ns.command)
				if id, ok := f.Value.(*ast.IdentExpr); ok {
					what = id.Value + " (" + what + ")"
				}
				r.NilElems = append(r.NilElems, NilElem{Index: r.Len, Text: what, Command: strings.ToUpper(ns.command)})
			}
			k, text := w.kindOf(f.Value)
			el := Return{Pos: r.Pos, Kind: k, Text: text, Boolean: isBoolean(f.Value), Fraction: w.fractionIn(f.Value)}
			var elemCall *ast.FuncCallExpr
			switch v := f.Value.(type) {
			case *ast.FuncCallExpr:
				// The reply of a command: its call index is set once the
				// call is recorded (-1 until then).
				if c, ok := callReply(v, -1); ok {
					el.Kind, el.Command, el.CallFunc, el.Call = c.Kind, c.Command, c.CallFunc, c.Call
					elemCall = v
				}
			case *ast.IdentExpr:
				if l, _ := w.lookup(v.Value); l != nil && l.reply.Kind == ReturnCall && !w.guarded(l) {
					el.Kind, el.Command, el.CallFunc, el.Call, el.Local = ReturnCall, l.reply.Command, l.reply.CallFunc, l.reply.Call, v.Value
				} else if l != nil && (l.reply.Kind == ReturnString || l.reply.Kind == ReturnInt || l.reply.Kind == ReturnBool) {
					// A local holding a string, a number or a Lua boolean,
					// as return v reads it.
					el.Kind, el.Text, el.Local, el.From = l.reply.Kind, l.reply.Text, v.Value, l.reply.Pos
					el.Boolean, el.NotNil = l.reply.Boolean, l.reply.NotNil || w.guarded(l)
				} else if l != nil && l.reply.Table {
					// A local holding a table (whatever is put in it
					// since): Redis replies it as a nested array.
					el.Kind, el.Local, el.From = ReturnArray, v.Value, l.reply.Pos
				}
				if l, _ := w.lookup(v.Value); l != nil && !w.guarded(l) && (l.reply.LuaNil || l.reply.Kind == ReturnOneOf && slices.ContainsFunc(l.reply.Alts, func(a Return) bool { return a.LuaNil })) {
					// local v; if c then v = 'x' end: nil on a path.
					el.LuaNil, el.Local = true, v.Value
				}
			case *ast.LogicalOpExpr:
				// The values it may give, as for a returned and/or.
				el.Kind = ReturnEither
				for j, a := range w.eitherOf(v) {
					a.Ret.Pos = r.Pos
					for k, u := range a.unless {
						u.Ret.Pos = r.Pos
						a.Ret.Unless = append(a.Ret.Unless, u.Ret)
						w.elemAlts = append(w.elemAlts, elemAlt{len(r.Elems), altCall{j, k, u.call}})
					}
					el.Alts = append(el.Alts, a.Ret)
					w.elemAlts = append(w.elemAlts, elemAlt{len(r.Elems), altCall{j, -1, a.call}})
				}
			}
			r.Elems = append(r.Elems, el)
			w.elemCalls = append(w.elemCalls, elemCall)
			if c, ok := f.Value.(*ast.FuncCallExpr); i == len(x.Fields)-1 && expands(f.Value) && (!ok || !w.isTonumber(c) && !oneValue(c) && !w.oneResult(c)) {
				r.Len, r.Elems = -1, nil // {a, unpack(t)}; tonumber and redis.call give one value
			}
		}
		if k, ok := f.Key.(*ast.StringExpr); ok {
			switch k.Value {
			case "err":
				r.Kind = ReturnError
			case "ok":
				r.Kind = ReturnString
			}
		}
	}
	if r.Kind != ReturnArray {
		r.Named = nil
	}
}

// fixElems sets the indexes in File.Calls of the calls of r's values (calls
// and alts, as tableReturn gathered them), now that they are recorded.
func (w *walker) fixElems(r *Return, calls []*ast.FuncCallExpr, alts []elemAlt) {
	for i, e := range calls {
		if c, ok := w.calls[e]; ok && e != nil && i < len(r.Elems) && r.Elems[i].Kind == ReturnCall && r.Elems[i].Local == "" {
			r.Elems[i].Call = c
		}
	}
	for _, a := range alts {
		if a.elem < len(r.Elems) && r.Elems[a.elem].Kind == ReturnEither {
			w.setAltCall(&r.Elems[a.elem], a.altCall)
		}
	}
}

// setAltCall sets the index of the call of a in r's Alts, now that it is
// recorded.
func (w *walker) setAltCall(r *Return, a altCall) {
	c, ok := w.calls[a.call]
	if !ok || a.call == nil || a.alt >= len(r.Alts) {
		return
	}
	alt := &r.Alts[a.alt]
	if a.unless >= 0 && a.unless < len(alt.Unless) {
		alt = &alt.Unless[a.unless]
	}
	if alt.Kind == ReturnCall {
		alt.Call = c
	}
}

// altCall is the call of Alts[alt] of a returned and/or expression, or of
// its Unless[unless] (-1: of the value itself).
type altCall struct {
	alt, unless int
	call        *ast.FuncCallExpr
}

// either is one value an and/or expression may give, with its redis.call
// (nil for another value), and the calls one of which must reply nil for it
// to be given (Return.Unless).
type either struct {
	Ret    Return
	call   *ast.FuncCallExpr
	unless []either
}

// eitherOf lists the values an and/or expression may give: a or b gives a
// when a is neither nil nor false, else b; a and b gives a when a is nil or
// false (a nil reply), else b.
func (w *walker) eitherOf(e ast.Expr) []either {
	x, ok := e.(*ast.LogicalOpExpr)
	if !ok {
		if c, ok := e.(*ast.FuncCallExpr); ok {
			if r, ok := callReply(c, -1); ok {
				return []either{{Ret: r, call: c}}
			}
		}
		if id, ok := e.(*ast.IdentExpr); ok {
			// A local holding a value, as return v reads it.
			l, _ := w.lookup(id.Value)
			if l == nil || l.reply.Kind == ReturnUnknown || l.reply.Kind == ReturnOneOf || l.reply.Kind == ReturnEither {
				return []either{{Ret: Return{Kind: ReturnUnknown}}}
			}
			r := l.reply
			r.Local, r.From = id.Value, l.reply.Pos
			if w.guarded(l) {
				r = notNil(r)
			}
			return []either{{Ret: r}}
		}
		r := w.replyOf(e, -1)
		if r.Kind == ReturnCall {
			r.Kind = ReturnUnknown // not reached: calls are taken above
		}
		_, r.LuaNil = e.(*ast.NilExpr)
		return []either{{Ret: r}}
	}
	lhs, rhs := w.eitherOf(x.Lhs), w.eitherOf(x.Rhs)
	// When lhs is nil or false: always (falsy), never (no calls either),
	// or when one of calls replies nil.
	falsy := false
	var calls []either
	for _, a := range lhs {
		switch {
		case a.Ret.Kind == ReturnInt, a.Ret.Kind == ReturnString, a.Ret.Kind == ReturnArray, a.Ret.Kind == ReturnError:
		case a.Ret.Kind == ReturnCall && a.Ret.NotNil:
		case a.Ret.Kind == ReturnCall && a.call != nil:
			calls = append(calls, either{Ret: a.Ret, call: a.call})
		default:
			falsy = true
		}
	}
	cond := func(alts []either) []either {
		switch {
		case falsy:
			return alts
		case len(calls) == 0:
			return nil // never given
		}
		out := make([]either, 0, len(alts))
		for _, a := range alts {
			if len(a.unless) == 0 {
				a.unless = calls
			}
			out = append(out, a)
		}
		return out
	}
	var out []either
	if x.Operator == "or" {
		for _, a := range lhs {
			switch a.Ret.Kind {
			case ReturnNil:
				continue // never given
			case ReturnCall, ReturnBool:
				a.Ret.NotNil = true
			}
			out = append(out, a)
		}
		return append(out, cond(rhs)...)
	}
	out = cond([]either{{Ret: Return{Kind: ReturnNil}}}) // false or nil: a nil reply
	return append(out, rhs...)
}

// notNil is the return of a local known to hold neither nil nor false:
// its nil values cannot reach it, and a reply it holds is not nil.
func notNil(r Return) Return {
	if r.Kind == ReturnNil {
		return Return{Pos: r.Pos, Kind: ReturnUnknown} // the return is never reached
	}
	if r.Kind != ReturnOneOf {
		r.NotNil = true
		return r
	}
	var alts []Return
	for _, a := range r.Alts {
		if a.Kind != ReturnNil {
			a.NotNil = true
			alts = append(alts, a)
		}
	}
	switch len(alts) {
	case 0:
		return Return{Pos: r.Pos, Kind: ReturnUnknown}
	case 1:
		return alts[0]
	}
	r.Alts = alts
	return r
}

// numArgs is numArgOf of each of n variables' new values.
func (w *walker) numArgs(list []ast.Expr, n int) []int {
	out := make([]int, max(n, len(list)))
	for i, e := range list {
		out[i], _ = w.numArgOf(e)
	}
	return out
}

// replies walks the expressions of an assignment of n variables and returns
// the reply each variable's new value would give if returned. A variable
// without an expression is unknown (a call may give it a value), or nil
// when there are none (local v). line is the statement's.
func (w *walker) replies(list []ast.Expr, n, line int) ([]Return, []nilSource, []*Return) {
	out := make([]Return, max(n, len(list)))
	nils := make([]nilSource, len(out))
	ctors := make([]*Return, len(out))
	for i, e := range list {
		out[i] = w.replyOf(e, len(w.f.Calls))
		nils[i] = w.nilSourceOf(e, len(w.f.Calls))
		x, table := e.(*ast.TableExpr)
		if !table || !out[i].Table {
			w.expr(e)
			continue
		}
		// What the constructor replies, its calls' indexes set once
		// they are walked.
		calls, alts := w.elemCalls, w.elemAlts
		w.elemCalls, w.elemAlts = nil, nil
		ctor := Return{Pos: out[i].Pos, Kind: ReturnUnknown}
		w.tableReturn(&ctor, x)
		w.expr(e)
		w.fixElems(&ctor, w.elemCalls, w.elemAlts)
		w.elemCalls, w.elemAlts = calls, alts
		ctors[i] = &ctor
	}
	for i, e := range list {
		if _, ok := e.(*ast.NilExpr); ok && out[i].Kind == ReturnNil {
			out[i].LuaNil = true // v = nil: not false
		}
	}
	// local mode, v = f(): the names past the list take the values after
	// the first of a call last, a command's reply among them.
	if len(list) > 0 {
		if c, ok := list[len(list)-1].(*ast.FuncCallExpr); ok && !c.AdjustRet {
			for i := len(list); i < len(out); i++ {
				if j, r, ok := w.returnedReplyIn(c, nil, i-(len(list)-1)); ok {
					nils[i] = nilSource{set: true, call: j, command: r.Command}
				}
			}
		}
	}
	for i := range out {
		// local v, and local u, v = 'x' (a last expression that gives
		// one value, no call or ...): nil, not false.
		if i >= len(list) && !multiValued(list) {
			out[i] = Return{Pos: Pos{Line: line}, Kind: ReturnNil, LuaNil: true}
		}
		// Nor past the values every return of a local function called
		// last gives (local function f() return 'x' end; local a, b =
		// f()).
		if k := i - (len(list) - 1); len(list) > 0 && k > 0 {
			if c, ok := list[len(list)-1].(*ast.FuncCallExpr); ok && c.Receiver == nil && !c.AdjustRet {
				if l := w.fixedFunc(c.Func); l != nil {
					if counts := returnCounts(l.fnExpr, w.errorLocal[l.fnExpr]); len(counts) > 0 && counts[len(counts)-1] <= k {
						out[i] = Return{Pos: Pos{Line: line}, Kind: ReturnNil, LuaNil: true}
					}
				}
			}
		}
	}
	return out, nils, ctors
}

// multiValued reports whether the last of list may give any number of
// values (a call, ...): the names past list then take them. Not one in
// parentheses ((f()), (...)), which gives its first value alone.
func multiValued(list []ast.Expr) bool {
	if len(list) == 0 {
		return false
	}
	switch x := list[len(list)-1].(type) {
	case *ast.FuncCallExpr:
		return !x.AdjustRet
	case *ast.Comma3Expr:
		return !x.AdjustRet
	}
	return false
}

// returnedReply is the reply a call of a local function gives when its one
// return, which ends it, is the reply of a redis.call written there (local
// function f() return redis.call('GET', KEYS[1]) end): that call's index
// in File.Calls and its reply.
func (w *walker) returnedReply(e *ast.FuncCallExpr) (int, Return, bool) {
	return w.returnedReplyIn(e, nil, 0)
}

// maxReturnedDepth bounds the chain of local functions returnedReply
// follows (f returns g(), which returns redis.call(...)).
const maxReturnedDepth = 4

// returnedReplyIn is returnedReply through the functions seen already (a
// chain of calls, each the one return of the last): a call of another
// local function returned so gives that one's reply. It reads the value k
// (0 for the first) of the return: local mode, v = f(), where f ends with
// return t, redis.call('GET', k), gives v the reply of GET.
func (w *walker) returnedReplyIn(e *ast.FuncCallExpr, seen []*ast.FunctionExpr, k int) (int, Return, bool) {
	l := w.fixedFunc(e.Func)
	if l == nil || e.Receiver != nil || !exits(l.fnExpr.Stmts) || slices.Contains(seen, l.fnExpr) || len(seen) >= maxReturnedDepth {
		return 0, Return{}, false
	}
	var rets []*ast.ReturnStmt
	inspectShallow(l.fnExpr.Stmts, func(s ast.Stmt) {
		if r, ok := s.(*ast.ReturnStmt); ok {
			rets = append(rets, r)
		}
	}, func(ast.Expr) {})
	if len(rets) != 1 || len(rets[0].Exprs) <= k {
		return 0, Return{}, false
	}
	c, ok := rets[0].Exprs[k].(*ast.FuncCallExpr)
	if !ok {
		return 0, Return{}, false
	}
	i, walked := w.calls[c]
	if !walked {
		// (Its one return a call of another local function, written
		// above it: local function f() return g() end.)
		if g := w.fixedFunc(c.Func); g != nil && c.Receiver == nil && g.fnExpr.Line() < l.fnExpr.Line() && k == 0 {
			return w.returnedReplyIn(c, append(seen, l.fnExpr), 0)
		}
		return 0, Return{}, false
	}
	r, ok := callReply(c, i)
	return i, r, ok
}

// returnedParam is the index of the parameter a call e of a local function
// gives back when the function's one return, which ends it, gives that
// parameter, untested and unassigned there, as its first value (local
// function id(x) return x end).
func (w *walker) returnedParam(e *ast.FuncCallExpr) (int, bool) {
	l := w.fixedFunc(e.Func)
	if l == nil || e.Receiver != nil || l.fnExpr.ParList == nil || !exits(l.fnExpr.Stmts) {
		return 0, false
	}
	var rets []*ast.ReturnStmt
	inspectShallow(l.fnExpr.Stmts, func(s ast.Stmt) {
		if r, ok := s.(*ast.ReturnStmt); ok {
			rets = append(rets, r)
		}
	}, func(ast.Expr) {})
	if len(rets) != 1 || len(rets[0].Exprs) == 0 {
		return 0, false
	}
	id, ok := rets[0].Exprs[0].(*ast.IdentExpr)
	if !ok {
		return 0, false
	}
	p := slices.Index(l.fnExpr.ParList.Names, id.Value)
	if p < 0 || !slices.Contains(w.retParams[l.fnExpr], p) {
		return 0, false // (another name, or one assigned or tested first)
	}
	return p, true
}

// makesCall reports whether e calls a function anywhere.
func makesCall(e ast.Expr) bool {
	found := false
	inspect([]ast.Stmt{&ast.ReturnStmt{Exprs: []ast.Expr{e}}}, func(ast.Stmt) {}, func(e ast.Expr) {
		if _, ok := e.(*ast.FuncCallExpr); ok {
			found = true
		}
	})
	return found
}

// nilSourceOf is what e holds when it is a command's reply or tonumber of
// one (or a local holding either), for a local assigned e; call is the index
// in File.Calls e's own redis.call will have.
func (w *walker) nilSourceOf(e ast.Expr, call int) nilSource {
	switch x := e.(type) {
	case *ast.FuncCallExpr:
		if r, ok := callReply(x, call); ok {
			return nilSource{set: true, call: call, command: r.Command}
		}
		if i, r, ok := w.returnedReply(x); ok {
			return nilSource{set: true, call: i, command: r.Command}
		}
		// A local function that gives its parameter back (local function
		// id(x) return x end): what the call passes it. (Only past
		// arguments that make no call: the index call is that of the
		// first redis.call the arguments make.)
		if p, ok := w.returnedParam(x); ok && p < len(x.Args) && !(p == len(x.Args)-1 && expands(x.Args[p]) && !isCall(x.Args[p])) &&
			!slices.ContainsFunc(x.Args[:p], makesCall) {
			return w.nilSourceOf(x.Args[p], call)
		}
		if arg, ok := w.tonumberArg(x); ok {
			if ns := w.nilSourceOf(arg, call); ns.set && !ns.tonumber {
				ns.tonumber = true
				return ns
			}
		}
	case *ast.IdentExpr:
		if l, _ := w.lookup(x.Value); l != nil {
			return w.heldNil(l)
		}
	}
	return nilSource{}
}

// stringArgFuncs are the library functions whose first argument must be a
// string (or a number): Lua fails the script on false, nil or a table there;
// and table.concat, whose first argument must be a list of them.
var stringArgFuncs = map[string]map[string]bool{
	"string": {"len": true, "sub": true, "upper": true, "lower": true, "rep": true, "reverse": true,
		"byte": true, "find": true, "match": true, "gmatch": true, "gsub": true},
	"cjson":    {"decode": true},
	"cmsgpack": {"unpack": true},
	"table":    {"concat": true}, // a list of strings and numbers
}

// libFunc is the name (string.len) of a call of a function of a library
// table (not a local of that name) with at least one argument.
func (w *walker) libFunc(e *ast.FuncCallExpr) (string, bool) {
	lib, fn, ok := libCall(e)
	if !ok || w.isLocal(lib) {
		return "", false
	}
	return lib + "." + fn, true
}

// libCall reads a call lib.fn(...) with an argument at least, whatever the
// scope makes of lib (libFunc checks it names no local).
func libCall(e *ast.FuncCallExpr) (lib, fn string, ok bool) {
	a, isAttr := e.Func.(*ast.AttrGetExpr)
	if !isAttr || len(e.Args) == 0 {
		return "", "", false
	}
	l, ok1 := a.Object.(*ast.IdentExpr)
	f, ok2 := a.Key.(*ast.StringExpr)
	if !ok1 || !ok2 {
		return "", "", false
	}
	return l.Value, f.Value, true
}

// stringArgFunc is the name (string.len) of a call of a stringArgFuncs
// function with an argument.
func (w *walker) stringArgFunc(e *ast.FuncCallExpr) (string, bool) {
	name, ok := w.libFunc(e)
	lib, fn, _ := strings.Cut(name, ".")
	return name, ok && stringArgFuncs[lib][fn]
}

// isStringFormat reports a call of string.format with a format.
func (w *walker) isStringFormat(e *ast.FuncCallExpr) bool {
	name, ok := w.libFunc(e)
	return ok && name == "string.format"
}

// tonumberArg is the argument of a call of Lua's tonumber (with no base: a
// base other than 10 is not followed).
func (w *walker) tonumberArg(e *ast.FuncCallExpr) (ast.Expr, bool) {
	id, ok := e.Func.(*ast.IdentExpr)
	if !ok || id.Value != "tonumber" || w.isLocal("tonumber") || len(e.Args) != 1 || e.Receiver != nil {
		return nil, false
	}
	return e.Args[0], true
}

// isTonumber reports whether e calls the global tonumber.
func (w *walker) isTonumber(e *ast.FuncCallExpr) bool {
	_, ok := w.tonumberArg(e)
	return ok
}

// operation records e as an operand of op at pos when it may be false, nil
// or a table there (see Operation), and walks e: call is the index in
// File.Calls e's own redis.call will have. A local read there is not a test
// of it; one recorded is taken as tested from then on, so that each
// assignment is reported once.
// It returns the index of its record in File.Operations, -1 when none.
func (w *walker) operation(e ast.Expr, op string, pos Pos) int {
	o := Operation{Pos: pos, Op: op}
	var l *local // the local the operand reads, if any
	if ns := w.nilSourceOf(e, len(w.f.Calls)); ns.set {
		what := "the reply of " + strings.ToUpper(ns.command)
		switch x := e.(type) {
		case *ast.IdentExpr: // n (the reply of GET), n (tonumber of the reply of GET)
			l, _ = w.lookup(x.Value)
			if ns.tonumber {
				what = "tonumber of " + what
			}
			what = x.Value + " (" + what + ")"
		case *ast.FuncCallExpr: // the reply of GET, tonumber(...) of it or of n
			if _, _, ok := w.returnedReply(x); ok {
				what += " that " + exprText(x) + " returns"
			}
			if arg, ok := w.tonumberArg(x); ok {
				if id, ok := arg.(*ast.IdentExpr); ok {
					what = id.Value + " (" + what + ")"
					l, _ = w.lookup(id.Value)
				}
				what = "tonumber(" + what + ")"
			}
		}
		o.Operand = Operand{Type: OperandReply, Text: what, Call: ns.call}
		o.Tonumber, o.Tested = ns.tonumber, ns.tested
		if l != nil && w.knownFalse(l) && !ns.tonumber {
			o.Tested = false // (if not v then ... v .. 'x': false there)
		}
		if l != nil && w.knownNilOnly(l) {
			o.Tested = false // (if v ~= nil then ... v .. 'x': false there)
		} else if l != nil && w.guarded(l) && !w.knownFalse(l) {
			// (Shown to hold a value there though not read: given one on
			// the one path past an if whose other ends with a break.)
			o.Tested = true
		}
		o.Probed = w.probed[ns.call] > 0 && w.shaped[ns.call] == 0
	}
	at := -1
	if o.Operand.Type == OperandReply {
		at = len(w.f.Operations)
		w.f.Operations = append(w.f.Operations, o)
		if l != nil {
			l.nilv.tested = true
		}
	} else if id, ok := e.(*ast.IdentExpr); ok && !w.dry {
		// A parameter, untested here: what the calls pass it is known
		// once the walk has seen them (see settleParamOps).
		if p, _ := w.lookup(id.Value); p != nil && p.paramOf != nil && !p.assigned && p.fn == w.depth && !w.guarded(p) && !p.paramTested && !paramTyped(p) {
			at = len(w.f.Operations)
			w.f.Operations = append(w.f.Operations, o)
			w.paramOps = append(w.paramOps, paramOp{at: at, l: p, name: id.Value, conds: w.condsOf(p.paramOf)})
			p.paramTested = true // each use reported once, as for a local
		} else if n, _ := w.lookup(id.Value); n != nil && n.numParam != nil && !n.numParam.assigned && n.fn == w.depth && !n.fnAssigned && !w.guarded(n) && !w.guarded(n.numParam) && !paramTyped(n.numParam) {
			// A local given tonumber of a parameter (local n =
			// tonumber(v)): nil where a call passes a nil reply.
			at = len(w.f.Operations)
			w.f.Operations = append(w.f.Operations, o)
			w.paramOps = append(w.paramOps, paramOp{at: at, l: n.numParam, name: n.numParamName, tonumber: true, local: id.Value})
		}
	} else if c, ok := e.(*ast.FuncCallExpr); ok && !w.dry {
		// tonumber of a parameter, in place.
		if arg, ok := w.tonumberArg(c); ok {
			if id, ok := arg.(*ast.IdentExpr); ok {
				if p, _ := w.lookup(id.Value); p != nil && p.paramOf != nil && !p.assigned && p.fn == w.depth && !w.guarded(p) && !paramTyped(p) {
					at = len(w.f.Operations)
					w.f.Operations = append(w.f.Operations, o)
					w.paramOps = append(w.paramOps, paramOp{at: at, l: p, name: id.Value, tonumber: true})
				}
			}
		}
	}
	if id, ok := e.(*ast.IdentExpr); ok && w.isLocal(id.Value) {
		return at // read as an operand, not tested
	}
	if c, ok := e.(*ast.FuncCallExpr); ok {
		if arg, ok := w.tonumberArg(c); ok {
			if id, ok := arg.(*ast.IdentExpr); ok && w.isLocal(id.Value) {
				w.expr(c.Func) // tonumber(n): no test of n
				return at
			}
		}
	}
	w.expr(e)
	return at
}

// localFn records that fn is a local function (local function f, local f =
// function ...): the script calls it by name.
func (w *walker) localFn(fn *ast.FunctionExpr) {
	if w.localFns == nil {
		w.localFns = map[*ast.FunctionExpr]bool{}
	}
	w.localFns[fn] = true
}

// funcIndex is 1 + the index of fn in File.Funcs, which it adds fn to.
func (w *walker) funcIndex(fn *ast.FunctionExpr) int {
	if i, ok := w.funcs[fn]; ok {
		return i + 1
	}
	if w.funcs == nil {
		w.funcs = map[*ast.FunctionExpr]int{}
	}
	w.funcs[fn] = len(w.f.Funcs)
	w.f.Funcs = append(w.f.Funcs, Func{Line: fn.Line(), LastLine: fn.LastLine()})
	return len(w.f.Funcs)
}

// settleFuncs sets, once the chunk is walked, where each function in
// File.Funcs is called, and whether it escaped.
func (w *walker) settleFuncs() {
	for fn, i := range w.funcs {
		f := &w.f.Funcs[i]
		f.Calls = slices.Clone(w.fnCalls[fn])
		f.CallsIn = slices.Clone(w.fnConds[fn])
		f.CallsLoops = slices.Clone(w.fnLoops[fn])
		f.CallsBlocks = slices.Clone(w.fnBlocks[fn])
		f.Escaped = !w.localFns[fn] || w.escaped[fn]
	}
}

// settleDeferred sets Call.Deferred, DeferSpan and RunsFrom on each call
// written in a local function the script calls only by name, once
// settleFuncs has found where the functions are called.
func (w *walker) settleDeferred() {
	var runs map[*ast.FunctionExpr]Pos
	for i := range w.f.Calls {
		c := &w.f.Calls[i]
		fn := w.callIn[i]
		in, ok := w.funcs[fn]
		if fn == nil || !ok || w.f.Funcs[in].Escaped {
			continue
		}
		f := w.f.Funcs[in]
		c.Deferred, c.DeferSpan, c.RunsFrom = true, [2]int{f.Line, f.LastLine}, Pos{}
		if runs == nil {
			runs = w.runsFrom()
		}
		c.RunsFrom = runs[fn]
	}
}

// runsFrom gives each local function the first call of it written outside
// it that runs it (none when no call does): a call written in another
// local function runs where that one first runs (never when it never
// does), one written in a function the checker cannot follow where it is
// written. Each pass follows one more call deep, and positions only move
// up, so as many passes as functions settle it.
func (w *walker) runsFrom() map[*ast.FunctionExpr]Pos {
	first := map[*ast.FunctionExpr]Pos{}
	earlier := func(a, b Pos) bool { return b.Line == 0 || a.Line < b.Line || a.Line == b.Line && a.Col < b.Col }
	for range len(w.fnCalls) + 1 {
		grew := false
		for fn, calls := range w.fnCalls {
			for k, at := range calls {
				in := w.fnCallsIn[fn][k]
				if slices.Contains(in, fn) {
					continue // (a call of it from inside it runs once it does)
				}
				if n := len(in); n > 0 && w.localFns[in[n-1]] && !w.escaped[in[n-1]] {
					at = first[in[n-1]]
					if at.Line == 0 {
						continue
					}
				}
				if earlier(at, first[fn]) && at != first[fn] {
					first[fn] = at
					grew = true
				}
			}
		}
		if !grew {
			break
		}
	}
	return first
}

// replyField reports whether key (of a table's field) is one Redis reads
// to reply a returned table otherwise than as an array: {err = ...} is an
// error, {ok = ...} a status, {double = ...} a double, and so on.
func replyField(key ast.Expr) bool {
	k, ok := key.(*ast.StringExpr)
	if !ok {
		return false
	}
	switch k.Value {
	case "err", "ok", "double", "big_number", "map", "set", "verbatim_string":
		return true
	}
	return false
}

// open records that the table local name may have been given a field
// Redis replies otherwise than as an array ({ok = ...}): it was passed on,
// aliased, stored, or given a field whose name the checker cannot read.
// Returning it is then no longer checked as returning an array.
func (w *walker) open(name string) {
	if l, _ := w.lookup(name); l != nil && l.reply.Table {
		l.reply = Return{Kind: ReturnUnknown}
	}
}

// keep marks id, a read of a local, as one that gives the table it may
// hold no field (see open).
func (w *walker) keep(id *ast.IdentExpr) {
	if w.keeps == nil {
		w.keeps = map[*ast.IdentExpr]bool{}
	}
	w.keeps[id] = true
}

// keepsFields reports whether call e is of a library function that gives
// the table its first argument is no named field: table.insert, .remove,
// .sort and .concat, cjson.encode, cmsgpack.pack, next, type, tostring,
// rawget, and rawset with a number for the key.
func (w *walker) keepsFields(e *ast.FuncCallExpr) bool {
	switch f := e.Func.(type) {
	case *ast.IdentExpr:
		if w.isLocal(f.Value) {
			return false
		}
		switch f.Value {
		case "next", "type", "tostring", "rawget":
			return true
		case "rawset":
			return len(e.Args) > 1 && w.numberKey(e.Args[1])
		}
	case *ast.AttrGetExpr:
		lib, ok1 := f.Object.(*ast.IdentExpr)
		fn, ok2 := f.Key.(*ast.StringExpr)
		if !ok1 || !ok2 || w.isLocal(lib.Value) {
			return false
		}
		switch lib.Value + "." + fn.Value {
		case "table.insert", "table.remove", "table.sort", "table.concat", "table.getn", "table.maxn", "cjson.encode", "cmsgpack.pack":
			return true
		}
	}
	return false
}

// numberKey reports whether e, a table key, is a number: a literal, an
// arithmetic result (#t + 1), a numeric for's variable or a local holding
// a number.
func (w *walker) numberKey(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.NumberExpr, *ast.ArithmeticOpExpr, *ast.UnaryMinusOpExpr, *ast.UnaryLenOpExpr:
		return true
	case *ast.IdentExpr:
		l, _ := w.lookup(x.Value)
		return l != nil && (l.counter || l.reply.Kind == ReturnInt && !l.reply.Boolean)
	}
	return false
}

// isStringKey reports whether e, a table key, is a string literal (which
// replyField reads).
func isStringKey(e ast.Expr) bool {
	_, ok := e.(*ast.StringExpr)
	return ok
}

// replyOf is the reply the value of e gives if returned, as a Return at the
// line of e; call is the index in File.Calls e's own redis.call will have.
// A table is unknown: it can be changed after it is made (t.x = ..., table.insert).
func (w *walker) replyOf(e ast.Expr, call int) Return {
	r := Return{Pos: Pos{Line: e.Line()}}
	switch x := e.(type) {
	case *ast.TableExpr:
		// Redis replies a table with one of these fields otherwise than
		// as an array ({ok = ...} as a status).
		r.Table = !slices.ContainsFunc(x.Fields, func(f *ast.Field) bool { return replyField(f.Key) })
		return r
	case *ast.IdentExpr:
		if l, _ := w.lookup(x.Value); l != nil {
			if w.guarded(l) {
				// Tested here (if not v then return end; local w = v):
				// a copy holds none of its nil or false values.
				return withoutNil(l.reply)
			}
			return l.reply
		}
		return r
	case *ast.FuncCallExpr:
		if c, ok := callReply(x, call); ok {
			c.Pos = r.Pos
			return c
		}
		// A call of a local function that gives nil alone, or false
		// alone (local function f() return nil end): what its value is.
		if l := w.fixedFunc(x.Func); l != nil && x.Receiver == nil {
			if v, ok := w.returned[l.fnExpr]; ok && v == (Value{Source: SourceNil}) {
				if luaNil, ok := nilReturns(l.fnExpr.Stmts); ok {
					return Return{Pos: r.Pos, Kind: ReturnNil, LuaNil: luaNil}
				}
			}
		}
		r.Kind, r.Text = w.kindOf(e)
		return r
	}
	r.Kind, r.Text = w.kindOf(e)
	r.Boolean = isBoolean(e)
	if !w.wholeDivision(e) {
		r.Fraction = fractionOf(e)
	}
	if r.Negation = w.negation(e); r.Negation.Shown != "" {
		r.Negation.Line = r.Pos.Line
	}
	return r
}

// withoutNil is r without its nil or false values (MayNil, the
// alternatives that are nil); r itself when nothing else is left.
func withoutNil(r Return) Return {
	r.MayNil = false
	if r.Kind != ReturnOneOf {
		return r
	}
	alts := slices.DeleteFunc(slices.Clone(r.Alts), func(a Return) bool { return a.Kind == ReturnNil })
	switch len(alts) {
	case 0:
		return r
	case 1:
		return alts[0]
	}
	r.Alts = alts
	return r
}

// isBoolean reports whether e is a Lua boolean: true, false, a comparison or
// not.
func isBoolean(e ast.Expr) bool {
	switch e.(type) {
	case *ast.TrueExpr, *ast.FalseExpr, *ast.RelationalOpExpr, *ast.UnaryNotOpExpr:
		return true
	}
	return false
}

// callReply is the reply of redis.call or redis.pcall with a literal command
// name, e being File.Calls[call]; false for any other expression.
func callReply(e *ast.FuncCallExpr, call int) (Return, bool) {
	name, ok := redisFunc(e)
	if !ok || (name != "call" && name != "pcall") || len(e.Args) == 0 {
		return Return{}, false
	}
	c, ok := e.Args[0].(*ast.StringExpr)
	if !ok {
		return Return{}, false
	}
	return Return{Kind: ReturnCall, Command: c.Value, CallFunc: "redis." + name, Call: call}, true
}

// oneValue reports whether e is redis.call or redis.pcall of a command,
// which give one value.
func oneValue(e *ast.FuncCallExpr) bool {
	_, ok := callReply(e, -1)
	return ok
}

// notStringExpr says what args[i] is, written in place, when Redis
// refuses it as a command argument and it is no nil or false: true, a
// comparison, a table or a function; "" otherwise.
func notStringExpr(args []ast.Expr, i int) string {
	if i >= len(args) {
		return ""
	}
	switch args[i].(type) {
	case *ast.TrueExpr:
		return "true"
	case *ast.RelationalOpExpr, *ast.UnaryNotOpExpr:
		return "a comparison, true or false"
	case *ast.TableExpr:
		return "a table"
	case *ast.FunctionExpr:
		return "a function"
	}
	return ""
}

// notStringKind says what a local's value r is when Redis refuses it as a
// command argument (a comparison, true, a table), "" otherwise (false and
// nil are the nil rules' business).
func notStringKind(r Return) string {
	switch {
	case r.Kind == ReturnBool:
		return "a comparison, true or false"
	case r.Kind == ReturnInt && r.Boolean:
		return "true"
	case r.Kind == ReturnArray || r.Table:
		return "a table"
	}
	return ""
}

// valueKind is the reply a Lua value gives, when its expression tells
// (ReturnUnknown otherwise), with its literal text for messages.
func valueKind(e ast.Expr) (ReturnKind, string) {
	switch x := e.(type) {
	case *ast.NilExpr, *ast.FalseExpr:
		return ReturnNil, ""
	case *ast.TrueExpr:
		return ReturnInt, ""
	case *ast.RelationalOpExpr, *ast.UnaryNotOpExpr:
		return ReturnBool, ""
	case *ast.ArithmeticOpExpr, *ast.UnaryLenOpExpr:
		return ReturnInt, "" // a number, truncated to an integer reply
	case *ast.UnaryMinusOpExpr:
		if n, ok := x.Expr.(*ast.NumberExpr); ok {
			return ReturnInt, "-" + n.Value
		}
		return ReturnInt, ""
	case *ast.StringConcatOpExpr:
		return ReturnString, ""
	case *ast.NumberExpr:
		return ReturnInt, x.Value
	case *ast.StringExpr:
		return ReturnString, strconv.Quote(x.Value)
	case *ast.TableExpr:
		return ReturnArray, ""
	}
	return ReturnUnknown, ""
}

// kindOf is valueKind, and also the reply of values whose kind their source
// tells: KEYS[n] and ARGV[n] hold strings whatever the @arg type, and the
// functions in stringFuncs and numberFuncs always give a string or a number
// (or nil: tonumber), which Redis replies as a string or an integer.
func (w *walker) kindOf(e ast.Expr) (ReturnKind, string) {
	switch x := e.(type) {
	case *ast.AttrGetExpr:
		id, ok := x.Object.(*ast.IdentExpr)
		if !ok || (id.Value != "KEYS" && id.Value != "ARGV") || w.isLocal(id.Value) {
			break
		}
		if _, named := x.Key.(*ast.StringExpr); named {
			break // ARGV.n is nil
		}
		return ReturnString, w.value(x).Text
	case *ast.FuncCallExpr:
		if x.Receiver != nil || len(x.Args) == 0 {
			break
		}
		name := ""
		if id, ok := x.Func.(*ast.IdentExpr); ok && !w.isLocal(id.Value) {
			name = id.Value
		} else if n, ok := w.libFunc(x); ok {
			name = n
		}
		switch {
		case stringFuncs[name]:
			return ReturnString, name + "(...)"
		case numberFuncs[name]:
			return ReturnInt, name + "(...)"
		case name == "pcall" || name == "xpcall":
			// Their first value, the one Redis replies, is whether the
			// function ran without an error.
			return ReturnBool, name + "(...)"
		}
	}
	return valueKind(e)
}

// oneResult reports whether e calls one of stringFuncs or numberFuncs,
// which give one value.
func (w *walker) oneResult(e *ast.FuncCallExpr) bool {
	k, _ := w.kindOf(e)
	return k != ReturnUnknown
}

// stringFuncs are the functions of Redis's Lua that always give a string.
var stringFuncs = map[string]bool{
	"tostring": true, "type": true, "string.format": true, "string.rep": true, "string.sub": true,
	"string.upper": true, "string.lower": true, "string.reverse": true, "string.char": true,
	"table.concat": true, "cjson.encode": true, "cmsgpack.pack": true,
	"redis.sha1hex": true, "struct.pack": true, "bit.tohex": true,
}

// numberFuncs are the functions of Redis's Lua that give a number (tonumber:
// or nil), which Redis replies as an integer.
var numberFuncs = map[string]bool{
	"tonumber": true, "string.len": true,
	"math.abs": true, "math.ceil": true, "math.floor": true, "math.fmod": true, "math.max": true,
	"math.min": true, "math.pow": true, "math.sqrt": true, "math.random": true,
	"bit.tobit": true, "bit.bnot": true, "bit.band": true, "bit.bor": true, "bit.bxor": true,
	"bit.lshift": true, "bit.rshift": true, "bit.arshift": true, "bit.rol": true, "bit.ror": true,
}

// stringLiteral is the string e is: a string literal, or a local that holds
// one string literal wherever the script assigns it (local GONE = 'GONE
// the order is gone'), as a literal written in its place.
func (w *walker) stringLiteral(e ast.Expr) (string, bool) {
	switch x := e.(type) {
	case *ast.StringExpr:
		return x.Value, true
	case *ast.IdentExpr:
		if lit, number, ok := w.literalLocal(x); ok && !number {
			return lit, true
		}
	}
	return "", false
}

// messageStart reads an error message: lit is the string literals it
// starts with, joined ('NOT_' .. 'HELD x'; ok is false when it starts with
// none), and joined what the message joins to them (see ErrorSite.Joined).
// str tells a string literal, or a local holding one only.
func messageStart(e ast.Expr, str func(ast.Expr) (string, bool)) (lit, joined string, ok bool) {
	if f, rest, ok := formatStart(e, str); ok {
		// string.format('CODE %d', n): the format's text up to its first
		// directive starts the message.
		if f == "" {
			return "", "", false
		}
		if rest {
			return f, "value", true
		}
		return f, "", true
	}
	ops := concatOps(e, nil)
	i := 0
	for ; i < len(ops); i++ {
		s, ok := str(ops[i])
		if !ok {
			break
		}
		lit += s
	}
	switch {
	case i == 0:
		return "", "", false
	case i == len(ops):
		return lit, "", true
	}
	if _, ok := ops[i].(*ast.NumberExpr); ok {
		return lit, "number", true
	}
	return lit, "value", true
}

// paramErr records an error reply (via) of the function being walked whose
// message msg reads one of its parameters before any value the walker cannot
// read: site is the index in File.ErrorSites of what was recorded of it
// (see paramErr).
func (w *walker) paramErr(msg ast.Expr, via string, site int) {
	if w.dry || len(w.fns) == 0 {
		return // (a loop's dry walk is walked again)
	}
	fn := w.fns[len(w.fns)-1]
	param := func(e ast.Expr) *local {
		id, ok := e.(*ast.IdentExpr)
		if !ok {
			return nil
		}
		if p, _ := w.lookup(id.Value); p != nil && p.paramOf == fn && p.aliasOf == nil && p.fn == w.depth {
			return p
		}
		return nil
	}
	var ops []msgOp
	if format, ok := formatOf(msg); ok {
		p := param(format)
		if p == nil {
			return
		}
		ops = []msgOp{{p: p, format: true}}
	} else {
		reads := false
		for _, e := range concatOps(msg, nil) {
			if s, ok := w.stringLiteral(e); ok {
				ops = append(ops, msgOp{lit: s})
				continue
			}
			if p := param(e); p != nil {
				ops = append(ops, msgOp{p: p})
				reads = true
				continue
			}
			other := "value"
			if _, ok := e.(*ast.NumberExpr); ok {
				other = "number"
			}
			ops = append(ops, msgOp{other: other})
			break
		}
		if !reads {
			return
		}
	}
	w.paramErrs = append(w.paramErrs, paramErr{fn: fn, ops: ops, via: via, site: site, conds: w.condsOf(fn)})
}

// settleParamErrs records, for each of paramErrs, the error reply each call
// of its function raises, at the call, with the message it passes there
// (local function fail(msg) return redis.error_reply(msg) end; fail('GONE
// ' .. k)); a call that fails the tests of the parameters holding there
// does not reach it. Once every call's message is read, what was recorded
// in the function is dropped. A function the script assigns again or uses
// as a value, or that assigns the parameter, may raise anything: its calls
// are not read.
func (w *walker) settleParamErrs() {
	drop := map[int]bool{}
	for _, pe := range w.paramErrs {
		calls := w.msgCalls[pe.fn]
		if len(calls) == 0 || w.escaped[pe.fn] || slices.ContainsFunc(pe.ops, func(op msgOp) bool { return op.p != nil && op.p.assigned }) {
			continue
		}
		// (Calls left out of msgCalls: made in a function never run, or
		// of a function whose name the script assigns.)
		all := len(calls) == len(w.fnCalls[pe.fn])
		for _, c := range calls {
			if !meets(c.args, pe.conds) {
				continue
			}
			lit, joined, ok := passedMessage(pe.ops, c.msgs)
			if !ok {
				all = false
				continue
			}
			w.f.ErrorSites = append(w.f.ErrorSites, ErrorSite{Pos: c.at, Text: lit, Via: pe.via, Joined: joined, Fn: c.name})
		}
		if all && pe.site >= 0 {
			drop[pe.site] = true
		}
	}
	if len(drop) > 0 {
		kept := w.f.ErrorSites[:0:0]
		for i, e := range w.f.ErrorSites {
			if !drop[i] {
				kept = append(kept, e)
			}
		}
		w.f.ErrorSites = kept
	}
}

// passedMessage reads the message ops with each parameter holding what
// msgs says a call passes it, as messageStart reads one written in place.
func passedMessage(ops []msgOp, msgs []msgArg) (lit, joined string, ok bool) {
	for i, op := range ops {
		switch {
		case op.p == nil && op.other == "":
			lit += op.lit
			continue
		case op.p == nil:
			return lit, op.other, i > 0
		}
		var m msgArg // (nothing passed: nil, no message)
		if op.p.param <= len(msgs) {
			m = msgs[op.p.param-1]
		}
		if op.format {
			if !m.isStr {
				return "", "", false
			}
			text, rest := formatText(m.str)
			if text == "" {
				return "", "", false
			}
			if rest {
				return text, "value", true
			}
			return text, "", true
		}
		if !m.ok {
			if i == 0 {
				return "", "", false
			}
			return lit, "value", true
		}
		lit += m.lit
		if m.joined != "" {
			return lit, m.joined, true
		}
	}
	return lit, "", true
}

// concatOps appends to ops the operands e concatenates, in order (e
// itself when it is no concatenation).
func concatOps(e ast.Expr, ops []ast.Expr) []ast.Expr {
	if c, ok := e.(*ast.StringConcatOpExpr); ok {
		return concatOps(c.Rhs, concatOps(c.Lhs, ops))
	}
	return append(ops, e)
}

// listed is how many values unpack gives of the table constructor t: its
// positional values, when it has nothing else and none of them may give
// another number (a call or ... last, which gives all its values; a nil,
// after which the length is not fixed); 0 otherwise.
func listed(t *ast.TableExpr) int {
	for i, f := range t.Fields {
		if f.Key != nil {
			return 0
		}
		switch f.Value.(type) {
		case *ast.NilExpr:
			return 0
		case *ast.FuncCallExpr, *ast.Comma3Expr:
			if i == len(t.Fields)-1 {
				return 0
			}
		}
	}
	return len(t.Fields)
}

// formatStart reads a call of string.format (or a literal's :format) with
// a literal format: the format's text before its first directive (%% is a
// '%'), and whether a directive follows. ok is false for any other
// expression.
func formatStart(e ast.Expr, str func(ast.Expr) (string, bool)) (text string, rest, ok bool) {
	format, ok := formatOf(e)
	if !ok {
		return "", false, false
	}
	fv, isStr := str(format)
	if !isStr {
		return "", false, false
	}
	text, rest = formatText(fv)
	return text, rest, true
}

// formatOf is the format of a call of string.format (or of a value's
// :format): ok is false for any other expression.
func formatOf(e ast.Expr) (format ast.Expr, ok bool) {
	c, isCall := e.(*ast.FuncCallExpr)
	if !isCall {
		return nil, false
	}
	if c.Receiver != nil {
		return c.Receiver, c.Method == "format"
	}
	if lib, fn, ok := libCall(c); !ok || lib != "string" || fn != "format" || len(c.Args) == 0 {
		return nil, false
	}
	return c.Args[0], true
}

// formatText is the text of the format fv before its first directive (%%
// is a '%'), and whether a directive follows.
func formatText(fv string) (text string, rest bool) {
	var b strings.Builder
	for i := 0; i < len(fv); i++ {
		if fv[i] != '%' {
			b.WriteByte(fv[i])
			continue
		}
		if i+1 < len(fv) && fv[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		return b.String(), true
	}
	return b.String(), false
}

// leadingLiteral returns the string literal an expression is, or starts with
// (for a concatenation).
func leadingLiteral(e ast.Expr) (string, bool) {
	for {
		switch x := e.(type) {
		case *ast.StringExpr:
			return x.Value, true
		case *ast.StringConcatOpExpr:
			e = x.Lhs
		default:
			return "", false
		}
	}
}

// argPositions returns the position of the first token of each argument of
// the call whose callee object is token ti (redis . call ( args )).
func (w *walker) argPositions(ti int) []Pos {
	if ti < 0 || ti+3 >= len(w.toks) || w.toks[ti+3].str != "(" {
		return nil
	}
	var out []Pos
	depth := 0
	expectArg := true
	for i := ti + 4; i < len(w.toks); i++ {
		t := w.toks[i]
		if expectArg && !(depth == 0 && t.str == ")") {
			out = append(out, Pos{t.line, t.col})
			expectArg = false
		}
		if t.typ == luaparse.TString || t.typ == luaparse.TNumber {
			continue
		}
		switch t.str {
		case "(", "[", "{":
			depth++
		case "]", "}":
			depth--
		case ")":
			if depth == 0 {
				return out
			}
			depth--
		case ",":
			if depth == 0 {
				expectArg = true
			}
		case "function", "if", "do":
			depth++
		case "end":
			depth--
		}
	}
	return out
}

// numberIs reports whether e is a number literal of value v.
func numberIs(e ast.Expr, v float64) bool {
	n, ok := e.(*ast.NumberExpr)
	if !ok {
		return false
	}
	if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
		return f == v
	}
	i, err := strconv.ParseInt(n.Value, 0, 64)
	return err == nil && float64(i) == v
}

// intLiteral reads e as an integer literal of at least least.
func intLiteral(e ast.Expr, least int) (int, bool) {
	n, ok := e.(*ast.NumberExpr)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(n.Value)
	return v, err == nil && v >= least
}

// isNumber reports whether e is a number literal.
func isNumber(e ast.Expr) bool {
	_, ok := e.(*ast.NumberExpr)
	return ok
}

// notString names an expression that is literally no string or number
// (nil, true, false, a comparison, a table, a function), "" for others.
func notString(e ast.Expr) string {
	switch e.(type) {
	case *ast.NilExpr:
		return "nil"
	case *ast.TrueExpr:
		return "true"
	case *ast.FalseExpr:
		return "false"
	case *ast.RelationalOpExpr, *ast.UnaryNotOpExpr:
		return "a comparison, true or false"
	case *ast.TableExpr:
		return "a table"
	case *ast.FunctionExpr:
		return "a function"
	}
	return ""
}
