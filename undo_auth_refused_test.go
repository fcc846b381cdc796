package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUndoOutlastsPasswordRotation: the Client's password refused (WRONGPASS
// or NOAUTH, a rotation under way) refuses every call only until the
// password is right again. The give-back of a hold an acquisition of unknown
// outcome may have taken goes on trying through it, and gives the hold back
// once the password is accepted, instead of leaving the lock held by nobody
// until its lease ends.
func TestUndoOutlastsPasswordRotation(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "allchannels", "+@all").Error(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	logs := &logSink{}
	app := newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), sharedPrefix(t), WithLogger(slog.New(logs)), WithFailoverGuard(false, 0))

	m := mustMutex(t, app, "m")
	field := app.fieldOf(m, "job-1")
	if err := n.Do(t, "HSET", m.key, field, "1").Error(); err != nil {
		t.Fatal(err)
	}
	if err := n.Do(t, "PEXPIRE", m.key, "30000").Error(); err != nil {
		t.Fatal(err)
	}
	// The password changes under the Client: its connections are closed,
	// and each new one is refused.
	for _, args := range [][]string{{"ACL", "SETUSER", "app", "resetpass", ">rotated"}, {"CLIENT", "KILL", "USER", "app"}} {
		if err := n.Do(t, args...).Error(); err != nil {
			t.Fatal(err)
		}
	}
	app.undoLater(m, field, 30*time.Second, time.Now().Add(30*time.Second), 0)
	time.Sleep(1500 * time.Millisecond)
	if v, err := n.Do(t, "EXISTS", m.key).AsInt64(); err != nil || v != 1 {
		t.Fatalf("EXISTS while the password is refused: %d, %v; want the hold still there", v, err)
	}
	// The rotation ends: the Client's password is accepted again.
	if err := n.Do(t, "ACL", "SETUSER", "app", ">pw").Error(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		if v, _ := n.Do(t, "EXISTS", m.key).AsInt64(); v == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	logs.mu.Lock()
	var warned []string
	for _, l := range logs.logs {
		if strings.HasPrefix(l, "WARN ") {
			warned = append(warned, l)
		}
	}
	logs.mu.Unlock()
	t.Errorf("the hold of an acquisition of unknown outcome is still held 6 s after the Client's password was accepted again: its give-back stopped at the refused password; warnings: %q", warned)
}
