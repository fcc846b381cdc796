package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The usual release of a Client without sharded pub/sub sends the server no
// publish command: PUBLISH is the script's default, and every argument costs
// the server on every release (Redis 7.0 builds ARGV anew per call). It
// sends the lock's four keys and the owner, nothing else.
func TestMutexUsualReleaseSendsNoPublishArgument(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "args")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	node.Do(t, "SLOWLOG", "RESET")
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	node.Do(t, "CONFIG", "SET", "slowlog-log-slower-than", "10000")
	entries, err := node.Do(t, "SLOWLOG", "GET", "100").ToArray()
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	for _, e := range entries {
		fields, err := e.ToArray()
		if err != nil || len(fields) < 4 {
			t.Fatalf("slowlog entry %v: %v", e, err)
		}
		args, err := fields[3].AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		if len(args) > 0 && strings.EqualFold(args[0], "evalsha") {
			calls = append(calls, args)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("the release made %d script calls %v, want 1", len(calls), calls)
	}
	// EVALSHA sha numkeys lock channel waiters wake owner
	if args := calls[0]; len(args) != 8 || args[2] != "4" {
		t.Errorf("the usual release sent %d words %q, want 8: EVALSHA, the sha, 4 keys and the owner", len(args), args)
	}
}
