package scriptlock

import (
	"go/ast"
	"go/parser"
	"go/token"
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
	opts := map[string]SharedOption{
		"WithLease":             WithLease(time.Second),
		"WithWatchdog":          WithWatchdog(time.Second, 100*time.Millisecond),
		"WithReleaseTimeout":    WithReleaseTimeout(time.Second),
		"WithFailoverGuard":     WithFailoverGuard(true, time.Second),
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
