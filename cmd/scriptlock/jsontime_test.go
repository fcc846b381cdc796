package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A deadline past the year 9999 (another program's score in Redisson's fair
// queue: JSON times end there) does not fail inspect --json, nor turn
// watch --json's line into an empty one: the entry is shown with no
// deadline time, its remaining time as it is.
func TestJSONWithDeadlinePastYear9999(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{name: "single", url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	k := layout.For(prefix+"fair", false)
	const waiter = "0a1b2c3d-0000-4000-8000-000000000001:1"
	if err := node.Do(t, "RPUSH", k.Queue, waiter).Error(); err != nil {
		t.Fatal(err)
	}
	if err := node.Do(t, "ZADD", k.Timeouts, "300000000000000", waiter).Error(); err != nil {
		t.Fatal(err)
	}
	res := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, "fair")
	var r Report
	if err := json.Unmarshal([]byte(res.out), &r); res.code != exitOK || err != nil || len(r.Queue) != 1 || r.Queue[0].RemainingMS <= 0 {
		t.Fatalf("inspect --json: exit %d, %v, queue %+v\n%s%s", res.code, err, r.Queue, res.out, res.errOut)
	}
	w := watchFirst(t, ctx, d, "--json", "--interval", "1h", "--key-prefix", prefix, "fair")
	var ev watchEvent
	if line, _, _ := strings.Cut(w.out, "\n"); json.Unmarshal([]byte(line), &ev) != nil || ev.Report == nil {
		t.Errorf("watch --json start line %q, want the event\nstderr: %s", line, w.errOut)
	}
}
