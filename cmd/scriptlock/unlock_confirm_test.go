package main

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The operator's yes is about the holds shown: a holder that let go and took
// the lock again while the question was open (the same owner, a new hold
// with a new fencing token), or a change among holders beyond the --limit
// shown, is not taken.
func TestForceUnlockChangedBeyondShownWhileAsking(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{name: "single", url: "redis://" + node.Addr, rc: node.Client(t)}
	t.Run("same owner, new hold", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t, 60*time.Second)
		prefix := redistest.Prefix(t)
		c := newClient(t, d.rc, prefix)
		m := mustMutex(t, c, "order:11")
		first, err := m.Lock(scriptlock.WithOwner(ctx, "worker"))
		if err != nil {
			t.Fatal(err)
		}
		var again context.Context
		in := &answerAfter{answer: strings.NewReader("y\n"), meanwhile: func() {
			// The worker finishes and starts the next job under the lock:
			// its new hold has a new fencing token.
			if err := m.Unlock(first); err != nil {
				t.Error(err)
			}
			if again, err = m.Lock(scriptlock.WithOwner(ctx, "worker")); err != nil {
				t.Error(err)
			}
		}}
		r := runWith(ctx, d, in, "--key-prefix", prefix, "force-unlock", "order:11")
		st, err := m.State(scriptlock.WithOwner(ctx, "worker"))
		if err != nil {
			t.Fatal(err)
		}
		if r.code != exitNotConfirmed || st.HoldCount != 1 {
			t.Fatalf("the worker's new hold was taken on a yes for its old one: exit %d, its hold count now %d (want exit %d, hold kept)\n%s%s",
				r.code, st.HoldCount, exitNotConfirmed, r.out, r.errOut)
		}
		token, ok := scriptlock.Fence(again)
		if !ok || !strings.Contains(r.errOut, "changed hands while asking") || !strings.Contains(r.errOut, "last fencing token "+itoa(token)) {
			t.Errorf("refusal does not name the new hold's token %d:\n%s", token, r.errOut)
		}
	})
	t.Run("holder beyond those read", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t, 60*time.Second)
		prefix := redistest.Prefix(t)
		c := newClient(t, d.rc, prefix)
		rw := mustRW(t, c, "catalog:3")
		// One reader more than force-unlock reads (--limit, 100).
		var last context.Context
		for i := 1; i <= 101; i++ {
			h, err := rw.RLock(scriptlock.WithOwner(ctx, "reader-"+itoa(int64(i))))
			if err != nil {
				t.Fatal(err)
			}
			last = h
		}
		in := &answerAfter{answer: strings.NewReader("y\n"), meanwhile: func() {
			// The last reader, not among those read, leaves; another comes.
			if err := rw.RUnlock(last); err != nil {
				t.Error(err)
			}
			if _, err := rw.RLock(scriptlock.WithOwner(ctx, "reader-102")); err != nil {
				t.Error(err)
			}
		}}
		r := runWith(ctx, d, in, "--key-prefix", prefix, "force-unlock", "catalog:3")
		st, err := rw.State(scriptlock.WithOwner(ctx, "reader-102"))
		if err != nil {
			t.Fatal(err)
		}
		if r.code != exitNotConfirmed || st.Reads != 1 {
			t.Fatalf("reader-102's hold was taken on a yes for reader-101's: exit %d, its read holds now %d (want exit %d, hold kept)\n%s",
				r.code, st.Reads, exitNotConfirmed, r.out)
		}
		if !strings.Contains(r.errOut, "and 1 more") {
			t.Errorf("refusal does not count the holders not read:\n%s", lastLines(r.errOut, 3))
		}
	})
}

// runWith runs the command line in-process with the operator's input in.
func runWith(ctx context.Context, d deployment, in io.Reader, args ...string) result {
	var out, errOut bytes.Buffer
	code := run(ctx, append([]string{"--url", d.url}, args...), in, &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// lastLines is the end of a long output.
func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}
