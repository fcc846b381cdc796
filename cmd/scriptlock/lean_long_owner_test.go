package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An owner id is any length (WithOwner bounds none), and a LeanMutex keeps
// <client-id>:<owner-id> as its string: one of more than 4 KiB is still a
// lock's. inspect names its whole owner and force-unlock releases it, as
// they do for a Mutex held by the same owner.
func TestLeanMutexLongOwner(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	l, err := c.LeanMutex("stock:sku-9")
	if err != nil {
		t.Fatal(err)
	}
	owner := "job-" + strings.Repeat("x", 5000)
	if _, err := l.Lock(scriptlock.WithOwner(ctx, owner)); err != nil {
		t.Fatal(err)
	}
	r := inspectJSON(t, ctx, d, prefix, "stock:sku-9")
	if r.Kind != kindLean || len(r.Holders) != 1 || r.Holders[0].Owner != owner {
		got := 0
		if len(r.Holders) == 1 {
			got = len(r.Holders[0].Owner)
		}
		t.Errorf("inspect: kind %s, %d holders, owner of %d bytes; want lean_mutex held by the owner of %d bytes", r.Kind, len(r.Holders), got, len(owner))
	}
	fu := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "stock:sku-9")
	if fu.code != exitOK {
		t.Fatalf("force-unlock: exit %d\n%s%s", fu.code, fu.out, fu.errOut)
	}
	if st, err := l.State(ctx); err != nil || st.Locked {
		t.Errorf("after force-unlock: %+v %v", st, err)
	}
}
