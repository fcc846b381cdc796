package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Mutex's Go waiter whose client no longer listens on its wake channel
// (its process died) is shown as stale, as the next release judges it; a
// waiting Client's is not.
func TestStaleMutexWaiters(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			prefix := redistest.Prefix(t)
			c := newClient(t, d.rc, prefix)
			heldMutex(t, ctx, c, "m", "holder")
			waiter := mustMutex(t, newClient(t, d.rc, prefix), "m")
			wctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := waiter.Lock(wctx)
				done <- err
			}()
			defer func() {
				stop()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Errorf("waiter: %v, want context.Canceled", err)
				}
			}()
			k := layout.For(prefix+"m", d.name != "single")
			const dead = "0badc0de-0000-4000-8000-000000000000:gone"
			waitFor(t, ctx, func() bool {
				n, _ := d.rc.Do(ctx, d.rc.B().Zcard().Key(k.LockWaiters).Build()).AsInt64()
				if n != 1 {
					return false
				}
				// Listening: the live waiter's Client has subscribed.
				r := inspectJSON(t, ctx, d, prefix, "m")
				return len(r.MutexWaiters) == 1 && !r.MutexWaiters[0].Stale
			})
			// Registered earlier than the live waiter: first in line.
			if err := d.rc.Do(ctx, d.rc.B().Zadd().Key(k.LockWaiters).ScoreMember().ScoreMember(1, dead).Build()).Error(); err != nil {
				t.Fatal(err)
			}
			r := inspectJSON(t, ctx, d, prefix, "m")
			if len(r.MutexWaiters) != 2 || r.MutexWaiters[0].Field != dead || !r.MutexWaiters[0].Stale || r.MutexWaiters[1].Stale {
				t.Fatalf("mutex_waiters %+v, want the dead one first and stale, the live one not", r.MutexWaiters)
			}
			out := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "m").out
			var staleRows []string
			for _, line := range strings.Split(out, "\n") {
				if strings.HasSuffix(line, "  stale") {
					staleRows = append(staleRows, line)
				}
			}
			if len(staleRows) != 1 || !strings.Contains(staleRows[0], dead) {
				t.Fatalf("inspect shows stale rows %q, want the dead waiter's alone:\n%s", staleRows, out)
			}
		})
	}
}
