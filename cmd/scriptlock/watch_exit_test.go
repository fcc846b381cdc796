package main

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// watchExit runs watch of the lock name on d, every 100ms under a key
// prefix of t's own, with globals before the command, and gives its result
// once it exits; when it has not within limit it is interrupted, and
// exited is false.
func watchExit(t *testing.T, d deployment, limit time.Duration, globals []string, name string) (r result, exited bool) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan result, 1)
	args := append(append([]string{}, globals...), "watch", "--interval", "100ms", "--key-prefix", prefix, name)
	go func() { done <- cli(wctx, d, "", args...) }()
	select {
	case r = <-done:
		return r, true
	case <-time.After(limit):
		stop()
		return <-done, false
	}
}
