package scriptlock

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// slowScript starts on node a script that runs for d by the server's
// clock (past busy-reply-threshold, the server answers BUSY meanwhile);
// the function it returns waits up to 10 s for the script's end.
func slowScript(t *testing.T, node *redistest.Node, d time.Duration) func() {
	t.Helper()
	slow := fmt.Sprintf(`local s = redis.call('time')
while true do
  local n = redis.call('time')
  if (n[1] - s[1]) * 1000000 + n[2] - s[2] > %d then return 1 end
end`, d.Microseconds())
	return within(t, 10*time.Second, "the slow script", func() error { return node.Do(t, "EVAL", slow, "0").Error() })
}

// awaitBusy returns once rc's server answers a PING with BUSY; the test
// fails when it has not within 5 s.
func awaitBusy(t *testing.T, ctx context.Context, rc rueidis.Client) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		err := rc.Do(ctx, rc.B().Ping().Build()).Error()
		if err != nil && strings.HasPrefix(err.Error(), "BUSY ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never answered BUSY (last: %v)", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// repliesInOrder checks that rc's connection still answers each command
// with its own reply, not its predecessor's.
func repliesInOrder(t *testing.T, ctx context.Context, rc rueidis.Client) {
	t.Helper()
	for i := range 20 {
		key := redistest.Prefix(t) + "echo"
		if err := rc.Do(ctx, rc.B().Set().Key(key).Value(strings.Repeat("x", i+1)).Build()).Error(); err != nil {
			t.Fatalf("SET after the busy script: %v", err)
		}
		if v, err := rc.Do(ctx, rc.B().Get().Key(key).Build()).ToString(); err != nil || len(v) != i+1 {
			t.Fatalf("GET after the busy script: %q, %v; want %d bytes", v, err, i+1)
		}
	}
}
