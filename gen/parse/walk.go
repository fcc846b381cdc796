package parse

import (
	"bytes"
	"strconv"

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
}

type identKey struct {
	line int
	name string
}

// identPos finds the column of the next occurrence of identifier name on line.
func (w *walker) identPos(line int, name string) (Pos, int) {
	if w.seen == nil {
		w.seen = map[identKey]int{}
	}
	k := identKey{line, name}
	n := w.seen[k]
	w.seen[k] = n + 1
	first, count := -1, 0
	for i, t := range w.toks {
		if t.line != line || t.typ != luaparse.TIdent || t.str != name || !w.isReference(i) {
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

func (w *walker) stmts(list []ast.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

func (w *walker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		w.exprs(s.Lhs)
		w.exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		w.exprs(s.Exprs)
	case *ast.FuncCallStmt:
		w.expr(s.Expr)
	case *ast.DoBlockStmt:
		w.stmts(s.Stmts)
	case *ast.WhileStmt:
		w.expr(s.Condition)
		w.stmts(s.Stmts)
	case *ast.RepeatStmt:
		w.stmts(s.Stmts)
		w.expr(s.Condition)
	case *ast.IfStmt:
		w.expr(s.Condition)
		w.stmts(s.Then)
		w.stmts(s.Else)
	case *ast.NumberForStmt:
		w.expr(s.Init)
		w.expr(s.Limit)
		w.expr(s.Step)
		w.stmts(s.Stmts)
	case *ast.GenericForStmt:
		w.exprs(s.Exprs)
		w.stmts(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			w.expr(s.Name.Func)
			w.expr(s.Name.Receiver)
		}
		if s.Func != nil {
			w.stmts(s.Func.Stmts)
		}
	case *ast.ReturnStmt:
		w.exprs(s.Exprs)
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
		if e.Value == "KEYS" || e.Value == "ARGV" {
			pos, _ := w.identPos(e.Line(), e.Value)
			w.addUse(e.Value, Use{Pos: pos, Bare: true})
		}
	case *ast.AttrGetExpr:
		if id, ok := e.Object.(*ast.IdentExpr); ok && (id.Value == "KEYS" || id.Value == "ARGV") {
			pos, _ := w.identPos(id.Line(), id.Value)
			u := Use{Pos: pos}
			if num, ok := e.Key.(*ast.NumberExpr); ok {
				if n, err := strconv.Atoi(num.Value); err == nil && n > 0 {
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
		w.expr(e.Object)
		w.expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			w.expr(f.Key)
			w.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		w.call(e)
		w.expr(e.Func)
		w.expr(e.Receiver)
		w.exprs(e.Args)
	case *ast.LogicalOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.StringConcatOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		w.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		w.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		w.expr(e.Expr)
	case *ast.FunctionExpr:
		w.stmts(e.Stmts)
	}
}

func (w *walker) addUse(table string, u Use) {
	if table == "KEYS" {
		w.f.Keys = append(w.f.Keys, u)
	} else {
		w.f.Argv = append(w.f.Argv, u)
	}
}

// call records redis.call / redis.pcall (and server.call / server.pcall)
// sites whose command name is a string literal.
func (w *walker) call(e *ast.FuncCallExpr) {
	attr, ok := e.Func.(*ast.AttrGetExpr)
	if !ok {
		return
	}
	obj, ok := attr.Object.(*ast.IdentExpr)
	if !ok || (obj.Value != "redis" && obj.Value != "server") {
		return
	}
	key, ok := attr.Key.(*ast.StringExpr)
	if !ok || (key.Value != "call" && key.Value != "pcall") {
		return
	}
	pos, ti := w.identPos(obj.Line(), obj.Value)
	if len(e.Args) == 0 {
		return
	}
	cmd, ok := e.Args[0].(*ast.StringExpr)
	if !ok {
		return
	}
	argPos := w.argPositions(ti)
	c := Call{Pos: pos, Func: obj.Value + "." + key.Value, Command: cmd.Value}
	for i, a := range e.Args[1:] {
		arg := Arg{Pos: pos}
		if i+1 < len(argPos) {
			arg.Pos = argPos[i+1]
		}
		if lit, ok := leadingLiteral(a); ok {
			arg.Literal = &lit
		}
		c.Args = append(c.Args, arg)
	}
	w.f.Calls = append(w.f.Calls, c)
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
