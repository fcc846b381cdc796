package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A key that is one whole hash tag ({x}) is refused (exit 2) by inspect,
// watch and force-unlock, and left out of list: its fencing counter, queues,
// Go waiters and channels are those of x, so inspect showed x's token and
// waiter as its own and force-unlock woke x's waiter by name. Nothing is
// changed.
func TestWholeTagKeyRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	name := strings.Trim(redistest.Prefix(t), ":{}")
	c := newClient(t, d.rc, "")
	m := mustMutex(t, c, name)
	if _, err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	key := "{" + name + "}"
	// A Java RLock under the braced name, as Redisson lays it out.
	if err := d.rc.Do(ctx, d.rc.B().Hset().Key(key).FieldValue().FieldValue("5a1d2c3e-0000-4000-8000-00000000beef:1", "1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"inspect", key}, {"force-unlock", "--yes", key}, {"watch", key}} {
		r := cli(ctx, d, "", args...)
		if r.code != exitUsage || !strings.Contains(r.errOut, "whole hash tag") {
			t.Errorf("%s: exit %d, want %d and \"whole hash tag\"\n%s%s", strings.Join(args, " "), r.code, exitUsage, r.out, r.errOut)
		}
	}
	if n, err := d.rc.Do(ctx, d.rc.B().Exists().Key(key).Build()).AsInt64(); err != nil || n != 1 {
		t.Errorf("%s after the refused force-unlock: EXISTS %d, %v; want it left alone", key, n, err)
	}
	if r := cli(ctx, d, "", "list", "--prefix", name); r.code != exitOK || !strings.Contains(r.out, m.Key()) {
		t.Errorf("list --prefix %s: exit %d, want %d listing %s\n%s%s", name, r.code, exitOK, m.Key(), r.out, r.errOut)
	}
	if r := cli(ctx, d, "", "list", "--prefix", "{"+name); r.code != exitOK || strings.Contains(r.out, key) {
		t.Errorf("list --prefix {%s: exit %d, want %d without %s\n%s%s", name, r.code, exitOK, key, r.out, r.errOut)
	}
}
