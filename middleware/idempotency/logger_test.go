package idempotency

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// lockedBuffer is a bytes.Buffer a logger may write from any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The store logs what it recovers on its own goroutines (here a claim's
// renewal whose client wrapper panics) to the logger it was given, as the
// lock middleware logs to theirs, not to slog's default.
func TestStoreLogger(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	node := redistest.Server(t)
	rc := &panickyClient{Client: node.Client(t)}
	var logs lockedBuffer
	s, err := NewStore(rc, WithPrefix(redistest.Prefix(t)), WithClaimTTL(600*time.Millisecond), WithTimeout(time.Second),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c := reserve(t, s, "logger")
	ctx, cancel := c.Context(context.Background())
	defer cancel()
	rc.on.Store(true)
	ended(t, ctx, 5*time.Second)
	rc.on.Store(false)
	if !strings.Contains(logs.String(), `msg="panic recovered" in="renewing an idempotency claim"`) {
		t.Fatalf("the renewal's panic was not logged to the store's logger; its log:\n%s", logs.String())
	}
}

// valueClient is a rueidis client whose calls panic, while value is set,
// with that value, as a client wrapper's may.
type valueClient struct {
	rueidis.Client
	value atomic.Pointer[string]
}

func (p *valueClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if v := p.value.Load(); v != nil {
		panic(*v)
	}
	return p.Client.Do(ctx, cmd)
}

func (p *valueClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if v := p.value.Load(); v != nil {
		panic(*v)
	}
	return p.Client.DoMulti(ctx, multi...)
}

// debugLoggedStore is a Store on rc (3 s claims, 1 s call timeout) that logs
// from DEBUG up to the buffer it returns; closed when the test ends.
func debugLoggedStore(t *testing.T, rc rueidis.Client) (*Store, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	s, err := NewStore(rc, WithPrefix(redistest.Prefix(t)), WithClaimTTL(3*time.Second), WithTimeout(time.Second),
		WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, logs
}

// A panic of another kind than the one logged at ERROR, while the store's
// calls still panic, is news: logged at ERROR too, not at DEBUG as a repeat
// of the first.
func TestStorePanicNewKindLogged(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := &valueClient{Client: node.Client(t)}
	s, logs := debugLoggedStore(t, rc)
	reserve(t, s, "news")
	errorWith := func(v string) bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "level=ERROR") && strings.Contains(line, v) {
				return true
			}
		}
		return false
	}
	first, second := "wrapper fault one", "wrapper fault two"
	rc.value.Store(&first)
	defer rc.value.Store(nil)
	if !eventuallyTrue(3*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered again") }) {
		t.Fatalf("the renewals' panics were not logged, at ERROR then DEBUG; log:\n%s", logs.String())
	}
	if !errorWith(first) {
		t.Fatalf("the first panic was not logged at ERROR; log:\n%s", logs.String())
	}
	rc.value.Store(&second)
	if !eventuallyTrue(time.Second, func() bool { return errorWith(second) }) {
		t.Fatalf("a panic of another kind was not logged at ERROR; log:\n%s", logs.String())
	}
}

func eventuallyTrue(within time.Duration, f func() bool) bool {
	for end := time.Now().Add(within); ; time.Sleep(10 * time.Millisecond) {
		if f() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}
