package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A user the server refuses INFO (an ACL without it, such as +@all
// -@dangerous) cannot have replicas counted: the failover guard then sends
// its acquisitions without WAIT, as on a primary without replicas, although
// the primary has one. That went unsaid: the log now warns, once, naming
// the refusal, so the operator can allow the user INFO.
func TestGuardInfoRefusedWarns(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	if err := primary.Do(t, "ACL", "SETUSER", "default", "-info").Error(); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	c := newTestClient(t, primary.Client(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	m := mustMutex(t, c, "info-refused")
	ctx := testCtx(t, 10*time.Second)
	for range 2 {
		l, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(l); err != nil {
			t.Fatal(err)
		}
	}
	// Written by the Client's reporter, just after the count.
	eventually(3*time.Second, func() bool { return strings.Contains(logs.String(), "failover guard cannot count") })
	c.Close() // writes what the reporter holds: a second warning is in the log by then
	out := logs.String()
	if n := strings.Count(out, "failover guard cannot count"); n != 1 {
		t.Fatalf("%d warnings that the guard cannot count replicas, want 1; log:\n%s", n, out)
	}
	if !strings.Contains(out, "NOPERM") {
		t.Errorf("the warning does not name the server's refusal:\n%s", out)
	}
}
