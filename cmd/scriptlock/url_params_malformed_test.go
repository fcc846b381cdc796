package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A query pair that does not parse (a ';' for a separator, a bad %-escape)
// is dropped by rueidis, parameter and all: ?db=1;client_name=ops reads
// database 0. Such a URL is refused (exit 2) before anything is dialled, as
// one with a parameter rueidis does not know is.
func TestURLMalformedParameterRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	m := mustMutex(t, c, "order:1")
	if _, err := m.Lock(scriptlock.WithOwner(ctx, "db0-owner")); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{
		"redis://" + node.Addr + "?db=1;client_name=ops",
		"redis://" + node.Addr + "?db=1&client_name=%zz",
		"redis://" + node.Addr + "?db=1%",
	} {
		r := cli(ctx, deployment{url: u}, "", "force-unlock", "--yes", "--key-prefix", prefix, "order:1")
		if r.code != exitUsage || !strings.Contains(r.errOut, "query") {
			t.Errorf("%s: exit %d, want %d naming the query that does not parse\n%s%s", u, r.code, exitUsage, r.out, r.errOut)
		}
	}
	if st, err := m.State(ctx); err != nil || !st.Locked {
		t.Fatalf("the lock in database 0 after the refused URLs: %+v %v", st, err)
	}
}
