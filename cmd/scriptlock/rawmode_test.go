package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A hash's "mode" field is another program's bytes when it is neither read
// nor write: inspect and watch show it quoted, as they show keys and fields,
// so that no escape sequence reaches the terminal.
func TestModeFieldText(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	mode := "\x1b]0;owned\x07\x1b[2J"
	k := layout.For(prefix+"odd", false)
	if err := d.rc.Do(ctx, d.rc.B().Hset().Key(k.Lock).FieldValue().FieldValue("mode", mode).
		FieldValue("0a1b2c3d-0000-4000-8000-000000000001:w", "1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	clean := func(what, out string) {
		t.Helper()
		if strings.ContainsFunc(out, func(r rune) bool { return r < ' ' && r != '\n' || r == 0x7f }) {
			t.Errorf("%s: control characters in\n%q", what, out)
		}
		if !strings.Contains(out, strconv.Quote(mode)) {
			t.Errorf("%s: mode %s not shown in\n%s", what, strconv.Quote(mode), out)
		}
	}
	r := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "odd")
	clean("inspect", r.out)

	clean("watch", watchFirst(t, ctx, d, "--key-prefix", prefix, "odd").out)
}

// force-unlock's refusal after a change while asking names the holders it
// found: a holder's owner id is any bytes (WithOwner), shown quoted.
func TestForceUnlockChangedRefusalText(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	k := layout.For(prefix+"job", false)
	id := "0a1b2c3d-0000-4000-8000-000000000001"
	hset := func(field string) {
		t.Helper()
		if err := d.rc.Do(ctx, d.rc.B().Hset().Key(k.Lock).FieldValue().FieldValue(field, "1").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	hset(id + ":first")
	owner := "\x1b]0;owned\x07"
	in := &answerAfter{answer: strings.NewReader("y\n"), meanwhile: func() {
		// Another holder comes in while the question is open.
		hset(id + ":" + owner)
	}}
	r := runWith(ctx, d, in, "--key-prefix", prefix, "force-unlock", "job")
	if r.code != exitNotConfirmed {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, exitNotConfirmed, r.out, r.errOut)
	}
	refusal := lastLines(r.errOut, 1)
	if strings.ContainsFunc(refusal, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		t.Errorf("control characters in the refusal %q", refusal)
	}
	if !strings.Contains(refusal, strconv.Quote(id+":"+owner)) {
		t.Errorf("the new holder is not named, quoted, in %q", refusal)
	}
}
