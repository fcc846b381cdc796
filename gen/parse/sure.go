package parse

import "github.com/yuin/gopher-lua/ast"

// sureCalls adds to sure the call expressions that every run of the chunk
// evaluates unless it fails first: those of the chunk's own statements (not
// a function's) outside the branches of an if, the bodies of loops and the
// right of and/or, up to the first statement that may return. It reports
// whether the statements may return.
func sureCalls(list []ast.Stmt, sure map[*ast.FuncCallExpr]bool) bool {
	for _, s := range list {
		switch x := s.(type) {
		case *ast.LocalAssignStmt:
			sureExprs(x.Exprs, sure)
		case *ast.AssignStmt:
			sureExprs(x.Rhs, sure)
			sureExprs(x.Lhs, sure)
		case *ast.FuncCallStmt:
			sureExprs([]ast.Expr{x.Expr}, sure)
		case *ast.DoBlockStmt:
			if sureCalls(x.Stmts, sure) {
				return true
			}
		case *ast.IfStmt:
			// (An elseif is an if in Else: its condition may not run.)
			sureExprs([]ast.Expr{x.Condition}, sure)
			if mayReturn(x.Then) || mayReturn(x.Else) {
				return true
			}
		case *ast.WhileStmt:
			sureExprs([]ast.Expr{x.Condition}, sure)
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.RepeatStmt:
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.NumberForStmt:
			sureExprs([]ast.Expr{x.Init, x.Limit, x.Step}, sure)
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.GenericForStmt:
			sureExprs(x.Exprs, sure)
			if mayReturn(x.Stmts) {
				return true
			}
		case *ast.ReturnStmt:
			sureExprs(x.Exprs, sure)
			return true
		case *ast.BreakStmt, *ast.GotoStmt:
			return true
		}
	}
	return false
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

// sureExprs adds to sure the calls that evaluating list evaluates whatever
// the values: not those on the right of and/or, nor in a function's body.
func sureExprs(list []ast.Expr, sure map[*ast.FuncCallExpr]bool) {
	for _, e := range list {
		switch x := e.(type) {
		case nil:
		case *ast.FuncCallExpr:
			sure[x] = true
			sureExprs([]ast.Expr{x.Func, x.Receiver}, sure)
			sureExprs(x.Args, sure)
		case *ast.LogicalOpExpr:
			sureExprs([]ast.Expr{x.Lhs}, sure)
		case *ast.AttrGetExpr:
			sureExprs([]ast.Expr{x.Object, x.Key}, sure)
		case *ast.TableExpr:
			for _, f := range x.Fields {
				sureExprs([]ast.Expr{f.Key, f.Value}, sure)
			}
		case *ast.RelationalOpExpr:
			sureExprs([]ast.Expr{x.Lhs, x.Rhs}, sure)
		case *ast.StringConcatOpExpr:
			sureExprs([]ast.Expr{x.Lhs, x.Rhs}, sure)
		case *ast.ArithmeticOpExpr:
			sureExprs([]ast.Expr{x.Lhs, x.Rhs}, sure)
		case *ast.UnaryMinusOpExpr:
			sureExprs([]ast.Expr{x.Expr}, sure)
		case *ast.UnaryNotOpExpr:
			sureExprs([]ast.Expr{x.Expr}, sure)
		case *ast.UnaryLenOpExpr:
			sureExprs([]ast.Expr{x.Expr}, sure)
		}
	}
}
