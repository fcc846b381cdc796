package parse

import (
	"maps"

	"github.com/yuin/gopher-lua/ast"
)

// sureWalk finds the call expressions that every run of a chunk evaluates
// unless it fails first (see sureCalls).
type sureWalk struct {
	sure map[*ast.FuncCallExpr]bool
	// all are the expressions every run evaluates so, calls or not
	// (the operands of ARGV[3] + 1: see ElemOp.Sure).
	all map[ast.Expr]bool
	// funcs are the local functions in scope by name (local function f,
	// local f = function), of names the chunk never assigns: a call of
	// one runs its body.
	funcs map[string]*sureFunc
	// assigned are the names the chunk assigns anywhere (f = ...): such a
	// name may hold another function when called.
	assigned map[string]bool
	// walked are the functions whose bodies are walked already: another
	// call adds nothing (a recursive call, a helper called many times).
	walked map[*ast.FunctionExpr]bool
}

// sureFunc is a local function and the local functions in scope where it
// is written, which its body's names see.
type sureFunc struct {
	fn    *ast.FunctionExpr
	scope map[string]*sureFunc
}

// sureCalls adds to sure the call expressions that every run of the chunk
// evaluates unless it fails first: those of the chunk's own statements
// outside the branches of an if, the bodies of loops and the right of
// and/or, up to the first statement that may return, and those a call of
// a local function among them runs the same way in its body.
func sureCalls(chunk []ast.Stmt, sure map[*ast.FuncCallExpr]bool, all map[ast.Expr]bool) {
	w := sureWalk{sure: sure, all: all, funcs: map[string]*sureFunc{}, assigned: map[string]bool{}, walked: map[*ast.FunctionExpr]bool{}}
	assignedNamesIn(chunk, w.assigned)
	w.stmts(chunk)
}

// stmts walks list, a block of its own: the locals it declares end with
// it. It reports whether the statements may return.
func (w *sureWalk) stmts(list []ast.Stmt) bool {
	outer := w.funcs
	w.funcs = maps.Clone(outer)
	defer func() { w.funcs = outer }()
	for _, s := range list {
		switch x := s.(type) {
		case *ast.LocalAssignStmt:
			w.exprs(x.Exprs)
			for i, name := range x.Names {
				delete(w.funcs, name)
				if fn, ok := elemAt(x.Exprs, i).(*ast.FunctionExpr); ok && len(x.Names) == len(x.Exprs) && !w.assigned[name] {
					// (Its own name too: local function f may call f.)
					w.funcs[name] = &sureFunc{fn: fn, scope: w.funcs}
				}
			}
		case *ast.AssignStmt:
			w.exprs(x.Rhs)
			w.exprs(x.Lhs)
		case *ast.FuncCallStmt:
			w.exprs([]ast.Expr{x.Expr})
		case *ast.DoBlockStmt:
			if w.stmts(x.Stmts) {
				return true
			}
		case *ast.IfStmt:
			// (An elseif is an if in Else: its condition may not run.)
			w.exprs([]ast.Expr{x.Condition})
			if mayReturn(x.Then) || mayReturn(x.Else) {
				return true
			}
		case *ast.WhileStmt:
			w.exprs([]ast.Expr{x.Condition})
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.RepeatStmt:
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.NumberForStmt:
			w.exprs([]ast.Expr{x.Init, x.Limit, x.Step})
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.GenericForStmt:
			w.exprs(x.Exprs)
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.ReturnStmt:
			w.exprs(x.Exprs)
			return true
		case *ast.BreakStmt, *ast.GotoStmt:
			return true
		}
	}
	return false
}

func elemAt(list []ast.Expr, i int) ast.Expr {
	if i < len(list) {
		return list[i]
	}
	return nil
}

// mayReturn reports whether list holds a return (not in a function) or a
// jump out of it.
func mayReturn(list []ast.Stmt) bool {
	for _, s := range list {
		switch x := s.(type) {
		case *ast.ReturnStmt, *ast.GotoStmt:
			return true
		case *ast.DoBlockStmt:
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.IfStmt:
			if mayReturn(x.Then) || mayReturn(x.Else) {
				return true
			}
		case *ast.WhileStmt:
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.RepeatStmt:
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.NumberForStmt:
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.GenericForStmt:
			if mayReturn(x.Stmts) {
				return true
			}
		}
	}
	return false
}

// exprs adds to sure the calls that evaluating list evaluates whatever
// the values: not those on the right of and/or, nor in a function's body
// unless the function is a local one called there (f()), whose body then
// runs: a return in it ends the function, not the script.
func (w *sureWalk) exprs(list []ast.Expr) {
	for _, e := range list {
		if e != nil {
			w.all[e] = true
		}
		switch x := e.(type) {
		case nil:
		case *ast.FuncCallExpr:
			w.sure[x] = true
			w.exprs([]ast.Expr{x.Func, x.Receiver})
			w.exprs(x.Args)
			if id, ok := x.Func.(*ast.IdentExpr); ok && x.Receiver == nil {
				if f := w.funcs[id.Value]; f != nil && !w.walked[f.fn] {
					w.walked[f.fn] = true
					outer := w.funcs
					w.funcs = maps.Clone(f.scope)
					if f.fn.ParList != nil {
						for _, p := range f.fn.ParList.Names {
							delete(w.funcs, p) // a parameter hides a function of its name
						}
					}
					w.stmts(f.fn.Stmts)
					w.funcs = outer
				}
			}
		case *ast.LogicalOpExpr:
			w.exprs([]ast.Expr{x.Lhs})
		case *ast.AttrGetExpr:
			w.exprs([]ast.Expr{x.Object, x.Key})
		case *ast.TableExpr:
			for _, f := range x.Fields {
				w.exprs([]ast.Expr{f.Key, f.Value})
			}
		case *ast.RelationalOpExpr:
			w.exprs([]ast.Expr{x.Lhs, x.Rhs})
		case *ast.StringConcatOpExpr:
			w.exprs([]ast.Expr{x.Lhs, x.Rhs})
		case *ast.ArithmeticOpExpr:
			w.exprs([]ast.Expr{x.Lhs, x.Rhs})
		case *ast.UnaryMinusOpExpr:
			w.exprs([]ast.Expr{x.Expr})
		case *ast.UnaryNotOpExpr:
			w.exprs([]ast.Expr{x.Expr})
		case *ast.UnaryLenOpExpr:
			w.exprs([]ast.Expr{x.Expr})
		}
	}
}

// assignedNamesIn adds to names each name an assignment anywhere in list
// gives a value (f = ...), in its blocks and its functions' bodies too.
func assignedNamesIn(list []ast.Stmt, names map[string]bool) {
	inspect(list, func(s ast.Stmt) {
		switch x := s.(type) {
		case *ast.AssignStmt:
			for _, l := range x.Lhs {
				if id, ok := l.(*ast.IdentExpr); ok {
					names[id.Value] = true
				}
			}
		case *ast.FuncDefStmt:
			// (function f() end assigns f, a local of that name too.)
			if id, ok := x.Name.Func.(*ast.IdentExpr); ok && x.Name.Receiver == nil {
				names[id.Value] = true
			}
		}
	}, func(ast.Expr) {})
}

// funcAssigns are what a script assigns a local function's variable after
// its declaration: the functions (f = function ... end, function f() ...
// end), and whether anything else.
type funcAssigns struct {
	fns   []*ast.FunctionExpr
	other bool
}

// assignedFuncs are, for each local declared with a function (local
// function f, local f = function ... end), by that function, what list
// assigns that variable. An assignment is to the local of that name in
// scope where it is written: another of the same name (a parameter, a
// local of a function) is another variable.
func assignedFuncs(list []ast.Stmt) map[*ast.FunctionExpr]*funcAssigns {
	out := map[*ast.FunctionExpr]*funcAssigns{}
	// Each scope maps a local's name to the function it was declared
	// with, nil for a local declared with anything else.
	var scopes []map[string]*ast.FunctionExpr
	declare := func(name string, fn *ast.FunctionExpr) { scopes[len(scopes)-1][name] = fn }
	record := func(name string, rhs ast.Expr) {
		for i := len(scopes) - 1; i >= 0; i-- {
			decl, ok := scopes[i][name]
			if !ok {
				continue
			}
			if decl == nil {
				return
			}
			a := out[decl]
			if a == nil {
				a = &funcAssigns{}
				out[decl] = a
			}
			if fn, ok := rhs.(*ast.FunctionExpr); ok {
				a.fns = append(a.fns, fn)
			} else {
				a.other = true
			}
			return
		}
	}
	var block func(list []ast.Stmt, names []string, after func())
	fnBody := func(fn *ast.FunctionExpr, self bool) {
		var names []string
		if self {
			names = append(names, "self")
		}
		if fn.ParList != nil {
			names = append(names, fn.ParList.Names...)
		}
		block(fn.Stmts, names, nil)
	}
	// exprs walks the bodies of the functions written in list.
	exprs := func(list ...ast.Expr) {
		inspectShallow([]ast.Stmt{&ast.ReturnStmt{Exprs: list}}, func(ast.Stmt) {}, func(e ast.Expr) {
			if fn, ok := e.(*ast.FunctionExpr); ok {
				fnBody(fn, false)
			}
		})
	}
	block = func(list []ast.Stmt, names []string, after func()) {
		scopes = append(scopes, map[string]*ast.FunctionExpr{})
		for _, n := range names {
			declare(n, nil)
		}
		for _, s := range list {
			switch x := s.(type) {
			case *ast.LocalAssignStmt:
				if len(x.Names) == 1 && len(x.Exprs) == 1 {
					if fn, ok := x.Exprs[0].(*ast.FunctionExpr); ok {
						// local function f: f is in scope in its body (as
						// the walker takes local f = function too).
						declare(x.Names[0], fn)
						fnBody(fn, false)
						continue
					}
				}
				exprs(x.Exprs...)
				for i, n := range x.Names {
					var fn *ast.FunctionExpr
					if i < len(x.Exprs) {
						fn, _ = x.Exprs[i].(*ast.FunctionExpr)
					}
					declare(n, fn)
				}
			case *ast.AssignStmt:
				exprs(x.Lhs...)
				exprs(x.Rhs...)
				for i, l := range x.Lhs {
					if id, ok := l.(*ast.IdentExpr); ok {
						var rhs ast.Expr
						if i < len(x.Rhs) {
							rhs = x.Rhs[i]
						}
						record(id.Value, rhs)
					}
				}
			case *ast.FuncDefStmt:
				if id, ok := x.Name.Func.(*ast.IdentExpr); ok && x.Name.Receiver == nil {
					record(id.Value, x.Func)
				} else {
					exprs(x.Name.Func, x.Name.Receiver)
				}
				fnBody(x.Func, x.Name.Method != "")
			case *ast.FuncCallStmt:
				exprs(x.Expr)
			case *ast.DoBlockStmt:
				block(x.Stmts, nil, nil)
			case *ast.WhileStmt:
				exprs(x.Condition)
				block(x.Stmts, nil, nil)
			case *ast.RepeatStmt:
				// until sees the body's locals.
				block(x.Stmts, nil, func() { exprs(x.Condition) })
			case *ast.IfStmt:
				exprs(x.Condition)
				block(x.Then, nil, nil)
				block(x.Else, nil, nil)
			case *ast.NumberForStmt:
				exprs(x.Init, x.Limit, x.Step)
				block(x.Stmts, []string{x.Name}, nil)
			case *ast.GenericForStmt:
				exprs(x.Exprs...)
				block(x.Stmts, x.Names, nil)
			case *ast.ReturnStmt:
				exprs(x.Exprs...)
			}
		}
		if after != nil {
			after()
		}
		scopes = scopes[:len(scopes)-1]
	}
	block(list, nil, nil)
	return out
}

// protectedFuncs are the functions written as an argument of pcall or
// xpcall (pcall(function() ... end)), and the local functions (local
// function f) whose name the chunk reads only as such an argument
// (pcall(f)): an error in them is handed to the script, which goes on.
func protectedFuncs(chunk []ast.Stmt) map[*ast.FunctionExpr]bool {
	out := map[*ast.FunctionExpr]bool{}
	decls := map[string][]*ast.FunctionExpr{} // local functions by name
	reads, passed := map[string]int{}, map[string]int{}
	// The names declared local anywhere (local pcall = function(f) return
	// f() end, a parameter or a loop variable of that name): a pcall or
	// xpcall of such a name may be the script's own, which calls what it
	// is given unprotected.
	locals := map[string]bool{}
	inspect(chunk, func(s ast.Stmt) {
		switch x := s.(type) {
		case *ast.LocalAssignStmt:
			for i, name := range x.Names {
				locals[name] = true
				fn, isFn := elemAt(x.Exprs, i).(*ast.FunctionExpr)
				if !isFn {
					fn = nil
				}
				decls[name] = append(decls[name], fn)
			}
		case *ast.NumberForStmt:
			locals[x.Name] = true
		case *ast.GenericForStmt:
			for _, name := range x.Names {
				locals[name] = true
			}
		}
	}, func(e ast.Expr) {
		if fn, ok := e.(*ast.FunctionExpr); ok && fn.ParList != nil {
			for _, name := range fn.ParList.Names {
				locals[name] = true
			}
		}
	})
	inspect(chunk, func(ast.Stmt) {}, func(e ast.Expr) {
		if id, ok := e.(*ast.IdentExpr); ok {
			reads[id.Value]++
		}
		call, ok := e.(*ast.FuncCallExpr)
		if !ok || call.Receiver != nil {
			return
		}
		if id, ok := call.Func.(*ast.IdentExpr); !ok || id.Value != "pcall" && id.Value != "xpcall" || locals[id.Value] {
			return
		}
		for i, a := range call.Args {
			switch x := a.(type) {
			case *ast.FunctionExpr:
				out[x] = true
			case *ast.IdentExpr:
				if i == 0 {
					passed[x.Value]++
				}
			}
		}
	})
	assigned := map[string]bool{}
	assignedNamesIn(chunk, assigned)
	for name, fns := range decls {
		// One declaration of the name, a function, never assigned, and
		// every read of it the function pcall calls.
		if len(fns) == 1 && fns[0] != nil && !assigned[name] && passed[name] > 0 && passed[name] == reads[name] {
			out[fns[0]] = true
		}
	}
	for fn := range maps.Clone(out) {
		protectedNested(fn, out)
	}
	// And those whose every read is that or a call in the body of a
	// protected function (pcall(function() return f() end)), until no more
	// are found.
	for changed := true; changed; {
		changed = false
		inside := map[string]int{}
		for fn := range out {
			inspectShallow(fn.Stmts, func(ast.Stmt) {}, func(e ast.Expr) {
				if c, ok := e.(*ast.FuncCallExpr); ok && c.Receiver == nil {
					if id, ok := c.Func.(*ast.IdentExpr); ok {
						inside[id.Value]++
					}
				}
			})
		}
		for name, fns := range decls {
			if n := passed[name] + inside[name]; len(fns) == 1 && fns[0] != nil && !out[fns[0]] && !assigned[name] && n > 0 && n == reads[name] {
				out[fns[0]] = true
				protectedNested(fns[0], out)
				changed = true
			}
		}
	}
	return out
}

// unreachedFuncs are the local functions the script never runs: declared
// once (local function f, local f = function), never assigned, and read
// nowhere but in their own bodies or those of other such functions; and the
// functions written in theirs. One walk from the chunk through the bodies
// of the functions it reaches, each once: linear, and the same whatever
// the order of the maps.
func unreachedFuncs(chunk []ast.Stmt) map[*ast.FunctionExpr]bool {
	decls := map[string][]*ast.FunctionExpr{}
	inspect(chunk, func(s ast.Stmt) {
		if x, ok := s.(*ast.LocalAssignStmt); ok {
			for i, name := range x.Names {
				fn, _ := elemAt(x.Exprs, i).(*ast.FunctionExpr)
				decls[name] = append(decls[name], fn)
			}
		}
	}, func(e ast.Expr) {
		// (A parameter of the name is another local.)
		if fn, ok := e.(*ast.FunctionExpr); ok && fn.ParList != nil {
			for _, name := range fn.ParList.Names {
				decls[name] = append(decls[name], nil)
			}
		}
	})
	assigned := map[string]bool{}
	assignedNamesIn(chunk, assigned)
	// named are the functions that run only where their name is read; any
	// other runs, for all the checker knows, where the code writing it
	// does.
	named := map[string]*ast.FunctionExpr{}
	isNamed := map[*ast.FunctionExpr]bool{}
	for name, fns := range decls {
		if len(fns) == 1 && fns[0] != nil && !assigned[name] {
			named[name], isNamed[fns[0]] = fns[0], true
		}
	}
	live := map[*ast.FunctionExpr]bool{}
	pending := [][]ast.Stmt{chunk}
	for len(pending) > 0 {
		list := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		inspectShallow(list, func(ast.Stmt) {}, func(e ast.Expr) {
			var fn *ast.FunctionExpr
			switch x := e.(type) {
			case *ast.IdentExpr:
				fn = named[x.Value]
			case *ast.FunctionExpr:
				if !isNamed[x] {
					fn = x
				}
			}
			if fn != nil && !live[fn] {
				live[fn] = true
				pending = append(pending, fn.Stmts)
			}
		})
	}
	out := map[*ast.FunctionExpr]bool{}
	inspect(chunk, func(ast.Stmt) {}, func(e ast.Expr) {
		if fn, ok := e.(*ast.FunctionExpr); ok && !live[fn] {
			out[fn] = true
		}
	})
	return out
}

// protectedNested adds to out the local functions written in the body of
// fn, a protected function, that the body reads only as the function of a
// call (local function g() ... end; g()): they run within fn's call. Other
// functions written there (returned, stored, passed on) may run after it,
// unprotected: pcall(function() return function() ... end end).
func protectedNested(fn *ast.FunctionExpr, out map[*ast.FunctionExpr]bool) {
	decls := map[string][]*ast.FunctionExpr{}
	reads, called := map[string]int{}, map[string]int{}
	// Reads anywhere in the body, in its functions too; calls in the body
	// itself only (one in a function that escapes runs unprotected).
	inspect(fn.Stmts, func(ast.Stmt) {}, func(e ast.Expr) {
		if id, ok := e.(*ast.IdentExpr); ok {
			reads[id.Value]++
		}
	})
	inspectShallow(fn.Stmts, func(s ast.Stmt) {
		if x, ok := s.(*ast.LocalAssignStmt); ok {
			for i, name := range x.Names {
				g, _ := elemAt(x.Exprs, i).(*ast.FunctionExpr)
				decls[name] = append(decls[name], g)
			}
		}
	}, func(e ast.Expr) {
		if c, ok := e.(*ast.FuncCallExpr); ok && c.Receiver == nil {
			if id, ok := c.Func.(*ast.IdentExpr); ok {
				called[id.Value]++
			}
		}
	})
	assigned := map[string]bool{}
	assignedNamesIn(fn.Stmts, assigned)
	for name, gs := range decls {
		if g := gs[0]; len(gs) == 1 && g != nil && !assigned[name] && reads[name] == called[name] && !out[g] {
			out[g] = true
			protectedNested(g, out)
		}
	}
}

// protectedCalls adds to protected the call expressions in the body of a
// function that protectedFuncs finds: an error there is handed to the
// script, which goes on.
func protectedCalls(chunk []ast.Stmt, protected map[*ast.FuncCallExpr]bool) {
	for fn := range protectedFuncs(chunk) {
		// (A function written there is protected on its own or not.)
		inspectShallow(fn.Stmts, func(ast.Stmt) {}, func(e ast.Expr) {
			if c, ok := e.(*ast.FuncCallExpr); ok {
				protected[c] = true
			}
		})
	}
}

// inspect calls stmt for each statement of list and expr for each
// expression, in its blocks and its functions' bodies too.
func inspect(list []ast.Stmt, stmt func(ast.Stmt), expr func(ast.Expr)) {
	inspectFuncs(list, stmt, expr, true)
}

// inspectShallow is inspect, not in the bodies of the functions written in
// list (expr sees the function itself).
func inspectShallow(list []ast.Stmt, stmt func(ast.Stmt), expr func(ast.Expr)) {
	inspectFuncs(list, stmt, expr, false)
}

func inspectFuncs(list []ast.Stmt, stmt func(ast.Stmt), expr func(ast.Expr), bodies bool) {
	var exprs func([]ast.Expr)
	var stmts func([]ast.Stmt)
	exprs = func(list []ast.Expr) {
		for _, e := range list {
			if e == nil {
				continue
			}
			expr(e)
			switch x := e.(type) {
			case *ast.FunctionExpr:
				if bodies {
					stmts(x.Stmts)
				}
			case *ast.FuncCallExpr:
				exprs(append([]ast.Expr{x.Func, x.Receiver}, x.Args...))
			case *ast.LogicalOpExpr:
				exprs([]ast.Expr{x.Lhs, x.Rhs})
			case *ast.AttrGetExpr:
				exprs([]ast.Expr{x.Object, x.Key})
			case *ast.TableExpr:
				for _, f := range x.Fields {
					exprs([]ast.Expr{f.Key, f.Value})
				}
			case *ast.RelationalOpExpr:
				exprs([]ast.Expr{x.Lhs, x.Rhs})
			case *ast.StringConcatOpExpr:
				exprs([]ast.Expr{x.Lhs, x.Rhs})
			case *ast.ArithmeticOpExpr:
				exprs([]ast.Expr{x.Lhs, x.Rhs})
			case *ast.UnaryMinusOpExpr:
				exprs([]ast.Expr{x.Expr})
			case *ast.UnaryNotOpExpr:
				exprs([]ast.Expr{x.Expr})
			case *ast.UnaryLenOpExpr:
				exprs([]ast.Expr{x.Expr})
			}
		}
	}
	stmts = func(list []ast.Stmt) {
		for _, s := range list {
			stmt(s)
			switch x := s.(type) {
			case *ast.AssignStmt:
				exprs(x.Lhs)
				exprs(x.Rhs)
			case *ast.LocalAssignStmt:
				exprs(x.Exprs)
			case *ast.FuncCallStmt:
				exprs([]ast.Expr{x.Expr})
			case *ast.DoBlockStmt:
				stmts(x.Stmts)
			case *ast.IfStmt:
				exprs([]ast.Expr{x.Condition})
				stmts(x.Then)
				stmts(x.Else)
			case *ast.WhileStmt:
				exprs([]ast.Expr{x.Condition})
				stmts(x.Stmts)
			case *ast.RepeatStmt:
				exprs([]ast.Expr{x.Condition})
				stmts(x.Stmts)
			case *ast.NumberForStmt:
				exprs([]ast.Expr{x.Init, x.Limit, x.Step})
				stmts(x.Stmts)
			case *ast.GenericForStmt:
				exprs(x.Exprs)
				stmts(x.Stmts)
			case *ast.FuncDefStmt:
				exprs([]ast.Expr{x.Func})
			case *ast.ReturnStmt:
				exprs(x.Exprs)
			}
		}
	}
	stmts(list)
}
