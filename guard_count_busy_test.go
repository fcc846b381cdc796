package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A primary running someone's script past busy-reply-threshold answers
// INFO with BUSY, as it answers everything else. That is no count of its
// replicas: the count took it for one of none, and for the five seconds it
// was kept, acquisitions on that primary went out without WAIT once the
// script ended, although it has a replica. A BUSY INFO is no answer: the
// first acquisition is guarded, and the next count (the primary answers by
// then) counts the replica.
func TestGuardCountBusyPrimary(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	if err := primary.Do(t, "CONFIG", "SET", "busy-reply-threshold", "50").Error(); err != nil {
		t.Fatal(err)
	}
	rc := primary.Client(t)
	c := newTestClient(t, rc)
	ctx := testCtx(t, 20*time.Second)
	// Runs for half a second by the server's clock.
	const slow = `local s = redis.call('time')
while true do
  local n = redis.call('time')
  if (n[1] - s[1]) * 1000000 + n[2] - s[2] > 500000 then return 1 end
end`
	script := within(t, 10*time.Second, "the slow script", func() error { return primary.Do(t, "EVAL", slow, "0").Error() })
	for deadline := time.Now().Add(5 * time.Second); ; {
		err := rc.Do(ctx, rc.B().Ping().Build()).Error()
		if err != nil && strings.HasPrefix(err.Error(), "BUSY ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never answered BUSY (last: %v)", err)
		}
		time.Sleep(time.Millisecond)
	}
	// The first acquisition counts replicas while the server is busy, and
	// waits (BUSY is made again) until the script ends.
	m := mustMutex(t, c, "busy-count")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	script()
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if n := c.replicas(ctx, m.Key(), 1); n != 1 {
		t.Fatalf("replicas counted after a count the busy primary answered BUSY: %d, want 1", n)
	}
}
