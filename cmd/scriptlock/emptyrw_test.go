package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read-write lock hash with its mode field and no holder (no release leaves
// one: the last deletes the hash) is held by nobody, yet keeps writers out:
// inspect, list and their JSON show it as that, not as a held lock with 0
// holders, and force-unlock deletes it.
func TestEmptyRWHashShownAsMalformed(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{name: "single", url: "redis://" + node.Addr, rc: node.Client(t)}
	for _, mode := range []string{"read", "write"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 30*time.Second)
			prefix := redistest.Prefix(t)
			key := prefix + "catalog:9"
			if err := d.rc.Do(ctx, d.rc.B().Hset().Key(key).FieldValue().FieldValue("mode", mode).Build()).Error(); err != nil {
				t.Fatal(err)
			}
			if r := inspectJSON(t, ctx, d, prefix, "catalog:9"); r.Kind != kindEmptyRW || r.Mode != mode || r.HolderCount != 0 {
				t.Errorf("inspect --json: kind %q, mode %q, %d holders; want kind %q", r.Kind, r.Mode, r.HolderCount, kindEmptyRW)
			}
			r := cli(ctx, d, "", "--key-prefix", prefix, "inspect", "catalog:9")
			if r.code != exitOK || !strings.Contains(r.out, "LAYOUT   malformed read-write lock hash") || strings.Contains(r.out, "RWMutex") {
				t.Errorf("inspect: exit %d, want it shown as a malformed read-write lock hash:\n%s%s", r.code, r.out, r.errOut)
			}
			r = cli(ctx, d, "", "--key-prefix", prefix, "list", "--json")
			var l listing
			if err := json.Unmarshal([]byte(r.out), &l); err != nil || len(l.Locks) != 1 || l.Locks[0].Kind != kindEmptyRW {
				t.Errorf("list --json: %v; want the one key, kind %q:\n%s", err, kindEmptyRW, r.out)
			}
			r = cli(ctx, d, "", "--key-prefix", prefix, "list")
			if !strings.Contains(r.out, "catalog:9  "+kindEmptyRW+"/"+mode+"  0") {
				t.Errorf("list: want catalog:9 as %s/%s with 0 holders:\n%s%s", kindEmptyRW, mode, r.out, r.errOut)
			}
			r = cli(ctx, d, "", "--key-prefix", prefix, "force-unlock", "--yes", "catalog:9")
			n, err := d.rc.Do(ctx, d.rc.B().Exists().Key(key).Build()).AsInt64()
			if r.code != exitOK || err != nil || n != 0 || !strings.Contains(r.out, "released "+key+" ("+kindEmptyRW+")") {
				t.Errorf("force-unlock: exit %d, key exists %d %v; want it deleted\n%s%s", r.code, n, err, r.out, r.errOut)
			}
		})
	}
}
