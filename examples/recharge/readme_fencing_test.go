package recharge_test

import (
	"database/sql"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// snippetStmt is one database call of the README's Fencing snippet.
type snippetStmt struct {
	method string   // QueryRowContext or ExecContext
	query  string   // the SQL, as the README shows it
	args   []string // the names passed after it: token, id
}

var fencingBlock = regexp.MustCompile("(?ms)^### Fencing\n.*?^```go\n(.*?)^```")

// fencingSnippet returns the database calls of the Go block under the
// README's "### Fencing" heading, in order, so that the test below runs the
// SQL a reader copies and cannot drift from it.
func fencingSnippet(t *testing.T) []snippetStmt {
	t.Helper()
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := fencingBlock.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md: no Go block under ### Fencing")
	}
	code := string(m[1])
	f, err := parser.ParseFile(token.NewFileSet(), "README.md", "package p\nfunc f() {\n"+code+"\n}\n", 0)
	if err != nil {
		t.Fatalf("README.md, Fencing: %v", err)
	}
	var stmts []snippetStmt
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "db" {
			return true
		}
		if sel.Sel.Name != "QueryRowContext" && sel.Sel.Name != "ExecContext" {
			t.Fatalf("README.md, Fencing: db.%s: the test knows QueryRowContext and ExecContext", sel.Sel.Name)
		}
		if len(call.Args) < 2 {
			t.Fatalf("README.md, Fencing: db.%s with %d arguments", sel.Sel.Name, len(call.Args))
		}
		lit, ok := call.Args[1].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Fatalf("README.md, Fencing: db.%s: the query is no string literal", sel.Sel.Name)
		}
		q, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		s := snippetStmt{method: sel.Sel.Name, query: q}
		for _, a := range call.Args[2:] {
			id, ok := a.(*ast.Ident)
			if !ok || (id.Name != "token" && id.Name != "id") {
				t.Fatalf("README.md, Fencing: db.%s passes an argument other than token and id", sel.Sel.Name)
			}
			s.args = append(s.args, id.Name)
		}
		stmts = append(stmts, s)
		return true
	})
	if len(stmts) == 0 || stmts[len(stmts)-1].method != "ExecContext" {
		t.Fatalf("README.md, Fencing: the snippet should end with the write, db.ExecContext; found %+v", stmts)
	}
	return stmts
}

// TestREADMEFencingSnippetShownInLocksDoc: docs/locks.md shows the same SQL
// as the README's Fencing section.
func TestREADMEFencingSnippetShownInLocksDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "locks.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fencingSnippet(t) {
		if !strings.Contains(string(doc), "`"+s.query+"`") {
			t.Errorf("docs/locks.md does not show the README's fencing statement %q", s.query)
		}
	}
}

// TestREADMEFencingSnippet runs the SQL of the README's Fencing section on
// PostgreSQL, with real locks, for a holder paused past its lease: its late
// write must change nothing, whether it comes after the next holder's write
// or between the next holder's read and its write; the order is paid once.
func TestREADMEFencingSnippet(t *testing.T) {
	stmts := fencingSnippet(t)
	read, write := stmts[:len(stmts)-1], stmts[len(stmts)-1]
	const id = int64(42)
	for _, tc := range []struct {
		name string
		// lateFirst: the paused holder writes between the next holder's
		// read and its write, else after the next holder's write.
		lateFirst bool
	}{
		{"late write between the next holder's read and write", true},
		{"late write after the next holder's write", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db, err := sql.Open("pgx", postgres.Get(t).NewDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(ctx, `CREATE TABLE orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, fence BIGINT NOT NULL DEFAULT 0);
				INSERT INTO orders (id, status) VALUES (42, 'unpaid')`); err != nil {
				t.Fatal(err)
			}
			exec := func(s snippetStmt, tok int64) (string, int64) {
				var args []any
				for _, a := range s.args {
					if a == "token" {
						args = append(args, tok)
					} else {
						args = append(args, id)
					}
				}
				// A paused process does not see its lock context end: it
				// runs its statements anyway.
				if s.method == "QueryRowContext" {
					var status string
					err := db.QueryRowContext(ctx, s.query, args...).Scan(&status)
					if errors.Is(err, sql.ErrNoRows) {
						return "", 0
					}
					if err != nil {
						t.Fatalf("%s: %v", s.query, err)
					}
					return status, 1
				}
				res, err := db.ExecContext(ctx, s.query, args...)
				if err != nil {
					t.Fatalf("%s: %v", s.query, err)
				}
				n, err := res.RowsAffected()
				if err != nil {
					t.Fatal(err)
				}
				return "", n
			}
			// readOrder runs the snippet up to its write and returns the
			// status the holder read: the snippet's own, or, for a snippet
			// that reads nothing, a plain read as its reader would add.
			readOrder := func(tok int64) string {
				status, seen := "", false
				for _, s := range read {
					if st, n := exec(s, tok); s.method == "QueryRowContext" && n > 0 {
						status, seen = st, true
					}
				}
				if !seen {
					if err := db.QueryRowContext(ctx, `SELECT status FROM orders WHERE id = $1`, id).Scan(&status); err != nil {
						t.Fatal(err)
					}
				}
				return status
			}

			locks, err := scriptlock.New(redistest.Server(t).Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			defer locks.Close()
			a, err := locks.Mutex("order:42", scriptlock.WithLease(300*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			actx, err := a.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ta, _ := scriptlock.Fence(actx)
			if st := readOrder(ta); st != "unpaid" {
				t.Fatalf("A read %q", st)
			}
			// A pauses past its lease (GC, a stalled VM); B takes the lock.
			b, err := locks.Mutex("order:42")
			if err != nil {
				t.Fatal(err)
			}
			bctx, err := b.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Unlock(bctx)
			tb, _ := scriptlock.Fence(bctx)
			if st := readOrder(tb); st != "unpaid" {
				t.Fatalf("B read %q", st)
			}
			var na, nb int64
			if tc.lateFirst {
				_, na = exec(write, ta)
				_, nb = exec(write, tb)
			} else {
				_, nb = exec(write, tb)
				_, na = exec(write, ta)
			}
			t.Logf("A (token %d, lease ended) wrote %d row(s); B (token %d) wrote %d row(s)", ta, na, tb, nb)
			if na != 0 || nb != 1 {
				t.Errorf("the README's fencing snippet: the paused holder's late write updated %d row(s), the current holder's %d; want 0 and 1", na, nb)
			}
			var status string
			if err := db.QueryRowContext(ctx, `SELECT status FROM orders WHERE id = $1`, id).Scan(&status); err != nil {
				t.Fatal(err)
			}
			if status != "paid" {
				t.Errorf("order status %q after both writes; want paid", status)
			}
		})
	}
}
