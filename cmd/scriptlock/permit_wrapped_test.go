package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Redisson lease near Long.MAX_VALUE ms wraps its permit's lease end below
// 0, which no client reclaims (all reclaim 0 to now): the permit is held
// until released, as PermitSemaphore.State counts it. inspect counted it
// held and listed it as ended, and watch named no holder for it.
func TestInspectPermitLeaseWrappedHeld(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{name: "single", url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	key := prefix + "exports"
	k := layout.For(key, false)
	if err := node.Do(t, "SET", key, "0").Error(); err != nil {
		t.Fatal(err)
	}
	const id = "\x92\x96\xea\xe8\x09\x53\x4b\xe9\x79\xac\xd7\x14\xfe\x49\x0b\xd2"
	if err := node.Do(t, "ZADD", k.Permits, "-9223372036854", id).Error(); err != nil {
		t.Fatal(err)
	}
	res := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, "exports")
	var r Report
	var raw struct {
		Permits []map[string]any `json:"permits"`
	}
	if err := json.Unmarshal([]byte(res.out), &r); res.code != exitOK || err != nil {
		t.Fatalf("inspect --json: exit %d, %v\n%s%s", res.code, err, res.out, res.errOut)
	}
	_ = json.Unmarshal([]byte(res.out), &raw)
	if r.PermitCount != 1 || r.EndedPermitCount != 0 || len(raw.Permits) != 1 || raw.Permits[0]["no_expiry"] != true {
		t.Errorf("permits %v (held %d, ended %d), want the one permit held with no expiry", raw.Permits, r.PermitCount, r.EndedPermitCount)
	}
	text := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "exports")
	if !regexpLine(text.out, `^9296eae809534be979acd714fe490bd2\s+-\s+no expiry$`) {
		t.Errorf("inspect: exit %d, want the permit shown held with no expiry:\n%s%s", text.code, text.out, text.errOut)
	}
	if line := summary(&r); !strings.Contains(line, "1 permit held: 9296eae809534be979acd714fe490bd2") {
		t.Errorf("watch line %q, want the permit named as held", line)
	}
}
