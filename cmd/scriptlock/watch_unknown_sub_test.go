package main

import (
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
	r, exited := watchExit(t, deployment{url: "redis://" + node.Addr}, 10*time.Second, []string{"--sharded", "on"}, "order:1")
	if !exited {
		t.Errorf("watch still running 10s after its subscription was refused (exit %d)\n%s%s", r.code, r.out, r.errOut)
		return
	}
	if r.code != exitFailure || !strings.Contains(r.errOut, "SSUBSCRIBE refused") {
		t.Fatalf("watch: exit %d, want %d with the refused subscription named\n%s%s", r.code, exitFailure, r.out, r.errOut)
	}
	if strings.Contains(r.errOut, "grant the ACL") || strings.Contains(r.errOut, "&*") {
		t.Errorf("watch blames the ACL for a command the server does not have:\n%s", r.errOut)
	}
}
