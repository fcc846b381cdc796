package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A force-unlock whose reply was lost with its connection, and which rueidis
// then made again (the script is retryable) on a new connection whose dial
// failed, ran: it failed with that dial's error alone, which reads as a
// call never sent, and an operator running it again with --yes deletes the
// lock of whoever took it since. The error says the outcome is unknown.
func TestForceUnlockRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	// The script loaded, by a force-unlock of another lock.
	heldMutex(t, ctx, c, "warm", "holder")
	if r := cli(ctx, deployment{name: "single", url: "redis://" + node.Addr}, "", "force-unlock", "--yes", "--key-prefix", prefix, "warm"); r.code != exitOK {
		t.Fatalf("force-unlock: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	// The replies are held back from the command's last reading on: a
	// connection rueidis dials only then never finishes its handshake, and
	// the delete is never sent. That run proves nothing, and another is made.
	for attempt := range 10 {
		px := netproxy.New(t, node.Addr)
		name := "cmd-" + strconv.Itoa(attempt)
		m := heldMutex(t, ctx, c, name, "holder")
		d := deployment{name: "single", url: "redis://" + px.Addr}
		meanwhileBeforeDelete(t, m.Key(), px.FreezeReplies)
		res := make(chan result, 1)
		go func() {
			res <- cli(ctx, d, "", "force-unlock", "--yes", "--timeout", "3s", "--key-prefix", prefix, name)
		}()
		landed := false
		for deadline := time.Now().Add(5 * time.Second); !landed && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			n, err := node.Do(t, "EXISTS", m.Key()).AsInt64()
			landed = err == nil && n == 0
		}
		px.Close() // the reply is lost with its connection; every repeat's dial is refused
		r := <-res
		if !landed {
			t.Logf("attempt %d: the force-unlock did not reach the server: exit %d\n%s%s", attempt, r.code, r.out, r.errOut)
			continue
		}
		if r.code != exitFailure || !strings.Contains(r.errOut, "dial") || !strings.Contains(r.errOut, "outcome unknown") {
			t.Fatalf("force-unlock whose reply was lost, its repeats never sent: exit %d; want %d with the dial error saying the outcome is unknown\n%s%s",
				r.code, exitFailure, r.out, r.errOut)
		}
		return
	}
	t.Fatal("the force-unlock did not reach the server in 10 attempts")
}
