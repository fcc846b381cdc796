package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// answerAfter is an operator who reads the prompt, and meanwhile something
// happens (before answering).
type answerAfter struct {
	meanwhile func()
	answer    *strings.Reader
}

func (a *answerAfter) Read(p []byte) (int, error) {
	if a.meanwhile != nil {
		a.meanwhile()
		a.meanwhile = nil
	}
	return a.answer.Read(p)
}

// force-unlock asks about the holders it shows: when another owner holds the
// lock by the time the operator says yes, that owner's hold is not taken.
func TestForceUnlockHolderChangedWhileAsking(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			prefix := redistest.Prefix(t)
			c := newClient(t, d.rc, prefix)
			m := mustMutex(t, c, "order:7")
			stuck, err := m.Lock(scriptlock.WithOwner(ctx, "stuck-worker"))
			if err != nil {
				t.Fatal(err)
			}
			in := &answerAfter{answer: strings.NewReader("y\n"), meanwhile: func() {
				// The stuck worker recovers and releases; a healthy one takes it.
				if err := m.Unlock(stuck); err != nil {
					t.Error(err)
				}
				if _, err := m.Lock(scriptlock.WithOwner(ctx, "healthy-worker")); err != nil {
					t.Error(err)
				}
			}}
			var out, errOut bytes.Buffer
			code := run(ctx, []string{"--url", d.url, "--key-prefix", prefix, "force-unlock", "order:7"}, in, &out, &errOut)
			if !strings.Contains(errOut.String(), "stuck-worker") {
				t.Fatalf("prompt did not show the stuck holder:\n%s", errOut.String())
			}
			st, err := m.State(scriptlock.WithOwner(ctx, "healthy-worker"))
			if err != nil {
				t.Fatal(err)
			}
			if code != exitNotConfirmed || st.HoldCount != 1 {
				t.Errorf("force-unlock confirmed for stuck-worker: exit %d, healthy-worker's hold count now %d "+
					"(want exit %d and its hold kept)\n%s%s", code, st.HoldCount, exitNotConfirmed, out.String(), errOut.String())
			}
			if !strings.Contains(errOut.String(), "changed hands") || !strings.Contains(errOut.String(), "healthy-worker") {
				t.Errorf("refusal does not say who holds it now:\n%s", errOut.String())
			}
		})
	}
}

var _ io.Reader = (*answerAfter)(nil)

// An interrupt (Ctrl-C) at the prompt ends force-unlock, unconfirmed, at once.
func TestForceUnlockInterruptedAtPrompt(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	m := heldMutex(t, ctx, c, "order:8", "worker")
	stdin, typing := io.Pipe() // the operator types nothing
	defer typing.Close()
	interrupted, interrupt := context.WithCancel(ctx)
	done := make(chan int, 1)
	var out, errOut syncBuffer
	go func() {
		done <- run(interrupted, []string{"--url", d.url, "--key-prefix", prefix, "force-unlock", "order:8"}, stdin, &out, &errOut)
	}()
	// At the prompt: an interrupt while it still inspects the lock is
	// another case (a loaded machine took over 500 ms to get here).
	for !strings.Contains(errOut.String(), "[y/N]") {
		if ctx.Err() != nil {
			t.Fatalf("no prompt:\n%s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	interrupt()
	select {
	case code := <-done:
		if code != exitNotConfirmed {
			t.Errorf("interrupted at the prompt: exit %d, want %d\n%s", code, exitNotConfirmed, errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Errorf("force-unlock still waits for an answer 5s after the interrupt")
		typing.Close()
		<-done
	}
	if st, err := m.State(scriptlock.WithOwner(ctx, "worker")); err != nil || st.HoldCount != 1 {
		t.Errorf("after the interrupted force-unlock: %+v %v", st, err)
	}
}
