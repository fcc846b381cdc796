package main

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A lock name may be scriptlock.MaxNameLen (1024) bytes long whatever the
// Client's key prefix, so its key is longer: the command inspects it under
// --key-prefix, lists it, and force-unlocks it by its whole key
// (--name-base64), rather than refusing the name or skipping the key.
func TestLongestNameUnderKeyPrefix(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	name := strings.Repeat("n", maxNameLen)
	heldMutex(t, ctx, c, name, "holder")
	if r := cli(ctx, d, "", "inspect", "--key-prefix", prefix, name); r.code != exitOK {
		t.Errorf("inspect: exit %d, want %d\n%s", r.code, exitOK, r.errOut)
	}
	if r := cli(ctx, d, "", "list", "--key-prefix", prefix); r.code != exitOK || !strings.Contains(r.out, name) {
		t.Errorf("list: exit %d, want the lock listed\n%s%s", r.code, r.out, r.errOut)
	}
	whole := base64.StdEncoding.EncodeToString([]byte(prefix + name))
	if r := cli(ctx, d, "", "--name-base64", "force-unlock", "--yes", whole); r.code != exitOK {
		t.Errorf("force-unlock --name-base64: exit %d, want %d\n%s", r.code, exitOK, r.errOut)
	}
	if n, err := d.rc.Do(ctx, d.rc.B().Exists().Key(prefix+name).Build()).AsInt64(); err != nil || n != 0 {
		t.Errorf("the lock is still there after force-unlock (exists %d, %v)", n, err)
	}
}
