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
	forceUnlockReplyLost(t, func(px *netproxy.Proxy) {
		px.Close() // the reply is lost with its connection; every repeat's dial is refused
	}, func(r result) bool {
		// rueidis redials until the timeout is near, and answers the dial's
		// error, or the timeout's when it ends first.
		return strings.Contains(r.errOut, "dial") || strings.Contains(r.errOut, "deadline exceeded")
	})
}

// A force-unlock whose reply did not come back before --timeout ran out
// ran as well: its error says the outcome is unknown, not a bare timeout.
func TestForceUnlockTimeoutOutcomeUnknown(t *testing.T) {
	t.Parallel()
	forceUnlockReplyLost(t, func(*netproxy.Proxy) {}, func(r result) bool {
		return strings.Contains(r.errOut, "deadline exceeded")
	})
}

// forceUnlockReplyLost runs force-unlock --timeout 3s through a proxy that
// holds the replies back from just before the delete; once the delete has
// landed it runs lose, and checks that the command failed with an error
// that says the outcome is unknown and that why accepts.
func forceUnlockReplyLost(t *testing.T, lose func(*netproxy.Proxy), why func(result) bool) {
	t.Helper()
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
		lose(px)
		r := <-res
		px.Close()
		if !landed {
			t.Logf("attempt %d: the force-unlock did not reach the server: exit %d\n%s%s", attempt, r.code, r.out, r.errOut)
			continue
		}
		if r.code != exitFailure || !why(r) || !strings.Contains(r.errOut, "outcome unknown") {
			t.Fatalf("force-unlock whose reply was lost: exit %d; want %d with an error saying the outcome is unknown\n%s%s",
				r.code, exitFailure, r.out, r.errOut)
		}
		return
	}
	t.Fatal("the force-unlock did not reach the server in 10 attempts")
}
