package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// rueidis ignores a URL query parameter it does not know: a misspelt one
// (?database=1 for ?db=1, ?master_name= for ?master_set=) would have the
// command read, and force-unlock delete in, another database or the seed
// itself, as if the parameter were not there. Such a URL is refused (exit
// 2) before anything is dialled; the parameters rueidis takes still work.
func TestURLUnknownParameterRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	rc := node.Client(t)
	c := newClient(t, rc, prefix)
	m := mustMutex(t, c, "order:1")
	if _, err := m.Lock(scriptlock.WithOwner(ctx, "db0-owner")); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{
		"redis://" + node.Addr + "?database=1",
		"redis://" + node.Addr + "?master_name=mymaster",
		"redis://" + node.Addr + "?db=0&dial_timout=1s",
	} {
		r := cli(ctx, deployment{url: u}, "", "force-unlock", "--yes", "--key-prefix", prefix, "order:1")
		if r.code != exitUsage || !strings.Contains(r.errOut, "query parameter") {
			t.Errorf("%s: exit %d, want %d naming the unknown query parameter\n%s%s", u, r.code, exitUsage, r.out, r.errOut)
		}
	}
	if st, err := m.State(ctx); err != nil || !st.Locked {
		t.Fatalf("the lock after the refused URLs: %+v %v", st, err)
	}
	r := cli(ctx, deployment{url: "redis://" + node.Addr + "?db=0&dial_timeout=2s&write_timeout=2s&protocol=3&client_name=ops"}, "",
		"inspect", "--key-prefix", prefix, "order:1")
	if r.code != exitOK || !strings.Contains(r.out, "db0-owner") {
		t.Errorf("a URL with known parameters: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
}
