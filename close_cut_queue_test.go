package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseCutAttemptLeavesQueue: a queued FairMutex waiter's later attempt
// is in flight on a server busy for longer than the second after which
// Close cuts such an attempt off (CLIENT PAUSE here). The wait ends with
// ErrClosed and the attempt is undone; the waiter's entry in the queue, which
// the server, answering again, could take out, is taken out too: left
// behind, it holds up every waiter behind it until it expires (in
// Redisson's queue until its score passes, up to threadWaitTime times its
// place).
func TestCloseCutAttemptLeavesQueue(t *testing.T) {
	t.Parallel()
	eachFairQueueHeld(t, "cut-queue", func(t *testing.T, r *heldFairRig) {
		node, c, ctx, f := r.node, r.c, r.ctx, r.f
		// The server holds back writes (the waiter's attempt, its leave)
		// until unpaused, while it still answers INFO.
		paused := make(chan struct{})
		var once sync.Once
		c.setAttemptHook(func(_ context.Context, after bool) {
			if !after {
				// The wait's first attempt after subscribing: the
				// server answers it only after the pause.
				once.Do(func() {
					if err := node.Do(t, "CLIENT", "PAUSE", "10000", "WRITE").Error(); err != nil {
						t.Error(err)
					}
					close(paused)
				})
			}
		})
		t.Cleanup(func() { node.Do(t, "CLIENT", "UNPAUSE") })
		res := make(chan error, 1)
		go func() {
			_, err := f.Lock(ctx)
			res <- err
		}()
		<-paused
		// Close once the attempt waits on the server (the waiter may reach
		// it late on a loaded machine); the server answers again 200 ms
		// after Close cut the attempt off (closeUndoMax after it began),
		// early within the second the leave that follows is given. A
		// fixed time from Close could fall, on a loaded machine, before
		// the cut or late in the leave's second.
		for deadline := time.Now().Add(5 * time.Second); blockedClients(t, node) < 1; {
			if time.Now().After(deadline) {
				t.Fatal("the waiter's attempt never reached the paused server")
			}
			time.Sleep(5 * time.Millisecond)
		}
		unpaused := make(chan struct{})
		go func() {
			defer close(unpaused)
			select {
			case <-c.cutCtx.Done():
			case <-ctx.Done():
				return
			}
			time.Sleep(200 * time.Millisecond)
			if err := node.Do(t, "CLIENT", "UNPAUSE").Error(); err != nil {
				t.Error(err)
			}
		}()
		defer func() { <-unpaused }()
		t.Logf("Close returned after %v", r.closeWaiting(t, res).Round(time.Millisecond))
		r.queueEmptied(t)
	})
}

// blockedClients is the count of node's clients waiting on the server, on a
// blocking command or held back by CLIENT PAUSE.
func blockedClients(t *testing.T, node *redistest.Node) int {
	t.Helper()
	info, err := node.Do(t, "INFO", "clients").ToString()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(info, "blocked_clients:")
	n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]))
	if err != nil {
		t.Fatalf("INFO clients: blocked_clients: %v", err)
	}
	return n
}

// heldFairRig is a FairMutex f of Client c whose lock a FairMutex of
// another Client (holder) holds, on a server of its own; ctx ends in 20 s.
type heldFairRig struct {
	node      *redistest.Node
	c         *Client
	ctx       context.Context
	holder, f *FairMutex
}

// eachFairQueueHeld runs test as a parallel subtest for each queue
// protocol (scriptlock's own, Redisson's), with the rig of a FairMutex
// named name whose lock another Client holds.
func eachFairQueueHeld(t *testing.T, name string, test func(t *testing.T, r *heldFairRig)) {
	for _, kind := range []string{"Native", "Redisson"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := &heldFairRig{node: redistest.Server(t)}
			prefix := sharedPrefix(t)
			h := newTestClient(t, r.node.Client(t), prefix)
			r.c = newTestClient(t, r.node.Client(t), prefix)
			r.ctx = testCtx(t, 20*time.Second)
			var opts []LockOption
			if kind == "Redisson" {
				opts = append(opts, WithRedissonFairQueue(0))
			}
			r.holder, r.f = mustFair(t, h, name, opts...), mustFair(t, r.c, name, opts...)
			hctx, err := r.holder.Lock(r.ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer r.holder.Unlock(hctx)
			test(t, r)
		})
	}
}

// closeWaiting closes c while a wait of f is under way (its outcome comes
// on res), which must end it with ErrClosed, and says how long after Close
// began it did.
func (r *heldFairRig) closeWaiting(t *testing.T, res <-chan error) time.Duration {
	t.Helper()
	begun := time.Now()
	r.c.Close()
	if err := <-res; !errors.Is(err, ErrClosed) {
		t.Fatalf("wait ended by Close returned %v, want ErrClosed", err)
	}
	return time.Since(begun)
}

// queueEmptied checks that the waiter's entry was taken out of the queue
// within 3 s of Close (the leave it gave is under way or done; a loaded
// machine can take a second or more to run the server's answer).
func (r *heldFairRig) queueEmptied(t *testing.T) {
	t.Helper()
	if !eventually(3*time.Second, func() bool { return queueLen(t, r.node, r.holder) == 0 }) {
		t.Fatalf("queue length %d after Close: the waiter's entry was left behind, though the server answered", queueLen(t, r.node, r.holder))
	}
}
