package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A server without SSUBSCRIBE (before Redis 7, or with the command
// renamed away) refuses watch --sharded on: watch ends with exit 1, and says
// why without sending the operator to the ACL, which has nothing to do
// with it.
func TestWatchUnknownSubscribeNotBlamedOnACL(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--rename-command", "SSUBSCRIBE", ""))
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan result, 1)
	go func() {
		done <- cli(wctx, deployment{url: "redis://" + node.Addr}, "", "--sharded", "on", "watch", "--interval", "100ms", "--key-prefix", prefix, "order:1")
	}()
	select {
	case r := <-done:
		if r.code != exitFailure || !strings.Contains(r.errOut, "SSUBSCRIBE refused") {
			t.Fatalf("watch: exit %d, want %d with the refused subscription named\n%s%s", r.code, exitFailure, r.out, r.errOut)
		}
		if strings.Contains(r.errOut, "grant the ACL") || strings.Contains(r.errOut, "&*") {
			t.Errorf("watch blames the ACL for a command the server does not have:\n%s", r.errOut)
		}
	case <-time.After(10 * time.Second):
		stop()
		r := <-done
		t.Errorf("watch still running 10s after its subscription was refused (exit %d)\n%s%s", r.code, r.out, r.errOut)
	}
}
