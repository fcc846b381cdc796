package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Key names are bytes: a key prefix that is not UTF-8 still matches the
// keys that start with it.
func TestListBinaryKeyPrefix(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t) + "\xff\xfe:"
	c := newClient(t, d.rc, prefix)
	heldMutex(t, ctx, c, "order:1", "w")
	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	if r.code != exitOK {
		t.Fatalf("list: exit %d\n%s", r.code, r.errOut)
	}
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if len(l.Locks) != 1 {
		t.Errorf("listed %d locks under a binary key prefix, want 1:\n%s", len(l.Locks), r.out)
	}
}
