package scriptlockotel_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/scriptlock/scriptlock"
)

// docs/operations.md lists every value of scriptlock.primitive the metrics
// carry.
func TestDocumentedPrimitives(t *testing.T) {
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)Attribute keys are `scriptlock.primitive` \\((.*?)\\)").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/operations.md: no list of scriptlock.primitive values")
	}
	for _, p := range []scriptlock.Primitive{scriptlock.PrimitiveMutex, scriptlock.PrimitiveFairMutex, scriptlock.PrimitiveLeanMutex,
		scriptlock.PrimitiveRWRead, scriptlock.PrimitiveRWWrite, scriptlock.PrimitiveSemaphore, scriptlock.PrimitivePermitSemaphore} {
		if !regexp.MustCompile("`" + string(p) + "`").Match(m[1]) {
			t.Errorf("docs/operations.md: scriptlock.primitive %q is not listed in (%s)", p, m[1])
		}
	}
}

// docs/operations.md's metric table names every instrument New creates, with
// its unit, and no other.
func TestDocumentedMetrics(t *testing.T) {
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("otel.go")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(scriptlock\\.[a-z_.]+)` \\| ([^|]+?) \\|").FindAllSubmatch(doc, -1) {
		documented[string(m[1])] = string(m[2])
	}
	made := map[string]string{}
	for _, m := range regexp.MustCompile(`"(scriptlock\.[a-z_.]+)",\s*(?:metric\.WithUnit\()?"([^"]+)"`).FindAllSubmatch(src, -1) {
		made[string(m[1])] = string(m[2])
	}
	if len(made) < 10 {
		t.Fatalf("found %d instruments in otel.go; the pattern no longer matches how they are made", len(made))
	}
	for name, unit := range made {
		if d, ok := documented[name]; !ok {
			t.Errorf("docs/operations.md: no row for the metric %s", name)
		} else if d != unit {
			t.Errorf("docs/operations.md: %s has unit %q, the instrument %q", name, d, unit)
		}
	}
	for name := range documented {
		if _, ok := made[name]; !ok {
			t.Errorf("docs/operations.md: metric %s is not made by New", name)
		}
	}
}
