package main

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Holder, owner and waiter fields are bytes, like keys: --json has U+FFFD
// for each byte that is not UTF-8, and a "<name>_base64" beside it with the
// exact bytes, present only then (a valid field needs none).
func TestNonUTF8FieldsLossless(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	do := func(args ...string) {
		t.Helper()
		if err := d.rc.Do(ctx, d.rc.B().Arbitrary(args...).Build()).Error(); err != nil {
			t.Fatal(args, err)
		}
	}
	later := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	id := "0a1b2c3d-0000-4000-8000-000000000001"
	bad := func(s string) string { return id + ":" + s + "\xff\xfe" }

	m := layout.For(prefix+"m", false)
	do("HSET", m.Lock, bad("owner"), "1", id+":valid", "1")
	do("PEXPIRE", m.Lock, "60000")
	do("RPUSH", m.FairQueue, bad("queued"))
	do("ZADD", m.FairTimeouts, later, bad("queued"))
	do("ZADD", m.LockWaiters, now, bad("go"))
	do("PEXPIRE", m.LockWaiters, "60000")
	rw := layout.For(prefix+"rw", false)
	do("HSET", rw.Lock, "mode", "read", id+":reader", "1")
	do("SET", rw.RWPrefix+":"+id+":reader:rwlock_timeout:1", "1", "PX", "60000") // its read hold's lease
	do("ZADD", rw.Writers, later, bad("writer")+":write")

	check := func(what string, obj map[string]any, name, want string) {
		t.Helper()
		got, ok := obj[name+"_base64"].(string)
		if want == "" {
			if ok {
				t.Errorf("%s: %s_base64 %q for a valid %s %q", what, name, got, name, obj[name])
			}
			return
		}
		b, err := base64.StdEncoding.DecodeString(got)
		if !ok || err != nil || string(b) != want {
			t.Errorf("%s: %s_base64 %q (%v) decodes to %q, want %q; %s is %q", what, name, got, err, b, want, name, obj[name])
		}
	}
	inspect := func(name string) map[string]any {
		t.Helper()
		r := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, name)
		var v map[string]any
		if err := json.Unmarshal([]byte(r.out), &v); r.code != exitOK || err != nil {
			t.Fatalf("inspect %s: exit %d, %v\n%s%s", name, r.code, err, r.out, r.errOut)
		}
		return v
	}
	list := func(v map[string]any, name string) []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, e := range v[name].([]any) {
			out = append(out, e.(map[string]any))
		}
		return out
	}

	mr := inspect("m")
	holders := list(mr, "holders")
	if len(holders) != 2 {
		t.Fatalf("holders: %v", holders)
	}
	for _, h := range holders {
		if h["owner"] == "valid" {
			check("valid holder", h, "field", "")
			check("valid holder", h, "owner", "")
			check("valid holder", h, "client", "")
			continue
		}
		check("holder", h, "field", bad("owner"))
		check("holder", h, "owner", "owner\xff\xfe")
		check("holder", h, "client", "")
	}
	if q := list(mr, "queue"); len(q) != 1 {
		t.Errorf("queue: %v", q)
	} else {
		check("queued waiter", q[0], "field", bad("queued"))
	}
	if w := list(mr, "mutex_waiters"); len(w) != 1 {
		t.Errorf("mutex waiters: %v", w)
	} else {
		check("Go waiter", w[0], "field", bad("go"))
	}
	rr := inspect("rw")
	if w := list(rr, "pending_writers"); len(w) != 1 {
		t.Errorf("pending writers: %v", w)
	} else {
		check("pending writer", w[0], "field", bad("writer")+":write")
	}
	check("reader", list(rr, "holders")[0], "owner", "")

	// list --json holds the same reports.
	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	var l map[string]any
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatal(err, r.out)
	}
	for _, lk := range list(l, "locks") {
		for _, h := range list(lk, "holders") {
			if h["owner"] != "valid" && h["owner"] != "reader" {
				check("list holder", h, "owner", "owner\xff\xfe")
			}
		}
	}
}
