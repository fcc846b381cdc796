package scriptlock

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGiveBackChannelRefused: a give-back of permits an acquisition of
// unknown outcome took (SemaphoreUndo, PermitUndo), by an ACL user without
// the semaphore's channel (Redis 7 gives a new user none), returned the
// permits, then failed at its publish: the Client took the error for a
// failed give-back, tried again for the record's whole life (a minute) and
// then logged the permits as maybe lost. The give-back is refused before it
// writes (NO_PUBLISH), tried no more, and logged once, saying so.
func TestGiveBackChannelRefused(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels", "+@all").Error(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	prefix := sharedPrefix(t)
	admin := newTestClient(t, n.Client(t), prefix)
	logs := &logSink{}
	app := newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), prefix, WithLogger(slog.New(logs)))
	ctx := testCtx(t, 30*time.Second)
	warned := func(what string) []string {
		logs.mu.Lock()
		defer logs.mu.Unlock()
		var got []string
		for _, l := range logs.logs {
			if strings.HasPrefix(l, "WARN "+what) {
				got = append(got, l)
			}
		}
		return got
	}
	quiet := func(name string) {
		t.Helper()
		before := commandCalls(t, n)["evalsha"]
		time.Sleep(time.Second)
		if d := commandCalls(t, n)["evalsha"] - before; d > 0 {
			t.Errorf("%s: %d more scripts ran after the refused give-back was logged: it is tried again", name, d)
		}
	}

	// Semaphore: an acquisition of 2 permits whose reply was lost.
	sem := mustSem(t, admin, "s")
	if ok, err := sem.TrySetPermits(ctx, 3); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	s := mustSem(t, app, "s")
	latch := s.latch()
	if err := n.Do(t, "SET", latch, "2", "PX", "60000").Error(); err != nil {
		t.Fatal(err)
	}
	if err := n.Do(t, "DECRBY", s.Key(), "2").Error(); err != nil {
		t.Fatal(err)
	}
	s.undoLater(latch, 2, time.Now())
	deadline := time.Now().Add(5 * time.Second)
	for len(warned("semaphore permits not given back")) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := countAt(t, n, s.Key()); got != 1 {
		t.Errorf("Semaphore give-back refused: the count is %d, want 1 (nothing given back)", got)
	}
	if w := warned("semaphore permits not given back"); len(w) != 1 || !strings.Contains(w[0], "NO_PUBLISH") {
		logs.mu.Lock()
		all := slices.Clone(logs.logs)
		logs.mu.Unlock()
		t.Fatalf("Semaphore give-back refused: warnings %q, want one saying the permits were not given back, with NO_PUBLISH; logged: %q", w, all)
	}
	quiet("Semaphore")

	// PermitSemaphore: a permit granted to an acquisition whose reply was lost.
	aps := mustPermits(t, admin, "ps")
	if ok, err := aps.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("PermitSemaphore TrySetPermits: %v %v", ok, err)
	}
	id, err := aps.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wire, err := permitWire(id)
	if err != nil {
		t.Fatal(err)
	}
	ps := mustPermits(t, app, "ps")
	ps.undoLater(wire, app.recordKey("redisson_sc_latch", ps.key), time.Minute)
	deadline = time.Now().Add(5 * time.Second)
	for len(warned("semaphore permit not given back")) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got, _ := n.Do(t, "ZCARD", ps.timeouts).AsInt64(); got != 1 {
		t.Errorf("PermitSemaphore give-back refused: %d permits held, want 1 (nothing given back)", got)
	}
	if w := warned("semaphore permit not given back"); len(w) != 1 || !strings.Contains(w[0], "NO_PUBLISH") {
		t.Fatalf("PermitSemaphore give-back refused: warnings %q, want one saying the permit was not given back, with NO_PUBLISH", w)
	}
	quiet("PermitSemaphore")
}
