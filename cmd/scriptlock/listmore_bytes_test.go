package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The command list prints to continue a listing takes the key prefix as it
// was given, whatever its bytes (key prefixes are bytes, as keys are), yet
// prints none of them raw: an invalid or control byte would reach the
// terminal as garbage or an escape sequence, and a copy of the line would
// not give the prefix back. Such a prefix is printed in the shell's $'...'
// form, which the shell reads back to the same bytes.
func TestListContinuationBinaryKeyPrefix(t *testing.T) {
	t.Parallel()
	d := deployments(t)[1] // a cluster: a page per primary
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t) + "\xff\x1b[2J'\\:"
	c := newClient(t, d.rc, prefix)
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		heldMutex(t, ctx, c, "\x07order:"+n, "w")
	}
	r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--prefix", "\x07order:", "--limit", "1")
	i := strings.Index(r.out, "more: ")
	if r.code != exitOK || i < 0 {
		t.Fatalf("exit %d, no continuation:\n%s%s", r.code, r.out, r.errOut)
	}
	more := strings.TrimSpace(r.out[i+len("more: "):])
	if !utf8.ValidString(more) || strings.IndexFunc(more, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		t.Errorf("continuation %s prints bytes raw", strconv.Quote(more))
	}
	// The shell gives the arguments back.
	out, err := exec.Command("bash", "-c", `scriptlock() { printf '%s\0' "$@"; }; `+more).Output()
	if err != nil {
		t.Fatalf("bash on %s: %v", strconv.Quote(more), err)
	}
	args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	got := map[string]string{}
	for i := 0; i+1 < len(args); i++ {
		got[args[i]] = args[i+1]
	}
	if got["--key-prefix"] != prefix || got["--prefix"] != "\x07order:" {
		t.Errorf("the shell reads %s as --key-prefix %q --prefix %q, want %q and %q", strconv.Quote(more), got["--key-prefix"], got["--prefix"], prefix, "\x07order:")
	}
}
