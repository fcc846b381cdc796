package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A permit whose lease ended is held no more: the next acquisition returns
// it to the pool. inspect counts it as a PermitSemaphore's State does.
func TestInspectPermitLeaseEnded(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	p := mustPermits(t, c, "exports")
	if _, err := p.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	// The live permit first: an acquisition after the short lease ended
	// would return its permit to the pool.
	live, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(ctx, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	st, err := p.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, "exports")
	var r Report
	var raw map[string]any
	if err := json.Unmarshal([]byte(res.out), &r); err != nil {
		t.Fatalf("%v\n%s", err, res.out)
	}
	_ = json.Unmarshal([]byte(res.out), &raw)
	if r.Kind != kindPermits || r.PermitCount != st.Held || raw["available"] != float64(st.Available) || raw["ended_permit_count"] != float64(1) {
		t.Errorf("inspect: kind %s, permit_count %d, available %v, ended_permit_count %v; the semaphore's state: %+v, 1 lease ended",
			r.Kind, r.PermitCount, raw["available"], raw["ended_permit_count"], st)
	}
	text := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "exports").out
	for _, want := range []string{"PERMITS HELD  1", "AVAILABLE     2", "ended"} {
		if !strings.Contains(text, want) {
			t.Errorf("table output lacks %q:\n%s", want, text)
		}
	}
	if line := summary(&r); !strings.Contains(line, "1 permit held: "+live+";") {
		t.Errorf("watch line %q, want the one live permit held", line)
	}
}
