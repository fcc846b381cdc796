package scriptlock

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// infoSilent is rc with a server that answers everything but INFO server,
// which it leaves unanswered until the call's context ends.
func infoSilent(rc rueidis.Client) rueidis.Client {
	return onInfoServer{rc, func(ctx context.Context, next func() rueidis.RedisResult) rueidis.RedisResult {
		<-ctx.Done()
		return next()
	}}
}

// TestRedLockGrantOfNodeSilentOnRunIDNotCounted: a node that grants the
// lock but leaves its run_id unanswered, asked again once it granted,
// counts as a node that did not answer: its grant is given back. Here it
// reaches, through a proxy, the server another node reaches, and with the
// third node held by another owner its unchecked grant made the quorum: the
// lock was taken on one server's grants.
func TestRedLockGrantOfNodeSilentOnRunIDNotCounted(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 2)
	px := netproxy.New(t, nodes[0].Addr)
	prefix := redistest.Prefix(t)
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), WithKeyPrefix(prefix+"a:")),
		newTestClient(t, nodes[1].Client(t), WithKeyPrefix(prefix+"b:")),
		newTestClient(t, infoSilent(rawClient(t, px.Addr)), WithKeyPrefix(prefix+"c:")),
	}
	ctx := testCtx(t, 20*time.Second)
	const nodeTimeout = 150 * time.Millisecond
	r := mustRedLock(t, "silent-runid", cs, WithNodeTimeout(nodeTimeout))
	if _, err := r.nodes[1].TryLock(WithOwner(ctx, "other"), 0); err != nil {
		t.Fatal(err)
	}
	// A node answering past the node timeout on a loaded machine fails the
	// attempt otherwise (node 0 late: nothing granted; node 2 late: its
	// run_id never asked, nothing checked): tried again once both keys are
	// gone.
	var err error
	for try := 1; ; try++ {
		var lctx context.Context
		lctx, err = r.TryLock(ctx, 0)
		if err == nil {
			_ = r.Unlock(lctx)
			t.Fatal("RedLock took the lock on nodes 0 and 2, which reach one server, node 2's run_id unanswered")
		}
		var qe *QuorumError
		if !errors.As(err, &qe) {
			t.Fatalf("TryLock: %v, want a QuorumError", err)
		}
		if qe.Granted == 1 && slices.ContainsFunc(qe.Errs, func(e error) bool {
			return strings.HasPrefix(e.Error(), "node 2: ") && strings.Contains(e.Error(), "run_id")
		}) {
			break
		}
		if try == 10 {
			t.Fatalf("TryLock: %v, want a QuorumError with node 0's grant alone, node 2's run_id unanswered", err)
		}
		if !eventually(2*time.Second, func() bool {
			k, err := nodes[0].Do(t, "EXISTS", r.nodes[0].Key(), r.nodes[2].Key()).AsInt64()
			return err == nil && k == 0
		}) {
			t.Fatalf("after %v: the grants were not given back", err)
		}
	}
	t.Log(err)
	if !eventually(2*time.Second, func() bool {
		k, err := nodes[0].Do(t, "EXISTS", r.nodes[2].Key()).AsInt64()
		return err == nil && k == 0
	}) {
		t.Fatal("node 2's grant was not given back")
	}
}
