package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Another program's hash under the prefix (a cache of profiles, say) is read
// as a possible lock: its field names are needed, its values only as hold
// counts, which are integers. The inspection does not carry its values: a
// SCAN page of such hashes, 100 fields each read, would otherwise bring
// every value of them at once into list's memory.
func TestInspectLeavesLargeValues(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	key := prefix + "profiles"
	value := strings.Repeat("v", 64<<10)
	cmd := d.rc.B().Hset().Key(key).FieldValue()
	for i := range 100 {
		cmd = cmd.FieldValue("0a1b2c3d-0000-4000-8000-00000000000"+strconv.Itoa(i%10)+":user"+strconv.Itoa(i), value)
	}
	if err := d.rc.Do(ctx, cmd.Build()).Error(); err != nil {
		t.Fatal(err)
	}
	k := layout.For(key, false)
	rows, err := generated.Inspect(ctx, d.rc, k.Lock, k.Fence, k.Queue, k.Timeouts, k.Writers, k.Permits, k.RWPrefix,
		k.FairQueue, k.FairTimeouts, k.LockWaiters, 100, readLeaseKeys, false)
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, r := range rows {
		size += len(r)
	}
	if size > 64<<10 {
		t.Errorf("the inspection of a hash of 100 fields of 64 KB values replied %d KB, want under 64 KB (no values)", size>>10)
	}
	// Still read as what it is: not a lock.
	if r := cli(ctx, d, "", "inspect", "--json", "profiles", "--key-prefix", prefix); r.code != exitOK || !strings.Contains(r.out, `"kind": "unknown"`) {
		t.Errorf("inspect: exit %d, want %d and kind unknown\n%s%s", r.code, exitOK, r.out, r.errOut)
	}
}
