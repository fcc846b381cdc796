package main

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A lock name that is not UTF-8 leaves --json with U+FFFD in "key";
// "key_base64" keeps its bytes, and --name-base64 takes them back: the name
// list printed is the lock force-unlock releases.
func TestNonUTF8NameRoundTrip(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	raw := "order:\xff\xfe:1"
	other := "order:\uFFFD\uFFFD:1" // what the lossy "key" reads as: a lock of its own
	for _, name := range []string{raw, other} {
		if _, err := mustMutex(t, c, name).Lock(scriptlock.WithOwner(ctx, "holder")); err != nil {
			t.Fatal(err)
		}
	}

	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil || len(l.Locks) != 2 {
		t.Fatalf("list --json: %v\n%s%s", err, r.out, r.errOut)
	}
	var b64 string
	for _, lk := range l.Locks {
		k, err := base64.StdEncoding.DecodeString(lk.KeyBase64)
		if err != nil {
			t.Fatalf("key_base64 %q: %v", lk.KeyBase64, err)
		}
		if string(k) == prefix+raw {
			b64 = lk.KeyBase64
		} else if string(k) != prefix+other {
			t.Errorf("key_base64 of %q decodes to %q", lk.Key, k)
		}
	}
	if b64 == "" {
		t.Fatalf("no key_base64 names %q:\n%s", prefix+raw, r.out)
	}

	// Given back with the key prefix still set: the base64 is the whole key.
	r = cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, "--name-base64", b64)
	var rep Report
	if err := json.Unmarshal([]byte(r.out), &rep); r.code != exitOK || err != nil || rep.KeyBase64 != b64 {
		t.Fatalf("inspect --name-base64: exit %d, %v\n%s%s", r.code, err, r.out, r.errOut)
	}
	r = cli(ctx, d, "", "force-unlock", "--yes", "--json", "--key-prefix", prefix, "--name-base64", b64)
	if r.code != exitOK {
		t.Fatalf("force-unlock --name-base64: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	var ur unlockResult
	if err := json.Unmarshal([]byte(r.out), &ur); err != nil || ur.KeyBase64 != b64 || !ur.Released {
		t.Errorf("force-unlock --json: %v\n%s", err, r.out)
	}
	if n := mustInt(t, d.rc.Do(ctx, d.rc.B().Exists().Key(prefix+raw, prefix+other).Build())); n != 1 {
		t.Errorf("%d of the two locks left, want the other one", n)
	}
	if n := mustInt(t, d.rc.Do(ctx, d.rc.B().Exists().Key(prefix+other).Build())); n != 1 {
		t.Errorf("force-unlock released %q, not the lock named", prefix+other)
	}

	if r := cli(ctx, d, "", "inspect", "--name-base64", "not base64!"); r.code != exitUsage || !strings.Contains(r.errOut, "base64") {
		t.Errorf("bad base64: exit %d, %s", r.code, r.errOut)
	}
}
