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

// A lock let go and taken again by the same owner, faster than watch reads
// it, has the same holders: its new fencing token is what changed, and
// watch shows it, as it shows the token of every new holder.
func TestWatchShowsFencingToken(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	m := mustMutex(t, c, "order:7")
	owner := scriptlock.WithOwner(ctx, "worker")
	l, err := m.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := scriptlock.Fence(l)

	var out, errOut syncBuffer
	wctx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- run(wctx, []string{"--url", d.url, "watch", "--interval", "1h", "--key-prefix", prefix, "order:7"},
			strings.NewReader(""), &out, &errOut)
	}()
	defer func() {
		stop()
		<-done
	}()
	waitFor(t, ctx, func() bool { return out.lines()[0] != "" })
	if line := out.lines()[0]; !strings.Contains(line, "fence="+strconv.FormatInt(first, 10)) {
		t.Errorf("start line %q does not show the holder's fencing token %d", line, first)
	}
	time.Sleep(300 * time.Millisecond) // subscribed
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	l, err = m.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := scriptlock.Fence(l)
	want := "fence=" + strconv.FormatInt(second, 10)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(strings.Join(out.lines(), "\n"), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no line shows the new hold's fencing token %d within 5s:\n%s", second, strings.Join(out.lines(), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
