package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panickyMultiClient is a rueidis client whose next pipeline carrying a
// script call panics, as a client wrapper (a hook, a middleware) may,
// before anything is sent.
type panickyMultiClient struct {
	rueidis.Client
	next atomic.Bool
}

func (p *panickyMultiClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	for _, cmd := range multi {
		if cs := cmd.Commands(); len(cs) > 0 && (cs[0] == "EVALSHA" || cs[0] == "EVAL") && p.next.CompareAndSwap(true, false) {
			panic("client wrapper panicked")
		}
	}
	return p.Client.DoMulti(ctx, multi...)
}

// A guarded attempt (the script and its WAIT, sent as one pipeline) under a
// context that can be cancelled, whose client wrapper panics: the panic
// reaches TryLock's caller, as it does unguarded or under a context that
// cannot be cancelled (the caller recovers, as net/http does). It ran on
// the goroutine the call is bounded by, and crashed the process. Nothing
// was sent, and the lock can be taken after it.
func TestGuardedSendPanicReachesCaller(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	rc := &panickyMultiClient{Client: primary.Client(t)}
	c := newTestClient(t, rc)
	m := mustMutex(t, c, "guard-send-panic")
	ctx, cancel := context.WithCancel(testCtx(t, 20*time.Second))
	defer cancel()
	// The replica count taken: the attempt below is guarded.
	l, err := m.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if s := m.spec(); !c.guarded(ctx, s.cfg, s.key).on() {
		t.Fatal("the guard does not wait on a primary with a replica")
	}
	rc.next.Store(true)
	if p := panicked(func() { _, _ = m.TryLock(ctx, 0) }); p == nil {
		t.Fatal("TryLock did not panic")
	}
	l, err = m.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("TryLock after the wrapper's panic: %v", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
}
