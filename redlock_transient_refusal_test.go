package scriptlock

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A majority of nodes that refuse writes for a while (MISCONF: a failed
// RDB save, with stop-writes-on-bgsave-error, until a save succeeds again)
// does not end Lock: it tries again, and takes the lock once they accept
// writes again. It failed at once with a QuorumError, as for a refusal for
// good.
func TestRedLockTransientRefusalOnMajority(t *testing.T) {
	t.Parallel()
	gone := filepath.Join(t.TempDir(), "gone")
	nodes := redistest.Servers(t, 3, redistest.WithArgs("--save", "3600 1", "--enable-protected-configs", "local"))
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	for i := range 2 {
		dir := filepath.Join(gone, string(rune('a'+i)))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := nodes[i].Do(t, "CONFIG", "SET", "dir", dir).Error(); err != nil {
			t.Fatalf("CONFIG SET dir: %v", err)
		}
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := nodes[i].Do(t, "BGSAVE").Error(); err != nil {
			t.Fatal(err)
		}
	}
	if !eventually(5*time.Second, func() bool {
		err := nodes[0].Do(t, "SET", "probe", "1").Error()
		err1 := nodes[1].Do(t, "SET", "probe", "1").Error()
		return err != nil && err1 != nil
	}) {
		t.Skip("the nodes do not refuse writes after a failed save")
	}
	// Writes accepted again a second from now (and the nodes shut down
	// without a save).
	healed := make(chan struct{})
	t.Cleanup(func() { <-healed })
	go func() {
		defer close(healed)
		time.Sleep(time.Second)
		for i := range 2 {
			_ = nodes[i].Do(t, "CONFIG", "SET", "save", "").Error()
		}
	}()
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock with 2 nodes of 3 refusing writes for a second: %v", err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Error(err)
	}
}
