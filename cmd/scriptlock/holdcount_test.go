package main

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A hash whose counts are not integers is no lock (every lock script counts
// holds with HINCRBY): inspect shows it as not a lock layout, list leaves it
// out and force-unlock leaves it alone.
func TestNonIntegerHoldCountIsNoLock(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	field := "0a1b2c3d-0000-4000-8000-000000000001:x"
	for _, v := range []string{"1e3", "1.5", "0x10", " 2"} {
		key := prefix + "h" + v
		if err := d.rc.Do(ctx, d.rc.B().Hset().Key(key).FieldValue().FieldValue(field, v).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if r := inspectJSON(t, ctx, d, prefix, "h"+v); r.Kind != kindUnknown {
			t.Errorf("count %q: kind %s, holds %+v; want %s", v, r.Kind, r.Holders, kindUnknown)
		}
		if r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "h"+v); r.code != exitNotALock {
			t.Errorf("force-unlock of a hash counting %q: exit %d, want %d\n%s%s", v, r.code, exitNotALock, r.out, r.errOut)
		}
		if n := mustInt(t, d.rc.Do(ctx, d.rc.B().Exists().Key(key).Build())); n != 1 {
			t.Errorf("force-unlock deleted the hash counting %q", v)
		}
	}
	if r := cli(ctx, d, "", "list", "--key-prefix", prefix); r.code != exitOK || r.out != "KEY  LAYOUT  HOLDERS  HOLDS  LEASE  QUEUED  FENCE\n" {
		t.Errorf("list: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
}
