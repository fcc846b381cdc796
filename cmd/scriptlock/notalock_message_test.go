package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// force-unlock of a key that is not a lock says what the key is, in the words
// inspect uses, not the JSON kind ("is a unknown").
func TestForceUnlockNotALockMessage(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{name: "single", url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	for _, c := range []struct {
		cmd  []string
		name string
		want string
	}{
		{[]string{"SET", "plain", "hello"}, "plain", `"plain" is not a lock (Redis type string, not a lock layout)`},
		{[]string{"SET", "sem", "4"}, "sem", `"sem" is a counter (Semaphore permits available, or CountDownLatch count), not a lock`},
	} {
		node.Do(t, c.cmd...)
		res := cli(ctx, d, "", "force-unlock", "--yes", c.name)
		if res.code != exitNotALock {
			t.Errorf("force-unlock %s: exit %d, want %d\n%s%s", c.name, res.code, exitNotALock, res.out, res.errOut)
		}
		if !strings.Contains(res.errOut, c.want) || strings.Contains(res.errOut, "a unknown") {
			t.Errorf("force-unlock %s: stderr %q; want it to contain %q", c.name, res.errOut, c.want)
		}
	}
}
