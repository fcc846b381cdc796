package scriptlock

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestOptionDocsNameTheirKinds: the doc comment of each SharedOption ends
// with the kinds of handle it applies to ("For Mutex, FairMutex and
// RWMutex.", "For every kind but CountDownLatch.", "For FairMutex only."),
// and that list is the one the handle constructors accept.
func TestOptionDocsNameTheirKinds(t *testing.T) {
	t.Parallel()
	opts := map[string]SharedOption{
		"WithLease":             WithLease(time.Second),
		"WithWatchdog":          WithWatchdog(time.Second, 100*time.Millisecond),
		"WithReleaseTimeout":    WithReleaseTimeout(time.Second),
		"WithFailoverGuard":     WithFailoverGuard(true, time.Second),
		"WithGuardReplicas":     WithGuardReplicas(2),
		"WithFenceIdle":         WithFenceIdle(time.Hour),
		"WithWaiterTimeout":     WithWaiterTimeout(time.Second),
		"WithRedissonFairQueue": WithRedissonFairQueue(0),
		"WithFencing":           WithFencing(),
	}
	names := map[string]kind{
		"Mutex": kindMutex, "FairMutex": kindFairMutex, "RWMutex": kindRWMutex,
		"LeanMutex": kindLeanMutex, "RedLock": kindRedLock, "Semaphore": kindSemaphore,
		"PermitSemaphore": kindPermitSemaphore, "CountDownLatch": kindLatch,
	}
	var all kind
	for _, k := range names {
		all |= k
	}
	docs := map[string]string{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && opts[fd.Name.Name] != nil && fd.Doc != nil {
				docs[fd.Name.Name] = strings.Join(strings.Fields(fd.Doc.Text()), " ")
			}
		}
	}
	forRe := regexp.MustCompile(`For (?:every kind but )?[A-Z][^.;]*[.;]`)
	word := regexp.MustCompile(`\b[A-Z][A-Za-z]*\b`)
	for name, o := range opts {
		doc, ok := docs[name]
		if !ok {
			t.Errorf("%s: no doc comment found", name)
			continue
		}
		m := forRe.FindString(doc)
		if m == "" {
			t.Errorf("%s: the doc comment does not say which kinds it is for (\"For Mutex, ...\")", name)
			continue
		}
		var documented kind
		for _, w := range word.FindAllString(strings.TrimPrefix(m, "For "), -1) {
			documented |= names[w]
		}
		if strings.HasPrefix(m, "For every kind but ") {
			documented = all &^ documented
		}
		var accepted kind
		for _, k := range names {
			c := defaultConfig()
			o.applyLock(&c, k)
			if c.err == nil {
				accepted |= k
			}
		}
		if documented != accepted {
			var miss, extra []string
			for n, k := range names {
				switch {
				case accepted&k != 0 && documented&k == 0:
					miss = append(miss, n)
				case accepted&k == 0 && documented&k != 0:
					extra = append(extra, n)
				}
			}
			t.Errorf("%s: doc says %q; accepted but not named: %v; named but refused: %v", name, m, miss, extra)
		}
	}
}

// TestOptionsTableInLocksDoc: the options table of docs/locks.md marks, for
// each SharedOption, exactly the kinds of handle whose constructors accept it.
func TestOptionsTableInLocksDoc(t *testing.T) {
	t.Parallel()
	opts := map[string]SharedOption{
		"WithLease":             WithLease(time.Second),
		"WithWatchdog":          WithWatchdog(time.Second, 100*time.Millisecond),
		"WithReleaseTimeout":    WithReleaseTimeout(time.Second),
		"WithFailoverGuard":     WithFailoverGuard(true, time.Second),
		"WithGuardReplicas":     WithGuardReplicas(2),
		"WithFenceIdle":         WithFenceIdle(time.Hour),
		"WithWaiterTimeout":     WithWaiterTimeout(time.Second),
		"WithRedissonFairQueue": WithRedissonFairQueue(0),
		"WithFencing":           WithFencing(),
	}
	names := map[string]kind{
		"Mutex": kindMutex, "FairMutex": kindFairMutex, "RWMutex": kindRWMutex,
		"LeanMutex": kindLeanMutex, "RedLock": kindRedLock, "Semaphore": kindSemaphore,
		"PermitSemaphore": kindPermitSemaphore, "CountDownLatch": kindLatch,
	}
	text, err := os.ReadFile(filepath.Join("docs", "locks.md"))
	if err != nil {
		t.Fatal(err)
	}
	var header []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(text), "\n") {
		if !strings.HasPrefix(line, "|") {
			header = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "option" {
			header = cells
			continue
		}
		if header == nil || strings.HasPrefix(cells[0], "---") {
			continue
		}
		for _, name := range regexp.MustCompile("`(With[A-Za-z]+)`").FindAllStringSubmatch(cells[0], -1) {
			o, ok := opts[name[1]]
			if !ok {
				t.Errorf("docs/locks.md options table: %s is no SharedOption this test knows", name[1])
				continue
			}
			seen[name[1]] = true
			for i, col := range header[1:] {
				k, ok := names[col]
				if !ok {
					t.Fatalf("docs/locks.md options table: unknown column %q", col)
				}
				c := defaultConfig()
				o.applyLock(&c, k)
				marked := i+1 < len(cells) && cells[i+1] != ""
				if accepted := c.err == nil; accepted != marked {
					t.Errorf("docs/locks.md options table: %s for %s marked %v, but %s's constructor accepts it: %v", name[1], col, marked, col, accepted)
				}
			}
		}
	}
	for name := range opts {
		if !seen[name] {
			t.Errorf("docs/locks.md options table: no row for %s", name)
		}
	}
}
