package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A user the server refuses the read (an ACL without scripting) can watch
// nothing: watch says why and exits 1 rather than printing the refusal every
// interval until interrupted, then exiting 0.
func TestWatchReadRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "&*", "+@all", "-@scripting"))
	r, exited := watchExit(t, deployment{url: "redis://ops:s3cret@" + node.Addr}, 5*time.Second, nil, "order:1")
	if !exited {
		t.Errorf("watch still running 5s after its reads were refused (exit %d on interrupt)\nstderr: %.300s", r.code, r.errOut)
	} else if r.code != exitFailure || !strings.Contains(r.errOut, "NOPERM") {
		t.Errorf("watch: exit %d, want %d naming the refusal\n%s%s", r.code, exitFailure, r.out, r.errOut)
	}
}
