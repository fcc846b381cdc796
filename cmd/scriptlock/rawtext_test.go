package main

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Text output (inspect, list, watch without --json) prints a key or a
// holder, owner or waiter field that is not UTF-8, holds a control
// character or begins with a double quote in Go's quoted form: no raw byte
// or escape sequence reaches the terminal, and two such names that differ
// print differently. Other names are printed as they are.
func TestNonUTF8FieldsText(t *testing.T) {
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
	rawName, lossy := "order:\xff\xfe:1", "order:\uFFFD\uFFFD:1"

	m := layout.For(prefix+rawName, false)
	do("HSET", m.Lock, id+":owner\xff\xfe", "1", id+":valid", "1", id+":esc\x1b[2J\tx", "1", id+`:"quoted"`, "1")
	do("PEXPIRE", m.Lock, "60000")
	do("RPUSH", m.FairQueue, id+":queued\xff")
	do("ZADD", m.FairTimeouts, later, id+":queued\xff")
	do("ZADD", m.LockWaiters, now, id+":go\xfe")
	do("PEXPIRE", m.LockWaiters, "60000")
	other := layout.For(prefix+lossy, false)
	do("HSET", other.Lock, id+":valid", "1")
	do("PEXPIRE", other.Lock, "60000")
	rw := layout.For(prefix+"rw", false)
	do("HSET", rw.Lock, "mode", "read", id+":reader", "1")
	do("SET", rw.RWPrefix+":"+id+":reader:rwlock_timeout:1", "1", "PX", "60000") // its read hold's lease
	do("ZADD", rw.Writers, later, id+":writer\xff:write")

	clean := func(what, out string) {
		t.Helper()
		if !utf8.ValidString(out) || strings.ContainsFunc(out, func(r rune) bool { return r < ' ' && r != '\n' || r == 0x7f }) {
			t.Errorf("%s: raw bytes or control characters in\n%q", what, out)
		}
	}
	has := func(what, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: %q not in\n%s", what, w, out)
			}
		}
	}
	q := strconv.Quote

	r := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "--name-base64", b64(prefix+rawName))
	if r.code != exitOK {
		t.Fatalf("inspect: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	clean("inspect", r.out)
	has("inspect", r.out, q(prefix+rawName), q("owner\xff\xfe"), q("esc\x1b[2J\tx"), q(`"quoted"`), " valid ",
		q(id+":queued\xff"), q(id+":go\xfe"))

	r = cli(ctx, d, "", "inspect", "--key-prefix", prefix, "rw")
	clean("inspect rw", r.out)
	has("inspect rw", r.out, q(id+":writer\xff:write"), "reader")

	r = cli(ctx, d, "", "list", "--key-prefix", prefix)
	clean("list", r.out)
	has("list", r.out, "\n"+q(rawName)+" ", "\n"+lossy+" ")

	watch := func(name ...string) string {
		t.Helper()
		return watchFirst(t, ctx, d, append([]string{"--key-prefix", prefix}, name...)...).out
	}
	w := watch("--name-base64", b64(prefix+rawName))
	clean("watch", w)
	has("watch", w, q(id+":owner\xff\xfe")+"×1", q(id+":esc\x1b[2J\tx")+"×1", id+`:"quoted"×1`, id+":valid×1",
		"queued: "+q(id+":queued\xff"), "1 Go waiter: "+q(id+":go\xfe"))
	w = watch("rw")
	clean("watch rw", w)
	has("watch rw", w, "1 writer waiting: "+q(id+":writer\xff:write"))
	w = watch("--name-base64", b64(prefix+"free\xff"))
	clean("watch free", w)
	has("watch free", w, "nothing under "+q(prefix+"free\xff"))

	r = cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "--name-base64", b64(prefix+rawName))
	if r.code != exitOK {
		t.Fatalf("force-unlock: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	clean("force-unlock", r.out)
	has("force-unlock", r.out, "released "+q(prefix+rawName)+" ", "waiters told on "+q(m.FairWake)+":<head waiter's client> via")
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
