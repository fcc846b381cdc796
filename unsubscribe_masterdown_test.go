package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// rueidis sends a PING behind an UNSUBSCRIBE and takes its answer for the
// UNSUBSCRIBE's. A replica whose primary is down, with
// replica-serve-stale-data no, answers the UNSUBSCRIBE but the PING with
// MASTERDOWN, which rueidis took for the UNSUBSCRIBE's own error: it then
// waited for the PING's answer still, and took the connection's next reply
// for it, which panicked the process ("protocol bug, message handled out of
// order"). A waiter that left while its server answered MASTERDOWN (a
// primary demoted under the Client, or one told REPLICAOF a primary that
// is not there) had its subscription ended that way. The UNSUBSCRIBE now
// waits (within its second) for a PING the server answers.
func TestUnsubscribeWhileMasterDown(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	w := subscribedWaiter(t, node, "masterdown-unsubscribe")
	rc, s, ctx, leave, waited := w.rc, w.s, w.ctx, w.leave, w.waited
	if err := node.Do(t, "CONFIG", "SET", "replica-serve-stale-data", "no").Error(); err != nil {
		t.Fatal(err)
	}
	if err := node.Do(t, "REPLICAOF", "127.0.0.1", "1").Error(); err != nil {
		t.Fatal(err)
	}
	defer node.Do(t, "REPLICAOF", "NO", "ONE")
	if err := node.Do(t, "PING").Error(); err == nil || !strings.HasPrefix(err.Error(), "MASTERDOWN ") {
		t.Fatalf("PING on a replica of a primary that is not there: %v, want MASTERDOWN", err)
	}
	leave() // the only waiter leaves while the server answers MASTERDOWN
	<-waited
	time.Sleep(100 * time.Millisecond) // its unsubscribe is under way
	if err := node.Do(t, "REPLICAOF", "NO", "ONE").Error(); err != nil {
		t.Fatal(err)
	}
	// The Client's connection still answers each command with its own reply.
	key := redistest.Prefix(t) + "echo"
	for i := range 20 {
		if err := rc.Do(ctx, rc.B().Set().Key(key).Value(strings.Repeat("x", i+1)).Build()).Error(); err != nil {
			t.Fatalf("SET after MASTERDOWN: %v", err)
		}
		if v, err := rc.Do(ctx, rc.B().Get().Key(key).Build()).ToString(); err != nil || len(v) != i+1 {
			t.Fatalf("GET after MASTERDOWN: %q, %v; want %d bytes", v, err, i+1)
		}
	}
	if !eventually(2*time.Second, func() bool { return subscribers(t, node, false, s.channel) == 0 }) {
		t.Errorf("%d subscribed to %s after its only waiter left and the server answered again", subscribers(t, node, false, s.channel), s.channel)
	}
}
