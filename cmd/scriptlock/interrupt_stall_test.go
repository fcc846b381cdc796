package main

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// runInterrupted runs the command against a server that does not answer
// (paused before the run, or by pause once the command has printed what
// started says it has), interrupts it after 300ms, and returns its exit
// code, its output and how long it took to return after the interrupt.
func runInterrupted(t *testing.T, args []string, in io.Reader, started func(string) bool, pause func()) (int, string, time.Duration) {
	t.Helper()
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var out stampedWriter
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, in, &out, &out) }()
	if started != nil {
		deadline := time.Now().Add(10 * time.Second)
		for {
			out.mu.Lock()
			s := started(string(out.b))
			out.mu.Unlock()
			if s {
				break
			}
			if time.Now().After(deadline) {
				out.mu.Lock()
				defer out.mu.Unlock()
				t.Fatalf("%v: not started within 10s:\n%s", args, out.b)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if pause != nil {
		pause()
	}
	time.Sleep(300 * time.Millisecond)
	interrupt()
	start := time.Now()
	select {
	case code := <-done:
		took := time.Since(start)
		out.mu.Lock()
		defer out.mu.Unlock()
		return code, string(out.b), took
	case <-time.After(15 * time.Second):
		t.Fatalf("%v: did not return within 15s of the interrupt", args)
		return 0, "", 0
	}
}

// An interrupt ends a one-shot command at once also while it connects to a
// server that stopped answering (SIGSTOP, a hung host behind a live kernel):
// the dial's handshake waits for the server up to --timeout, deaf to the
// interrupt, which an operator pressing Ctrl-C should not wait out. Nothing
// was sent, and the message says the command was interrupted.
func TestInterruptWhileConnecting(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	node.Pause()
	defer node.Resume()
	for _, c := range [][]string{{"inspect", "interrupt-connecting"}, {"list"}, {"force-unlock", "--yes", "interrupt-connecting"}, {"watch", "interrupt-connecting"}} {
		args := append([]string{"--url", "redis://" + node.Addr, "--timeout", "5s"}, c...)
		code, out, took := runInterrupted(t, args, nil, nil, nil)
		want := exitFailure
		if c[0] == "watch" {
			want = exitOK // an interrupt is how watch ends
		}
		if code != want || took > 700*time.Millisecond {
			t.Errorf("%s interrupted while connecting to a stalled server: exit %d after %s, want %d within 700ms\n%s", c[0], code, took, want, out)
		}
		if c[0] != "watch" && !strings.Contains(out, "interrupted while connecting") {
			t.Errorf("%s interrupted while connecting: output does not say so:\n%s", c[0], out)
		}
	}
}

// So does an interrupt while a command waits for a server that stopped
// answering once connected, and its message says what it leaves: interrupted
// in force-unlock's second read of the lock, after the operator's yes, nothing
// changed, the lock left; interrupted once the delete is sent, the lock may or
// may not be released (whether rueidis wrote the call before the interrupt
// cut it short), and inspect tells.
func TestInterruptMidCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		yes  bool   // --yes: the server is paused right before the delete
		want string // in the message
		key  string // its own: the hook before the delete is found by key, by every test
	}{
		{"confirming read", false, "interrupted before the server answered; nothing changed", "interrupt-confirming-read"},
		{"delete sent", true, "the lock may or may not have been released; see with scriptlock inspect", "interrupt-delete-sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			defer node.Resume()
			node.Do(t, "HSET", tc.key, "b4f1c1e8-3d2a-4c7e-9f10-1234567890ab:1", "1")
			node.Do(t, "PEXPIRE", tc.key, "60000")
			args := []string{"--url", "redis://" + node.Addr, "--timeout", "5s", "force-unlock", tc.key}
			var code int
			var out string
			var took time.Duration
			if tc.yes {
				paused := make(chan struct{})
				var once sync.Once
				meanwhileBeforeDelete(t, tc.key, func() {
					once.Do(func() {
						node.Pause()
						close(paused)
					})
				})
				args = append(args, "--yes")
				code, out, took = runInterrupted(t, args, nil, func(string) bool {
					select {
					case <-paused:
						return true
					default:
						return false
					}
				}, nil)
			} else {
				inR, inW := io.Pipe()
				defer inW.Close()
				code, out, took = runInterrupted(t, args, inR, func(s string) bool { return strings.Contains(s, "[y/N]") }, func() {
					node.Pause()
					if _, err := io.WriteString(inW, "y\n"); err != nil {
						t.Error(err)
					}
				})
			}
			if code != exitFailure || took > 700*time.Millisecond {
				t.Errorf("force-unlock interrupted against the stalled server: exit %d after %s, want %d within 700ms\n%s", code, took, exitFailure, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("force-unlock interrupted: output does not say %q:\n%s", tc.want, out)
			}
			if !tc.yes {
				node.Resume()
				if n := mustInt(t, node.Do(t, "EXISTS", tc.key)); n != 1 {
					t.Errorf("EXISTS %s after force-unlock interrupted before its delete = %d; want the lock left", tc.key, n)
				}
			}
		})
	}
}
