package main

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read-write lock hash whose reader claims hundreds of millions of holds
// (another program's hash, a damaged one) is read in bounded time: only the
// lease keys of a real reader's possible holds are looked at.
func TestHugeReadHoldCountBounded(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	rw := mustRW(t, c, "rw")
	if _, err := rw.RLock(scriptlock.WithOwner(ctx, "reader")); err != nil {
		t.Fatal(err)
	}
	field := "0a1b2c3d-0000-4000-8000-000000000001:huge"
	if err := d.rc.Do(ctx, d.rc.B().Hset().Key(prefix+"rw").FieldValue().FieldValue(field, "300000000").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"inspect", "--json", "rw"}, {"list"}} {
		bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		start := time.Now()
		r := cli(bctx, d, "", append([]string{"--key-prefix", prefix}, args...)...)
		cancel()
		if r.code != exitOK || time.Since(start) > 5*time.Second {
			t.Errorf("%v: exit %d after %v\n%s%s", args, r.code, time.Since(start).Round(time.Millisecond), r.out, r.errOut)
		}
	}
	// None of the claimed holds' lease keys is there: a lapsed reader.
	if r := inspectJSON(t, ctx, d, prefix, "rw"); r.Kind != kindRW || r.HolderCount != 1 || len(r.Lapsed) != 1 || r.Lapsed[0].Field != field {
		t.Errorf("kind %s, %d holders, lapsed readers %+v", r.Kind, r.HolderCount, r.Lapsed)
	}
}
