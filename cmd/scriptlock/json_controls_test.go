package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// --json escapes the runes text output escapes: a key name or owner id
// another program wrote with U+009B (a terminal's CSI), a bidi override or a
// format character past U+FFFF reaches stdout as \uXXXX, not raw, and the JSON
// still reads back as the same name and owner.
func TestJSONEscapesNonPrintable(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	name := "order:\u009b2J\u202e1\U000e0001"
	owner := "w\u009b31m"
	m := mustMutex(t, c, name)
	if _, err := m.Lock(scriptlock.WithOwner(ctx, owner)); err != nil {
		t.Fatal(err)
	}
	raw := []string{"\u009b", "\u202e", "\U000e0001"}
	check := func(what, out string) {
		t.Helper()
		for _, r := range raw {
			if strings.Contains(out, r) {
				t.Errorf("%s writes %+q raw:\n%s", what, r, out)
			}
		}
	}
	r := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, name)
	check("inspect --json", r.out)
	var rep Report
	if err := json.Unmarshal([]byte(r.out), &rep); r.code != exitOK || err != nil || rep.Key != m.Key() {
		t.Fatalf("inspect --json: exit %d, %v, key %+q; want %+q\n%s%s", r.code, err, rep.Key, m.Key(), r.out, r.errOut)
	}
	if !strings.Contains(r.out, `\u009b`) || !strings.Contains(r.out, `\udb40\udc01`) {
		t.Errorf("inspect --json does not escape U+009B and U+E0001 as \\u009b and \\udb40\\udc01:\n%s", r.out)
	}
	r = cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	check("list --json", r.out)
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); r.code != exitOK || err != nil || len(l.Locks) != 1 || l.Locks[0].Key != m.Key() {
		t.Fatalf("list --json: exit %d, %v\n%s%s", r.code, err, r.out, r.errOut)
	}
	if !strings.Contains(r.out, owner[:1]) || strings.Contains(r.out, owner) {
		t.Errorf("list --json: want the owner %+q escaped:\n%s", owner, r.out)
	}
}

// terminalSafeJSON leaves printable text, multi-byte letters among it, as it
// is, and the escaped text decodes to the same value.
func TestTerminalSafeJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"plain", "zoë 注文 🔒", "a\u009bb", "\u200b\u2066x\u2069", "\U000e007f", "\ufeff"} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		safe := terminalSafeJSON(b)
		var back string
		if err := json.Unmarshal(safe, &back); err != nil || back != s {
			t.Errorf("%+q: %s decodes to %+q, %v", s, safe, back, err)
		}
		for _, r := range string(safe) {
			if r >= 0x80 && !strings.ContainsRune("zoë 注文 🔒", r) {
				t.Errorf("%+q: %s keeps %+q raw", s, safe, r)
			}
		}
	}
}
