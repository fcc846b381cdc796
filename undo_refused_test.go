package scriptlock

import (
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUndoRefusedForGoodStops: the give-back of holds an acquisition of
// unknown outcome may have taken (undoLater), or that Unlock finds beside
// the owner's own, by an ACL user without the lock's channel (Redis 7 gives
// a new user none) is refused NO_PUBLISH, and would be at every attempt: it
// was tried again about once a second until the lease ended, logged at
// Debug only. It is tried no more, and logged once at WARN, naming the
// lock; the lock stays as it was.
func TestUndoRefusedForGoodStops(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels", "+@all").Error(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	logs := &logSink{}
	app := newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), sharedPrefix(t), WithLogger(slog.New(logs)))
	ctx := testCtx(t, 30*time.Second)
	warned := func() []string {
		logs.mu.Lock()
		defer logs.mu.Unlock()
		var got []string
		for _, l := range logs.logs {
			if strings.HasPrefix(l, "WARN lock hold not given back") {
				got = append(got, l)
			}
		}
		return got
	}
	check := func(name, lock string, want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for len(warned()) < want && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		before := commandCalls(t, n)["evalsha"]
		time.Sleep(1500 * time.Millisecond)
		if d := commandCalls(t, n)["evalsha"] - before; d > 0 {
			t.Errorf("%s: %d more scripts ran after the undo was refused NO_PUBLISH: it is tried again", name, d)
		}
		w := warned()
		if len(w) != want || !strings.Contains(w[want-1], "NO_PUBLISH") || !strings.Contains(w[want-1], "lock="+lock+" ") {
			logs.mu.Lock()
			all := slices.Clone(logs.logs)
			logs.mu.Unlock()
			t.Errorf("%s: warnings %q, want %d, the last naming lock %s and NO_PUBLISH; logged: %q", name, w, want, lock, all)
		}
	}

	// An acquisition whose reply was lost took the lock.
	m := mustMutex(t, app, "m")
	field := app.fieldOf(m, "job-1")
	if err := n.Do(t, "HSET", m.key, field, "1").Error(); err != nil {
		t.Fatal(err)
	}
	if err := n.Do(t, "PEXPIRE", m.key, "30000").Error(); err != nil {
		t.Fatal(err)
	}
	before := keysState(t, n)
	app.undoLater(m, field, 30*time.Second, time.Now().Add(30*time.Second), 0)
	check("undoLater", "m", 1)
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("undoLater refused, yet it wrote: %v", diff)
	}

	// Unlock finds a hold beside the owner's own (a re-entry whose reply
	// was lost): its release of them all, which tells the queue's head, is
	// refused. (A release on Redisson's fair queue gives up one hold at a
	// time.)
	fm := mustFair(t, app, "fm", WithRedissonFairQueue(time.Minute))
	held, err := fm.Lock(WithOwner(ctx, "job-2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Do(t, "HINCRBY", fm.m.key, app.fieldOf(fm, "job-2"), "1").Error(); err != nil {
		t.Fatal(err)
	}
	const waiter = "77777777-0000-4000-8000-000000000000:1"
	if err := n.Do(t, "RPUSH", fm.queue, waiter).Error(); err != nil {
		t.Fatal(err)
	}
	if err := n.Do(t, "ZADD", fm.timeouts, strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10), waiter).Error(); err != nil {
		t.Fatal(err)
	}
	err = fm.Unlock(held)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("Unlock with a hold beside: %v, want generated.ErrNoPublish", err)
	}
	check("Unlock", "fm", 2)
}
