package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// watch reads the first 100 holders of a lock: with more, its line says how
// many more hold it, and a holder beyond those read who lets go is a change.
func TestWatchCountsHoldersBeyondThoseRead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	rw := mustRW(t, c, "catalog")
	var holds []context.Context
	for i := 1; i <= 102; i++ {
		h, err := rw.RLock(scriptlock.WithOwner(ctx, "reader-"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		holds = append(holds, h)
	}
	var out, errOut syncBuffer
	wctx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- run(wctx, []string{"--url", d.url, "watch", "--interval", "100ms", "--key-prefix", prefix, "catalog"},
			strings.NewReader(""), &out, &errOut)
	}()
	defer func() {
		stop()
		<-done
	}()
	waitFor(t, ctx, func() bool { return out.lines()[0] != "" })
	if line := out.lines()[0]; !strings.Contains(line, "and 2 more") {
		t.Errorf("start line does not say 2 more hold it than it names:\n%s", line)
	}
	// A reader not among the first 100 read lets go: the count changes.
	shown := out.lines()[0]
	for i, h := range holds {
		if !strings.Contains(shown, "reader-"+strconv.Itoa(i+1)+"×") {
			if err := rw.RUnlock(h); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(out.lines()) < 2 || !strings.Contains(out.lines()[1], "and 1 more") {
		if time.Now().After(deadline) {
			t.Fatalf("no line for a holder beyond those read letting go within 5s:\n%s", strings.Join(out.lines(), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
