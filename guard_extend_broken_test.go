package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// killWaiting kills, on node, the connection of the first client blocked in
// WAIT within a few seconds, and reports whether it found one.
func killWaiting(t *testing.T, node *redistest.Node) bool {
	t.Helper()
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		list, err := node.Do(t, "CLIENT", "LIST").ToString()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, " cmd=wait ") {
				f := strings.Fields(line)[0] // id=<n>
				if err := node.Do(t, "CLIENT", "KILL", "ID", strings.TrimPrefix(f, "id=")).Error(); err != nil {
					t.Fatal(err)
				}
				return true
			}
		}
	}
	return false
}

// TestExtendGuardedConnBroken: a lock's guarded Extend whose connection
// breaks while its WAIT waits (the script ran, its reply is lost) is made
// again within ctx, as rueidis makes an unguarded one and as a
// PermitSemaphore's is: rueidis repeats no call sent with WAIT, and the
// Extend failed with the broken connection's error, under the guard that is
// on by default, where one without replicas succeeded.
func TestExtendGuardedConnBroken(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 5*time.Second))
	ctx := testCtx(t, 60*time.Second)
	for k, l := range guardKinds(t, c, "extend-broken", WithLease(time.Minute)) {
		lctx, err := l.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		e := l.(Extender)
		if err := e.Extend(ctx, lctx, time.Minute); err != nil { // the script loaded
			t.Fatalf("%s: %v", k, err)
		}
		replica.Pause()
		done := make(chan error, 1)
		go func() { done <- e.Extend(ctx, lctx, 2*time.Minute) }()
		killed := killWaiting(t, primary)
		replica.Resume()
		if !killed {
			t.Fatalf("%s: no client blocked in WAIT to kill", k)
		}
		if err := <-done; err != nil {
			t.Errorf("%s: Extend whose connection broke under its WAIT: %v, want it made again and acknowledged", k, err)
		}
		if err := lctx.Err(); err != nil {
			t.Errorf("%s: lock context after the Extend: %v, want live", k, err)
		}
		if err := l.Unlock(lctx); err != nil {
			t.Errorf("%s: Unlock: %v", k, err)
		}
	}
}
