package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// list against a replica's address (a read-only look, away from the
// primary) lists what the replica holds; it listed nothing and exited 0, as
// if no lock were held.
func TestListOnReplica(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, primary.Client(t), prefix)
	m := mustMutex(t, c, "order:7")
	if _, err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	d := deployment{name: "replica", url: "redis://" + replica.Addr, rc: replica.Client(t)}
	waitFor(t, ctx, func() bool {
		n, err := replica.Do(t, "EXISTS", m.Key()).AsInt64()
		return err == nil && n == 1
	})
	r := cli(ctx, d, "", "list", "--key-prefix", prefix)
	if r.code != exitOK || !strings.Contains(r.out, "order:7") {
		t.Fatalf("list on the replica: exit %d, want the lock the replica holds listed:\n%s%s", r.code, r.out, r.errOut)
	}
}
