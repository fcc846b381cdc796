package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A lost lock is a WARN with its name and reason (docs/operations.md), also
// when Extend is what finds it gone: an explicit-lease hold whose key was
// evicted or force-unlocked by another process meanwhile.
func TestLostFoundByExtendIsLogged(t *testing.T) {
	t.Parallel()
	node, c, logs := newLoggedClient(t)
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "extended")
	lctx, err := m.LockWithLease(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", m.Key())
	if err := m.Extend(ctx, lctx, 10*time.Second); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend of a hold whose key is gone: %v, want ErrNotHeld", err)
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("lock context cause %v, want ErrLockLost", context.Cause(lctx))
	}
	if lost, logged := logs.lostLines("lock=extended", "reason="); len(lost) == 0 {
		t.Errorf("no WARN \"lock lost\" naming the lock and its reason; logged: %q", logged)
	}
}

// So is a hold whose owner locks again and is granted the lock afresh: the
// server had lost the earlier hold (evicted, or force-unlocked by another
// process) before the watchdog noticed.
func TestLostFoundByFreshGrantIsLogged(t *testing.T) {
	t.Parallel()
	node, c, logs := newLoggedClient(t)
	ctx := WithOwner(testCtx(t, 20*time.Second), "worker")
	m := mustMutex(t, c, "again")
	first, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", m.Key())
	second, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(second)
	if !errors.Is(context.Cause(first), ErrLockLost) {
		t.Fatalf("the first hold's context: cause %v, want ErrLockLost", context.Cause(first))
	}
	if lost, logged := logs.lostLines("lock=again", "reason="); len(lost) == 0 {
		t.Errorf("no WARN \"lock lost\" naming the lock and its reason; logged: %q", logged)
	}
}

// And a hold whose Unlock finds it gone: its owner worked under a lock the
// server no longer had.
func TestLostFoundByUnlockIsLogged(t *testing.T) {
	t.Parallel()
	node, c, logs := newLoggedClient(t)
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "released")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", m.Key())
	if err := m.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock of a hold whose key is gone: %v, want ErrNotHeld", err)
	}
	if lost, logged := logs.lostLines("lock=released", "reason="); len(lost) == 0 {
		t.Errorf("no WARN \"lock lost\" naming the lock and its reason; logged: %q", logged)
	}
}

// newLoggedClient starts a server and a Client on it whose log is recorded in
// the returned sink.
func newLoggedClient(t *testing.T) (*redistest.Node, *Client, *logSink) {
	t.Helper()
	node := redistest.Server(t)
	logs := &logSink{}
	return node, newTestClient(t, node.Client(t), WithLogger(slog.New(logs))), logs
}

// lostLines returns the WARN "lock lost" lines logged so far that contain
// every one of parts, and all the lines logged so far.
func (s *logSink) lostLines(parts ...string) (lost, logged []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.logs {
		if strings.HasPrefix(l, "WARN lock lost") && !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(l, p) }) {
			lost = append(lost, l)
		}
	}
	return lost, slices.Clone(s.logs)
}
