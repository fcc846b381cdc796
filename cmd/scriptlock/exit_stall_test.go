package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// stampedWriter keeps what is written and when it was first written to.
type stampedWriter struct {
	mu    sync.Mutex
	first time.Time
	b     []byte
}

func (w *stampedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first.IsZero() {
		w.first = time.Now()
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// An interrupted watch of a server that stopped answering (SIGSTOP, a hung
// host behind a live kernel) exits at once: the connection's closing
// handshake waits for the server's reply, up to a second, which no operator
// pressing Ctrl-C should wait out. So does a command whose round trip ran
// out of --timeout: it exits once it said so, not a second later.
func TestExitAgainstStalledServer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	defer node.Resume()
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var out stampedWriter
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--url", "redis://" + node.Addr, "--timeout", "300ms", "watch", "--interval", "100ms", "x"}, nil, &out, &out)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out.mu.Lock()
		started := len(out.b) > 0
		out.mu.Unlock()
		if started {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("watch printed nothing within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	node.Pause()
	time.Sleep(700 * time.Millisecond) // reads time out meanwhile
	interrupt()
	start := time.Now()
	select {
	case code := <-done:
		took := time.Since(start)
		if code != exitOK || took > 700*time.Millisecond {
			out.mu.Lock()
			t.Errorf("watch interrupted against a stalled server: exit %d after %s, want %d within 700ms\n%s", code, took, exitOK, out.b)
			out.mu.Unlock()
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not return within 10s of the interrupt")
	}
}
