package main

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// An interrupted command that has said what it did keeps its exit code
// while its cleanup (closing the client) runs on: force-unlock interrupted
// at its prompt exited 1 ("interrupted before the server answered") when
// closing its client outlasted interruptGrace on a loaded machine.
func TestInterruptedOutcomeNotLostToCleanup(t *testing.T) {
	var errOut bytes.Buffer
	e := &env{out: &bytes.Buffer{}, errOut: &errOut}
	cmd := &command{name: "force-unlock"}
	ctx, interrupt := context.WithCancel(context.Background())
	cleaned := make(chan struct{})
	release := make(chan struct{})
	start := time.Now()
	code := e.runInterruptible(ctx, cmd, func() (int, func()) {
		interrupt() // the operator's Ctrl-C, answered at once
		return exitNotConfirmed, func() {
			defer close(cleaned)
			<-release // a client close held up past the grace
		}
	})
	took := time.Since(start)
	close(release)
	<-cleaned
	if code != exitNotConfirmed {
		t.Errorf("exit %d, want %d: the outcome was reported before the cleanup\n%s", code, exitNotConfirmed, errOut.String())
	}
	if took > 5*time.Second {
		t.Errorf("returned %s after the interrupt; the cleanup is not waited for once interrupted", took)
	}
}

// Uninterrupted, the cleanup is waited for: no goroutine of the command
// outlives run.
func TestOutcomeWaitsForCleanup(t *testing.T) {
	e := &env{out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
	cleaned := false
	code := e.runInterruptible(context.Background(), &command{name: "inspect"}, func() (int, func()) {
		return exitOK, func() {
			time.Sleep(50 * time.Millisecond)
			cleaned = true
		}
	})
	if code != exitOK || !cleaned {
		t.Errorf("exit %d, cleaned %v; want %d after the cleanup", code, cleaned, exitOK)
	}
}
