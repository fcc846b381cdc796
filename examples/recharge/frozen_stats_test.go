package recharge_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestFrozenRedisWaitNotContended: a request that waits for its order's
// lock while Redis stops answering is answered 503 (Redis unavailable), and
// LockStats does not count it as Contended, which says the request was
// still locked out by another when the wait ran out (409).
func TestFrozenRedisWaitNotContended(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := recharge.OpenSQLite(ctx, filepath.Join(t.TempDir(), "recharge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Seed(ctx, 1, 1, func(int) int64 { return amount }); err != nil {
		t.Fatal(err)
	}
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	prefix := redistest.Prefix(t)
	locks, err := scriptlock.New(px.Client(t), scriptlock.WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locks.Close() })
	direct, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	srv, err := recharge.NewServer(recharge.Config{Service: &recharge.Service{Store: store}, Locks: locks, Wait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	url, gc := serve(t, srv)
	e := &env{store: store, url: url, grpc: gc}

	holder, err := direct.Mutex(recharge.LockPrefix + "1")
	if err != nil {
		t.Fatal(err)
	}
	hctx, err := holder.Lock(scriptlock.WithOwner(context.Background(), "holder"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Unlock(hctx) }()
	// The request's first attempt finds the lock held; Redis then stops
	// answering while it waits: 300 ms after the server has its
	// subscription to the lock's release (not a fixed delay from the
	// start, which a loaded machine may outrun), by when the confirmation
	// has reached it. A wait whose SUBSCRIBE itself goes unanswered ends
	// reporting the holder its first attempt saw, not the silence.
	t.Cleanup(px.Thaw)
	answered := make(chan httpAnswer, 1)
	go func() { answered <- e.post(t, "1", "") }()
	rc := node.Client(t)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		chans, err := rc.Do(ctx, rc.B().PubsubChannels().Build()).AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		if len(chans) > 0 && srv.LockStats().Waited > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never waited for the held lock")
		}
	}
	time.Sleep(300 * time.Millisecond)
	px.Freeze()
	a := <-answered
	px.Thaw()
	if a.code != http.StatusServiceUnavailable {
		t.Errorf("waiting request, Redis frozen: %d %s; want 503", a.code, a.body)
	}
	if st := srv.LockStats(); st.Contended != 0 {
		t.Errorf("LockStats %+v after a wait Redis did not answer; want Contended 0", st)
	}
}
