package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An ACL user granted the lock's own channels (redisson_lock__channel:{name},
// ...) but not its fair waiters' wake channels can watch a fair lock: those
// channels (patterns with plain pub/sub, each queued waiter's with sharded
// pub/sub) are an extra that shows a hand-off at once, and without them
// watch shows it at its next read, as it did before it listened there. Its
// own channels were accepted, so it does not end when a waiter's are
// refused.
func TestWatchWaiterChannelRefusedGoesOn(t *testing.T) {
	t.Parallel()
	// &*}: the channels whose name ends the hash tag, the lock's own; a
	// waiter's ends in its client id or field, and a pattern in '*'.
	user := redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "&*}", "+@all")
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		node := redistest.Server(t, user)
		testWatchWaiterChannelRefused(t, node.Client(t), "redis://ops:s3cret@"+node.Addr, false)
	})
	t.Run("sharded", func(t *testing.T) {
		t.Parallel()
		cl := redistest.Cluster(t, 3, user)
		testWatchWaiterChannelRefused(t, cl.Client(t), "redis://ops:s3cret@"+cl.Addrs[0]+"?addr="+cl.Addrs[1]+"&addr="+cl.Addrs[2], true)
	})
}

func testWatchWaiterChannelRefused(t *testing.T, rc rueidis.Client, url string, sharded bool) {
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	d := deployment{url: url, rc: rc}
	c := newClient(t, rc, prefix, scriptlock.WithWaiterTimeout(time.Minute), scriptlock.WithShardedPubSub(sharded))
	f := mustFair(t, c, "fair")
	l, err := f.Lock(scriptlock.WithOwner(ctx, "first"))
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancelWaiter := context.WithCancel(ctx)
	waiterDone := make(chan struct{})
	go func() {
		defer close(waiterDone)
		if l, err := f.Lock(scriptlock.WithOwner(wctx, "second")); err == nil {
			<-wctx.Done()
			_ = f.Unlock(l)
		}
	}()
	defer func() {
		cancelWaiter()
		<-waiterDone
	}()
	waitFor(t, ctx, func() bool { return inspectJSON(t, ctx, d, prefix, "fair").QueueLength == 1 })

	var out, errOut syncBuffer
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		mode := "off"
		if sharded {
			mode = "on"
		}
		done <- run(runCtx, []string{"--url", url, "--sharded", mode, "watch", "--json", "--interval", "100ms", "--key-prefix", prefix, "fair"},
			strings.NewReader(""), &out, &errOut)
	}()
	defer func() {
		stop()
		<-done
	}()
	waitFor(t, ctx, func() bool { return out.lines()[0] != "" })
	// Reads every 100ms have found the waiter and asked for its channel.
	select {
	case code := <-done:
		done <- code
		t.Fatalf("watch ended with exit %d once a waiter queued, though the lock's channels were granted\n%s\n%s",
			code, strings.Join(out.lines(), "\n"), strings.Join(errOut.lines(), "\n"))
	case <-time.After(2 * time.Second):
	}
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		found := false
		for _, line := range out.lines()[1:] {
			var ev watchEvent
			if json.Unmarshal([]byte(line), &ev) == nil && len(ev.Report.Holders) == 1 && ev.Report.Holders[0].Owner == "second" {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hand-off not shown within 10s of the release:\n%s\n%s", strings.Join(out.lines(), "\n"), strings.Join(errOut.lines(), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(strings.Join(errOut.lines(), "\n"), "shows at the next read") {
		t.Errorf("watch did not say the waiters' channels were refused:\n%s", strings.Join(errOut.lines(), "\n"))
	}
}
