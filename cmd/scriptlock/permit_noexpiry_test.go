package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Redisson RPermitExpirableSemaphore permit acquired without a lease
// (acquire(), tryAcquire()) has Redisson's lease end 922337203685477 ms,
// beyond the year 9999. It is a permit held with no expiry: inspect shows
// it so, --json included (JSON times end at the year 9999), and watch --json
// prints the event, not an empty line.
func TestInspectRedissonPermitWithoutLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{name: "single", url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	key := prefix + "exports"
	k := layout.For(key, false)
	if err := node.Do(t, "SET", key, "2").Error(); err != nil {
		t.Fatal(err)
	}
	const id = "\x92\x96\xea\xe8\x09\x53\x4b\xe9\x79\xac\xd7\x14\xfe\x49\x0b\xd2"
	if err := node.Do(t, "ZADD", k.Permits, "922337203685477", id).Error(); err != nil {
		t.Fatal(err)
	}
	res := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, "exports")
	var r struct {
		Permits     []map[string]any `json:"permits"`
		PermitCount int64            `json:"permit_count"`
	}
	if err := json.Unmarshal([]byte(res.out), &r); res.code != exitOK || err != nil {
		t.Fatalf("inspect --json: exit %d, %v\n%s%s", res.code, err, res.out, res.errOut)
	}
	if len(r.Permits) != 1 || r.Permits[0]["no_expiry"] != true || r.PermitCount != 1 {
		t.Errorf("permits %v (held %d), want the one permit held with no expiry", r.Permits, r.PermitCount)
	}
	text := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "exports")
	if !regexpLine(text.out, `^9296eae809534be979acd714fe490bd2\s+-\s+no expiry$`) {
		t.Errorf("inspect: exit %d, want the permit shown with no expiry:\n%s%s", text.code, text.out, text.errOut)
	}
	w := watchFirst(t, ctx, d, "--json", "--interval", "1h", "--key-prefix", prefix, "exports")
	var ev watchEvent
	if line, _, _ := strings.Cut(w.out, "\n"); json.Unmarshal([]byte(line), &ev) != nil || ev.Report == nil || len(ev.Report.Permits) != 1 {
		t.Errorf("watch --json start line %q, want the event with the permit\nstderr: %s", line, w.errOut)
	}
}
