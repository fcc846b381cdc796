package main

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An application's hash that happens to have a "mode" field is not a
// read-write lock: inspect says so and force-unlock leaves it alone.
func TestHashWithModeFieldIsNotALock(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	key := prefix + "prefs:42"
	if err := d.rc.Do(ctx, d.rc.B().Hset().Key(key).FieldValue().FieldValue("mode", "dark").FieldValue("theme", "solarized").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	r := inspectJSON(t, ctx, d, prefix, "prefs:42")
	if r.Kind != kindUnknown || r.IsLock() {
		t.Errorf("hash {mode: dark, theme: solarized}: kind %q, holders %+v; want %q", r.Kind, r.Holders, kindUnknown)
	}
	res := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "prefs:42")
	n, err := d.rc.Do(ctx, d.rc.B().Exists().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	if res.code != exitNotALock || n != 1 {
		t.Errorf("force-unlock of the hash: exit %d (want %d), hash exists: %d\n%s%s", res.code, exitNotALock, n, res.out, res.errOut)
	}
}

// Nor is a hash of counts under "a:b" fields a Mutex: lock holds are fields
// <client-id>:<owner-id>, the client id a UUID.
func TestHashOfCountsIsNotALock(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	key := prefix + "visits"
	if err := d.rc.Do(ctx, d.rc.B().Hset().Key(key).FieldValue().FieldValue("2026:11", "5").FieldValue("2026:12", "7").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	r := inspectJSON(t, ctx, d, prefix, "visits")
	if r.Kind != kindUnknown || r.IsLock() {
		t.Errorf("hash {2026:11: 5, 2026:12: 7}: kind %q, holders %+v; want %q", r.Kind, r.Holders, kindUnknown)
	}
	res := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "visits")
	n, err := d.rc.Do(ctx, d.rc.B().Exists().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	if res.code != exitNotALock || n != 1 {
		t.Errorf("force-unlock of the hash: exit %d (want %d), hash exists: %d\n%s%s", res.code, exitNotALock, n, res.out, res.errOut)
	}
}

// An application hash with a "mode" field and a large number in another
// field is not a lock: inspect and list say so at once. They read it as an
// RWMutex's read holds and planned one lease call per 100 of its
// "holds", 500,000 script calls against the server for this hash.
func TestAppHashWithNumericFieldIsQuick(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 120*time.Second)
	prefix := redistest.Prefix(t)
	key := prefix + "prefs:42"
	if err := d.rc.Do(ctx, d.rc.B().Hset().Key(key).FieldValue().FieldValue("mode", "dark").FieldValue("visits", "50000000").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if r := inspectJSON(t, ctx, d, prefix, "prefs:42"); r.Kind != kindUnknown {
		t.Errorf("kind %q, want %q", r.Kind, kindUnknown)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("inspect of a 2-field application hash took %s", took)
	}
	start = time.Now()
	if res := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix); res.code != 0 {
		t.Errorf("list: exit %d", res.code)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("list of one application hash took %s", took)
	}
}
