package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// rewaitRig is a Mutex of c whose lock another Client holds (hctx), and
// an owner of c shared through its context, "worker" (field in line).
type rewaitRig struct {
	node       *redistest.Node
	c          *Client
	m, holder  *Mutex
	hctx       context.Context
	ctx, owner context.Context // ctx ends in 60 s
	field      string
}

func newRewaitRig(t *testing.T, name string) *rewaitRig {
	t.Helper()
	r := &rewaitRig{node: redistest.Server(t)}
	prefix := sharedPrefix(t)
	r.c = newTestClient(t, r.node.Client(t), prefix)
	other := newTestClient(t, r.node.Client(t), prefix)
	r.ctx = testCtx(t, 60*time.Second)
	r.m = mustMutex(t, r.c, name)
	r.holder = mustMutex(t, other, name)
	var err error
	if r.hctx, err = r.holder.Lock(r.ctx); err != nil {
		t.Fatal(err)
	}
	r.owner = WithOwner(r.ctx, "worker")
	r.field = r.c.id + ":worker"
	return r
}

// placed says whether the owner has a place in the Mutex's line.
func (r *rewaitRig) placed(t *testing.T) bool {
	return !rueidis.IsRedisNil(r.node.Do(t, "ZSCORE", r.m.waiters, r.field).Error())
}

// leaveToStalled has a first wait of the owner take its place in line,
// the server stop answering, and the wait end: its leave goes out in the
// background, to the stalled server.
func (r *rewaitRig) leaveToStalled(t *testing.T) {
	t.Helper()
	first, cancel := context.WithCancel(r.owner)
	done := make(chan error, 1)
	go func() {
		_, err := r.m.Lock(first)
		done <- err
	}()
	if !eventually(5*time.Second, func() bool { return r.placed(t) }) {
		t.Fatal("the first wait never took a place")
	}
	r.node.Pause()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		r.node.Resume()
		t.Fatalf("first wait: %v, want context.Canceled", err)
	}
}
