package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An empty NAME is refused (exit 2) also with --key-prefix: no lock has an
// empty name (a Client refuses one), and a script's unset variable
// (force-unlock --key-prefix app: "$NAME") took the prefix alone for the key,
// deleting the lock named "app:" instead.
func TestEmptyNameWithPrefixRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t) + ":"
	c := newClient(t, d.rc, "") // a lock whose name is the prefix itself
	m := mustMutex(t, c, prefix)
	if _, err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"force-unlock", "--yes", "--key-prefix", prefix, ""},
		{"inspect", "--key-prefix", prefix, ""},
		{"watch", "--key-prefix", prefix, ""},
	} {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second) // watch runs until it ends
		r := cli(cctx, d, "", args...)
		cancel()
		if r.code != exitUsage || !strings.Contains(r.errOut, "empty name") {
			t.Errorf("%q: exit %d, want %d (empty name)\n%s%s", args, r.code, exitUsage, r.out, r.errOut)
		}
	}
	if locked, err := m.IsLocked(ctx); err != nil || !locked {
		t.Fatalf("the lock named %q after the refused commands: locked %v, %v", prefix, locked, err)
	}
}
