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
	srv, err := recharge.NewServer(recharge.Config{Service: &recharge.Service{Store: store}, Locks: locks, Wait: time.Second})
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
	// answering while it waits.
	time.AfterFunc(300*time.Millisecond, px.Freeze)
	t.Cleanup(px.Thaw)
	a := e.post(t, "1", "")
	px.Thaw()
	if a.code != http.StatusServiceUnavailable {
		t.Errorf("waiting request, Redis frozen: %d %s; want 503", a.code, a.body)
	}
	if st := srv.LockStats(); st.Contended != 0 {
		t.Errorf("LockStats %+v after a wait Redis did not answer; want Contended 0", st)
	}
}
