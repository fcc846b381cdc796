package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Another program's hash under the name is no lock: inspect lists its
// fields as fields, not as holders holding it exclusively.
func TestInspectHashThatIsNoLockHasNoHolders(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	if err := d.rc.Do(ctx, d.rc.B().Hset().Key(prefix+"session").FieldValue().FieldValue("user", "alice").
		FieldValue("ip", "10.0.0.1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	r := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "session")
	if r.code != exitOK || strings.Contains(r.out, "HOLDER") || strings.Contains(r.out, "exclusive") ||
		!regexp.MustCompile(`\nFIELDS +2\n`).MatchString(r.out) || !strings.Contains(r.out, "\nuser\n") {
		t.Errorf("inspect: exit %d; another program's hash fields shown as holders, or not as its 2 fields:\n%s", r.code, r.out)
	}
}
