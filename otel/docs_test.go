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
