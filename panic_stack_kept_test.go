package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

//go:noinline
func letGoCallPanics() { panic("let go call panicked") }

//go:noinline
func carriedCallPanics() { panic("carried call panicked") }

// A call let go at its context's end (cuttable) that panics afterwards is
// logged where it ran: its stack is not the one kept for the panic carried
// to the caller (a guarded renewal's, logged by the watchdog's round), which
// is logged with the stack of the call that raised it.
func TestLetGoPanicStackNotKept(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, kept := withPanicStack(context.Background())
	gone, cancel := context.WithCancel(ctx)
	cancel()
	release := make(chan struct{})
	if r := cuttable(gone, log, "a call let go", func() int { <-release; letGoCallPanics(); return 0 }, func(error) int { return -1 }); r != -1 {
		t.Fatalf("a call whose context had ended returned %d, want the failure's -1", r)
	}
	close(release)
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "let go call panicked") }) {
		t.Fatalf("the let-go call's panic was not logged; log:\n%s", logs.String())
	}
	var carried any
	func() {
		defer func() { carried = recover() }()
		cuttable(ctx, log, "a call", func() int { carriedCallPanics(); return 0 }, func(error) int { return -1 })
	}()
	if carried != "carried call panicked" {
		t.Fatalf("the call's panic reached its caller as %v", carried)
	}
	if stack := kept.of(carried, func() []byte { return nil }); !strings.Contains(stack, "carriedCallPanics") {
		t.Fatalf("the stack kept for the panic carried to the caller is not its own:\n%s", stack)
	}
}
