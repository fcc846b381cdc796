package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// inspect and force-unlock refuse a key another lock keeps beside its own
// (here a TrySetPermits record, which holds <client-id>:<n> and reads as a
// LeanMutex's owner, and a read hold's lease key): read as a lock it
// misleads, and force-unlock deleted it. Nothing is changed.
func TestCompanionKeyRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	if _, err := mustSem(t, c, "sem").TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := mustRW(t, c, "doc").RLock(ctx); err != nil {
		t.Fatal(err)
	}
	var companions []string
	for _, pattern := range []string{"redisson_sc_latch:*" + prefix + "sem*", "*" + prefix + "doc*:rwlock_timeout:*"} {
		keys, err := d.rc.Do(ctx, d.rc.B().Keys().Pattern(pattern).Build()).AsStrSlice()
		if err != nil || len(keys) == 0 {
			t.Fatalf("KEYS %s: %v, %v; want the companion key", pattern, keys, err)
		}
		companions = append(companions, keys[0])
	}
	for _, key := range companions {
		for _, args := range [][]string{{"inspect", key}, {"force-unlock", "--yes", key}} {
			r := cli(ctx, d, "", args...)
			if r.code != exitUsage || !strings.Contains(r.errOut, "not a lock") {
				t.Errorf("%s: exit %d, want %d and \"not a lock\"\n%s%s", strings.Join(args, " "), r.code, exitUsage, r.out, r.errOut)
			}
		}
		if n, err := d.rc.Do(ctx, d.rc.B().Exists().Key(key).Build()).AsInt64(); err != nil || n != 1 {
			t.Errorf("%s after the refused force-unlock: EXISTS %d, %v; want it left alone", key, n, err)
		}
	}
}

// inspect and force-unlock refuse a PermitSemaphore's lease set
// ({name}:timeout) as the key of another lock, as they refuse its other
// companion keys, and change nothing: inspect showed it as a key of its own
// ("not a lock layout") and force-unlock refused it only once connected, by
// its type (exit 5, not a usage error).
func TestPermitLeasesRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	ps := mustPermits(t, c, "{sem}")
	if _, err := ps.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	leases := ps.Key() + ":timeout"
	for _, args := range [][]string{{"inspect", leases}, {"force-unlock", "--yes", leases}} {
		r := cli(ctx, d, "", args...)
		if r.code != exitUsage || !strings.Contains(r.errOut, "not a lock") {
			t.Errorf("%s: exit %d, want %d and \"not a lock\"\n%s%s", strings.Join(args, " "), r.code, exitUsage, r.out, r.errOut)
		}
	}
	if n, err := d.rc.Do(ctx, d.rc.B().Zcard().Key(leases).Build()).AsInt64(); err != nil || n != 1 {
		t.Errorf("%s after the refused force-unlock: ZCARD %d, %v; want the held permit's lease left alone", leases, n, err)
	}
	r := cli(ctx, d, "", "list", "--key-prefix", prefix)
	if r.code != exitOK || strings.Contains(r.out, ":timeout") {
		t.Errorf("list: exit %d, want %d and no %s\n%s%s", r.code, exitOK, leases, r.out, r.errOut)
	}
}
