package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A released lock leaves its fencing counter: inspect's text tells it as
// its --json does (the next holder's token follows it), and watch's line
// for the free lock shows it too.
func TestInspectReleasedShowsFence(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	m := mustMutex(t, c, "order:3")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}

	j := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, "order:3")
	var rep Report
	if err := json.Unmarshal([]byte(j.out), &rep); err != nil {
		t.Fatalf("inspect --json: exit %d: %v\n%s%s", j.code, err, j.out, j.errOut)
	}
	if rep.Fence == nil {
		t.Fatalf("inspect --json of a released Mutex shows no fence:\n%s", j.out)
	}
	want := strconv.FormatInt(*rep.Fence, 10)
	txt := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "order:3")
	if txt.code != j.code {
		t.Errorf("inspect: exit %d, --json exits %d", txt.code, j.code)
	}
	if !strings.Contains(txt.out, "FENCE") || !strings.Contains(txt.out, want) {
		t.Errorf("inspect of the released lock hides the fencing counter %s its --json shows:\n%s", want, txt.out)
	}

	var out, errOut syncBuffer
	wctx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- run(wctx, []string{"--url", d.url, "watch", "--interval", "1h", "--key-prefix", prefix, "order:3"},
			strings.NewReader(""), &out, &errOut)
	}()
	waitFor(t, ctx, func() bool { return out.lines()[0] != "" })
	stop()
	<-done
	if line := out.lines()[0]; !strings.Contains(line, "fence="+want) {
		t.Errorf("watch's line for the released lock %q does not show its fencing counter %s", line, want)
	}
}
