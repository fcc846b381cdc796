package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// On a Cluster with sharded pub/sub a FairMutex hand-off is sent only on the
// next waiter's client's wake channel, with SPUBLISH (sharded pub/sub has no
// patterns): watch listens there for the waiters it has seen queued, and
// shows the hand-off when it happens, as it does with plain pub/sub.
func TestWatchFairHandOffSharded(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	d := deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix, scriptlock.WithWaiterTimeout(time.Minute), scriptlock.WithShardedPubSub(true))
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
		done <- run(runCtx, []string{"--url", d.url, "--sharded", "on", "watch", "--json", "--interval", "1h", "--key-prefix", prefix, "fair"},
			strings.NewReader(""), &out, &errOut)
	}()
	defer func() {
		stop()
		<-done
	}()
	waitFor(t, ctx, func() bool { return out.lines()[0] != "" })
	time.Sleep(500 * time.Millisecond) // subscribed
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var ev watchEvent
		found := false
		for _, line := range out.lines()[1:] {
			if json.Unmarshal([]byte(line), &ev) == nil && len(ev.Report.Holders) == 1 && ev.Report.Holders[0].Owner == "second" {
				found = true
				break
			}
		}
		if found {
			if !strings.HasPrefix(ev.Cause, "message scriptlock_fair_wake:") && ev.Cause != "settle" {
				t.Errorf("new holder shown by %q, want the wake message or the read after it", ev.Cause)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hand-off not shown within 5s of the release:\n%s\n%s", strings.Join(out.lines(), "\n"), strings.Join(errOut.lines(), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
