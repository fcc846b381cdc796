package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// force-unlock refused the release message's channel (NO_PUBLISH) prints
// the refusal, which names the channel, with the lock's name in it shown as
// everything else the command prints shows a name: a rune no terminal should
// get as it is (a C1 control such as CSI, a bidi override) escaped. The
// script replaces only ASCII control bytes, and the name reached the
// terminal as it was.
func TestForceUnlockNoPublishNamePrintable(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs(
		"--user", "ops", "on", ">s3cret", "~*", "resetchannels", "+@all"))
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	const name = "job\u009b2J\u202egnp.exe"
	m := heldMutex(t, ctx, c, name, "holder")
	d := deployment{name: "single", url: "redis://ops:s3cret@" + node.Addr}
	r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, name)
	if r.code != exitFailure || !strings.Contains(r.errOut, "NO_PUBLISH") {
		t.Fatalf("force-unlock without the channel: exit %d, want %d and NO_PUBLISH\n%s%s", r.code, exitFailure, r.out, r.errOut)
	}
	for _, line := range strings.Split(strings.TrimSuffix(r.errOut, "\n"), "\n") {
		if !utf8.ValidString(line) || strings.IndexFunc(line, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
			t.Errorf("force-unlock printed the lock's name unescaped: %q", line)
		}
	}
	if n, err := node.Do(t, "EXISTS", m.Key()).AsInt64(); err != nil || n != 1 {
		t.Errorf("the refused force-unlock changed the lock: EXISTS %d, %v", n, err)
	}
}
