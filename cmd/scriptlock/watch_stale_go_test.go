package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// watch marks a Mutex's Go waiter whose client no longer listens (the next
// release drops it) as stale, as inspect does, and not the live one.
func TestWatchStaleGoWaiters(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	heldMutex(t, ctx, c, "m", "holder")
	waiterClient := newClient(t, d.rc, prefix)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := mustMutex(t, waiterClient, "m").Lock(wctx)
		done <- err
	}()
	defer func() {
		stop()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("waiter: %v, want context.Canceled", err)
		}
	}()
	k := layout.For(prefix+"m", false)
	waitFor(t, ctx, func() bool {
		r := inspectJSON(t, ctx, d, prefix, "m")
		return len(r.MutexWaiters) == 1 && !r.MutexWaiters[0].Stale
	})
	const dead = "0badc0de-0000-4000-8000-000000000000:gone"
	if err := d.rc.Do(ctx, d.rc.B().Zadd().Key(k.LockWaiters).ScoreMember().ScoreMember(1, dead).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	runCtx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan int, 1)
	go func() {
		watchDone <- run(runCtx, []string{"--url", d.url, "watch", "--key-prefix", prefix, "m"}, strings.NewReader(""), &out, &errOut)
	}()
	waitFor(t, ctx, func() bool { return out.lines()[0] != "" })
	stopWatch()
	<-watchDone
	line := out.lines()[0]
	if !strings.Contains(line, "2 Go waiters: "+dead+" (stale), "+waiterClient.ID()) || strings.Count(line, "(stale)") != 1 {
		t.Errorf("watch line does not mark the dead Go waiter alone as stale:\n%s", line)
	}
}
