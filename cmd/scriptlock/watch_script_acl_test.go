package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A user the server lets run scripts but not a command the read's script
// calls (here TIME, which is in no @read) is refused every read, inside the
// script: the refusal is the ACL's, as NOPERM is, and no later read does
// better. watch says why and exits 1 rather than printing the refusal every
// interval until interrupted.
func TestWatchScriptCommandRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "&*", "+@all", "-time"))
	r, exited := watchExit(t, deployment{url: "redis://ops:s3cret@" + node.Addr}, 5*time.Second, nil, "order:1")
	if !exited {
		t.Errorf("watch still running 5s after its reads were refused (exit %d on interrupt)\nstderr: %.300s", r.code, r.errOut)
	} else if r.code != exitFailure || !strings.Contains(r.errOut, "can't run this command") && !strings.Contains(r.errOut, "ACL failure in script") {
		t.Errorf("watch: exit %d, want %d naming the refusal\n%s%s", r.code, exitFailure, r.out, r.errOut)
	}
}
