package main

import (
	"context"
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
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan result, 1)
	go func() {
		done <- cli(wctx, deployment{url: "redis://ops:s3cret@" + node.Addr}, "", "watch", "--interval", "100ms", "--key-prefix", prefix, "order:1")
	}()
	select {
	case r := <-done:
		if r.code != exitFailure || !strings.Contains(r.errOut, "can't run this command") {
			t.Errorf("watch: exit %d, want %d naming the refusal\n%s%s", r.code, exitFailure, r.out, r.errOut)
		}
	case <-time.After(5 * time.Second):
		stop()
		r := <-done
		t.Errorf("watch still running 5s after its reads were refused (exit %d on interrupt)\nstderr: %.300s", r.code, r.errOut)
	}
}
