package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panickyInfoClient is a rueidis client whose INFO calls, on it or on the
// node clients its Nodes gives, panic while armed, as a client wrapper may,
// before anything is sent.
type panickyInfoClient struct {
	rueidis.Client
	armed *atomic.Bool
}

func (p *panickyInfoClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if cs := cmd.Commands(); len(cs) > 0 && strings.EqualFold(cs[0], "INFO") && p.armed.Load() {
		panic("client wrapper panicked")
	}
	return p.Client.Do(ctx, cmd)
}

func (p *panickyInfoClient) Nodes() map[string]rueidis.Client {
	out := map[string]rueidis.Client{}
	for addr, n := range p.Client.Nodes() {
		out[addr] = &panickyInfoClient{Client: n, armed: p.armed}
	}
	return out
}

// The replica count a guarded acquisition takes meets a client wrapper
// that panics on INFO: the panic is logged and the count is one that could
// not be taken (the acquisition is guarded, and the next one counts
// again), instead of crashing the process from the goroutine the count
// runs on. Once the wrapper lets INFO through, the count is taken.
func TestReplicaCountPanicLogged(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	var armed atomic.Bool
	armed.Store(true)
	var logs syncBuffer
	c := newTestClient(t, &panickyInfoClient{Client: primary.Client(t), armed: &armed},
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	m := mustMutex(t, c, "count-panic")
	ctx := testCtx(t, 20*time.Second)
	l, err := m.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("TryLock while the count panics: %v", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the count's panic was not logged; log:\n%s", logs.String())
	}
	if c.guard.checked.Load() != 0 {
		t.Fatal("a count was stored though every INFO panicked")
	}
	armed.Store(false)
	if l, err = m.TryLock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if c.guard.checked.Load() == 0 || c.replicas(ctx, m.key, 1) != 1 {
		t.Fatalf("no count of one replica once INFO answers: %d", c.replicas(ctx, m.key, 1))
	}
}

// The look at the eviction policy an unguarded acquisition starts meets a
// client wrapper that panics on INFO: the panic is logged, and the Client
// goes on, instead of crashing the process from the look's goroutine.
func TestEvictionCheckPanicLogged(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var armed atomic.Bool
	armed.Store(true)
	var logs syncBuffer
	c := newTestClient(t, &panickyInfoClient{Client: node.Client(t), armed: &armed},
		WithFailoverGuard(false, 0), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	m := mustMutex(t, c, "eviction-panic")
	ctx := testCtx(t, 20*time.Second)
	l, err := m.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the eviction check's panic was not logged; log:\n%s", logs.String())
	}
}
