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

// panickyValueClient is a rueidis client whose script calls panic, while
// value is set, with that value, as a client wrapper's may.
type panickyValueClient struct {
	rueidis.Client
	value atomic.Pointer[string]
}

func (p *panickyValueClient) hit(cmds ...rueidis.Completed) {
	v := p.value.Load()
	if v == nil {
		return
	}
	for _, cmd := range cmds {
		if cs := cmd.Commands(); cs[0] == "EVALSHA" || cs[0] == "EVAL" {
			panic(*v)
		}
	}
}

func (p *panickyValueClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	p.hit(cmd)
	return p.Client.Do(ctx, cmd)
}

func (p *panickyValueClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	p.hit(multi...)
	return p.Client.DoMulti(ctx, multi...)
}

// A renewal panic of another kind than the one logged at ERROR, while
// renewals still panic, is news: logged at ERROR too, with its stack, not
// at DEBUG as a repeat of the first.
func TestWatchdogRenewalPanicNewKindLogged(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var logs syncBuffer
	rc := &panickyValueClient{Client: node.Client(t)}
	c := newTestClient(t, rc, WithWatchdog(6*time.Second, 300*time.Millisecond),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "wd-panic-news")
	h, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	errorWith := func(s string) bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "level=ERROR") && strings.Contains(line, "panic recovered") && strings.Contains(line, s) {
				return true
			}
		}
		return false
	}
	first, second := "wrapper fault one", "wrapper fault two"
	rc.value.Store(&first)
	if !eventually(5*time.Second, func() bool { return errorWith(first) }) {
		t.Fatalf("the first renewal panic was not logged at ERROR; log:\n%s", logs.String())
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered again") }) {
		t.Fatalf("the first panic's repeats were not logged at DEBUG; log:\n%s", logs.String())
	}
	rc.value.Store(&second)
	if !eventually(3*time.Second, func() bool { return errorWith(second) }) {
		rc.value.Store(nil)
		t.Fatalf("a renewal panic of another kind was not logged at ERROR; log:\n%s", logs.String())
	}
	rc.value.Store(nil)
	if err := m.Unlock(h); err != nil {
		t.Fatal(err)
	}
}
