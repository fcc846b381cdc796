package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Mutex or LeanMutex owner id may end in ":write" (only RWMutex refuses
// it, where the ending marks a write hold): the holder is that owner,
// holding the lock exclusively, and a LeanMutex so held is a lock that
// list shows and force-unlock releases.
func TestOwnerEndingInWrite(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	owner := scriptlock.WithOwner(ctx, "job:write")
	heldMutex(t, ctx, c, "m", "job:write")
	lean, err := c.LeanMutex("lean")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lean.Lock(owner); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, kind string }{{"m", kindMutex}, {"lean", kindLean}} {
		r := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, tc.name)
		var rep Report
		_ = json.Unmarshal([]byte(r.out), &rep)
		if r.code != exitOK || rep.Kind != tc.kind || len(rep.Holders) != 1 || rep.Holders[0].Owner != "job:write" || rep.Holders[0].Write {
			t.Errorf("inspect %s: exit %d, kind %q, holders %+v; want a %s held by owner job:write, not a write hold", tc.name, r.code, rep.Kind, rep.Holders, tc.kind)
		}
		text := cli(ctx, d, "", "inspect", "--key-prefix", prefix, tc.name)
		if strings.Contains(text.out, "  write  ") || !strings.Contains(text.out, "job:write") {
			t.Errorf("inspect %s shows the holder as a write hold, or not as owner job:write:\n%s", tc.name, text.out)
		}
	}
	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); r.code != exitOK || err != nil || len(l.Locks) != 2 {
		t.Errorf("list: exit %d, want both locks\n%s%s", r.code, r.out, r.errOut)
	}
	if r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "lean"); r.code != exitOK {
		t.Errorf("force-unlock lean: exit %d, want %d\n%s%s", r.code, exitOK, r.out, r.errOut)
	}
}
