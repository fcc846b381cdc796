package scriptlock

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// slowReplyClient is a rueidis client whose script calls carrying arg run
// on the server at once, their replies held back until release is closed:
// a slow network on the way back.
type slowReplyClient struct {
	rueidis.Client
	arg     string
	ran     chan struct{} // a send per held call that has run, while there is room
	release chan struct{}
}

func (s *slowReplyClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	cs := cmd.Commands() // read before Do, which may recycle cmd
	held := len(cs) > 0 && (cs[0] == "EVALSHA" || cs[0] == "EVAL") && slices.Contains(cs, s.arg)
	r := s.Client.Do(ctx, cmd)
	if held {
		select {
		case s.ran <- struct{}{}:
		default: // not waited for
		}
		<-s.release
	}
	return r
}

// nodeExpiryBound reads key's PTTL on node and returns the latest time the
// key can expire: the PTTL counted from when its reply arrived (the server
// read it no later), plus the millisecond PTTL rounds down. A validity past
// it is past the node's lease, however late the read was scheduled.
func nodeExpiryBound(ctx context.Context, t *testing.T, node *redistest.Node, key string) (time.Time, time.Duration) {
	t.Helper()
	direct := node.Client(t)
	pttl, err := direct.Do(ctx, direct.B().Pttl().Key(key).Build()).AsInt64()
	answered := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if pttl < 0 {
		t.Fatalf("PTTL of %s = %d: the key has no lease", key, pttl)
	}
	lease := time.Duration(pttl) * time.Millisecond
	return answered.Add(lease + time.Millisecond), lease
}

// TestRedLockConcurrentExtendsValidity: two Extends of a RedLock overlap;
// the one with the longer lease runs first on every node, its replies are
// slow, and the shorter one runs last and is answered first. The nodes hold
// the shorter lease: the RedLock's validity must not move to the longer
// one when its replies come back.
func TestRedLockConcurrentExtendsValidity(t *testing.T) {
	t.Parallel()
	prefix := sharedPrefix(t)
	nodes := redistest.Servers(t, 3)
	const long, short = 50 * time.Second, 5 * time.Second
	cs := make([]*Client, 3)
	release := make(chan struct{})
	ran := make(chan struct{}, 3)
	for i, node := range nodes {
		cs[i] = newTestClient(t, &slowReplyClient{Client: node.Client(t), arg: "50000", ran: ran, release: release}, prefix)
	}
	r := mustRedLock(t, "extend-overlap", cs, WithLease(time.Minute), WithNodeTimeout(10*time.Second))
	ctx := testCtx(t, 60*time.Second)
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Extend(ctx, lctx, time.Minute); err != nil { // scripts loaded
		t.Fatal(err)
	}
	longDone := make(chan error, 1)
	go func() { longDone <- r.Extend(ctx, lctx, long) }()
	for range nodes {
		<-ran
	}
	if err := r.Extend(ctx, lctx, short); err != nil {
		t.Fatalf("short Extend: %v", err)
	}
	close(release)
	if err := <-longDone; err != nil {
		t.Fatalf("long Extend: %v", err)
	}
	var latest time.Time
	for i, node := range nodes {
		at, pttl := nodeExpiryBound(ctx, t, node, r.nodes[i].key)
		if pttl > short {
			t.Fatalf("node %d: PTTL %s, want the short lease last", i, pttl)
		}
		if at.After(latest) {
			latest = at
		}
	}
	dl, ok := lctx.Deadline()
	if !ok {
		t.Fatal("lock context without a deadline")
	}
	if dl.After(latest) {
		t.Fatalf("RedLock validity ends %s after the last node's expiry: it outlives the lease the nodes hold", dl.Sub(latest))
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}

// lateSendClient is a rueidis client whose script calls carrying arg are
// sent only once before is closed, signal ran once run (while there is
// room), and have their
// replies held back until release is closed.
type lateSendClient struct {
	rueidis.Client
	arg     string
	before  chan struct{}
	ran     chan struct{}
	release chan struct{}
}

func (s *lateSendClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	cs := cmd.Commands() // read before Do, which may recycle cmd
	held := len(cs) > 0 && (cs[0] == "EVALSHA" || cs[0] == "EVAL") && slices.Contains(cs, s.arg)
	if held {
		<-s.before
	}
	r := s.Client.Do(ctx, cmd)
	if held {
		select {
		case s.ran <- struct{}{}:
		default: // not waited for (an Unlock sends the hold's lease too)
		}
		<-s.release
	}
	return r
}

// TestRedLockOverlappingExtendsShortenAsSent: two Extends of a RedLock
// overlap, each shortening the validity as it is sent. The one with the
// longer lease read the validity before the shorter one moved it, and
// moves it after; the shorter one then runs last on every node, its
// replies slow. The validity must not end past the shorter lease the
// nodes hold while its replies are on their way.
func TestRedLockOverlappingExtendsShortenAsSent(t *testing.T) {
	t.Parallel()
	prefix := sharedPrefix(t)
	nodes := redistest.Servers(t, 3)
	const long, short = 50 * time.Second, 5 * time.Second
	before, release := make(chan struct{}), make(chan struct{})
	ran := make(chan struct{}, 3)
	cs := make([]*Client, 3)
	for i, node := range nodes {
		cs[i] = newTestClient(t, &lateSendClient{Client: node.Client(t), arg: "5000", before: before, ran: ran, release: release}, prefix)
	}
	r := mustRedLock(t, "extend-overlap-sent", cs, WithLease(time.Minute), WithNodeTimeout(20*time.Second))
	ctx := testCtx(t, 60*time.Second)
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Extend(ctx, lctx, time.Minute); err != nil { // scripts loaded
		t.Fatal(err)
	}
	h := lctx.Value(r.id).(*redHeld)
	read := h.validUntil.Load()
	shortAt, longAt := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	r.shortenHook = func() {
		// Bounded waits: with the validity read and moved in one critical
		// section the other Extend cannot get this far meanwhile.
		if calls.Add(1) == 1 { // the short Extend, its validity read
			close(shortAt)
			select {
			case <-longAt:
			case <-time.After(time.Second):
			}
			return
		}
		close(longAt) // the long one, which read it too
		for deadline := time.Now().Add(time.Second); h.validUntil.Load() == read && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	shortDone := make(chan error, 1)
	go func() { shortDone <- r.Extend(ctx, lctx, short) }()
	<-shortAt
	if err := r.Extend(ctx, lctx, long); err != nil {
		t.Fatalf("long Extend: %v", err)
	}
	close(before) // the short Extend runs last on every node
	for range nodes {
		<-ran
	}
	var latest time.Time
	for i, node := range nodes {
		if at, _ := nodeExpiryBound(ctx, t, node, r.nodes[i].key); at.After(latest) {
			latest = at
		}
	}
	dl, ok := lctx.Deadline()
	if !ok {
		t.Fatal("lock context without a deadline")
	}
	close(release)
	if err := <-shortDone; err != nil {
		t.Fatalf("short Extend: %v", err)
	}
	if dl.After(latest) {
		t.Fatalf("RedLock validity ends %s after the last node's expiry while the shorter Extend's replies were on their way", dl.Sub(latest))
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
