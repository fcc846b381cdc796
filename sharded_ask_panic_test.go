package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The question a Cluster Client asks its nodes, on goroutines of its own,
// whether they have sharded pub/sub meets a client wrapper that panics: the
// panic is logged and the node taken as one that did not answer, instead
// of crashing the process. Locks are taken and released.
func TestShardedAskPanicLogged(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	rc := newPanickyNodes(cl.Client(t), commandDo("COMMAND"))
	rc.left.Store(-1)
	var logs syncBuffer
	c, err := New(rc, sharedPrefix(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "sharded-ask-panic")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the ask's panic was not logged; log:\n%s", logs.String())
	}
}
