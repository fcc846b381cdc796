package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Another program's key with '}' and no hash tag under the prefix is no
// lock: list skips it, on a Cluster too, where the keys derived from it
// would hash to other slots and inspect refuses it as a bad name. On a
// single node (where Redisson takes such names) inspect reads it and shows
// it as what it is, not a lock layout.
func TestListSkipsKeyWithLoneClosingBrace(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			prefix := redistest.Prefix(t)
			c := newClient(t, d.rc, prefix)
			heldMutex(t, ctx, c, "order:1", "w")
			if err := d.rc.Do(ctx, d.rc.B().Set().Key(prefix+"cache}1").Value("v").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
			if r.code != exitOK {
				t.Fatalf("list: exit %d\n%s", r.code, r.errOut)
			}
			var l listing
			if err := json.Unmarshal([]byte(r.out), &l); err != nil {
				t.Fatalf("%v\n%s", err, r.out)
			}
			if len(l.Locks) != 1 || l.Locks[0].Key != prefix+"order:1" {
				t.Errorf("listed %+v, want order:1 only", l.Locks)
			}
			r = cli(ctx, d, "", "inspect", "--key-prefix", prefix, "cache}1")
			switch {
			case d.name == "cluster" && r.code != exitUsage:
				t.Errorf("inspect cache}1: exit %d, want %d\n%s", r.code, exitUsage, r.errOut)
			case d.name == "single" && (r.code != exitOK || !strings.Contains(r.out, "not a lock layout")):
				t.Errorf("inspect cache}1: exit %d, want %d and not a lock layout\n%s%s", r.code, exitOK, r.out, r.errOut)
			}
		})
	}
}

// Keys of another program that happen to have the names of a lock's
// companion keys, with other types, are not read as such: list goes on and
// inspect shows the key itself.
func TestCompanionKeysOfOtherTypes(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	heldMutex(t, ctx, c, "order:1", "w")
	user := prefix + "user"
	for _, cmd := range [][]string{
		{"SET", user, "v"},
		{"SET", "{" + user + "}:timeout", "v"},                   // permit leases
		{"HSET", "redisson_lock_token:{" + user + "}", "f", "1"}, // fencing token
		{"SET", "redisson_lock_queue:{" + user + "}", "v"},       // Redisson fair queue
		{"SET", "scriptlock_fair_timeout:{" + user + "}", "v"},
		{"RPUSH", "scriptlock_fair_queue:{" + user + "}", "w"},
		{"SET", "redisson_rwlock_writers:{" + user + "}", "v"},
		{"SET", "scriptlock_lock_waiters:{" + user + "}", "v"},
	} {
		if err := d.rc.Do(ctx, d.rc.B().Arbitrary(cmd...).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	if r.code != exitOK {
		t.Fatalf("list: exit %d\n%s", r.code, r.errOut)
	}
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if len(l.Locks) != 1 || l.Locks[0].Key != prefix+"order:1" {
		t.Errorf("listed %+v, want order:1 only", l.Locks)
	}
	if r := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "user"); r.code != exitOK {
		t.Errorf("inspect user: exit %d\n%s", r.code, r.errOut)
	}
}
