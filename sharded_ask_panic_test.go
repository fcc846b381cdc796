package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panickyCommandClient is a rueidis client whose COMMAND calls, on the
// node clients its Nodes gives, panic, as a client wrapper may.
type panickyCommandClient struct{ rueidis.Client }

func (p panickyCommandClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if cs := cmd.Commands(); len(cs) > 0 && strings.EqualFold(cs[0], "COMMAND") {
		panic("client wrapper panicked")
	}
	return p.Client.Do(ctx, cmd)
}

func (p panickyCommandClient) Nodes() map[string]rueidis.Client {
	out := map[string]rueidis.Client{}
	for addr, n := range p.Client.Nodes() {
		out[addr] = panickyCommandClient{n}
	}
	return out
}

// The question a Cluster Client asks its nodes, on goroutines of its own,
// whether they have sharded pub/sub meets a client wrapper that panics: the
// panic is logged and the node taken as one that did not answer, instead
// of crashing the process. Locks are taken and released.
func TestShardedAskPanicLogged(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	var logs syncBuffer
	c, err := New(panickyCommandClient{cl.Client(t)}, sharedPrefix(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
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
