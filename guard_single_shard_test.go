package scriptlock

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// singleNodeCluster starts one cluster-enabled node serving every slot: a
// Cluster that has never met another node, so its CLUSTER SLOTS reports its
// own endpoint as "" (clients use the address they asked).
func singleNodeCluster(t *testing.T) *redistest.Node {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bus := l.Addr().(*net.TCPAddr).Port
	l.Close()
	n := redistest.Server(t, redistest.WithArgs("--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf", "--cluster-port", strconv.Itoa(bus)))
	if err := n.Do(t, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Error(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ := n.Do(t, "CLUSTER", "INFO").ToString()
		if strings.Contains(info, "cluster_state:ok") {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("single-node cluster not ok: %s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGuardSingleNodeCluster: a Cluster of one primary without replicas
// reports its own endpoint as "" in CLUSTER SLOTS. Its replica count (zero)
// must still decide for its slots: counted as unknown (one replica), every
// guarded Lock would WAIT for a replica that does not exist and fail with
// ErrNotReplicated.
func TestGuardSingleNodeCluster(t *testing.T) {
	t.Parallel()
	n := singleNodeCluster(t)
	rc := n.Client(t, func(o *rueidis.ClientOption) { o.ForceSingleClient = false })
	if rc.Mode() != rueidis.ClientModeCluster {
		t.Fatalf("client mode %v, want cluster", rc.Mode())
	}
	c := newTestClient(t, rc, WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "guard-single-node")
	for i := range 2 { // the first counts, the second reads the cached count
		l, err := m.TryLock(ctx, 0)
		if err != nil {
			if errors.Is(err, ErrNotReplicated) {
				t.Fatalf("Lock %d on a single-node Cluster without replicas: %v: the primary's count of zero replicas was not found for its slots", i, err)
			}
			t.Fatalf("Lock %d: %v", i, err)
		}
		if err := m.Unlock(l); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKeySlotServer: keySlot agrees with the server's CLUSTER KEYSLOT on hash
// tag edge cases.
func TestKeySlotServer(t *testing.T) {
	t.Parallel()
	n := singleNodeCluster(t)
	for _, key := range []string{"", "foo", "{}", "{", "}", "{a", "a}", "x{", "{a}}", "}{a}", "{{a}}",
		"a{}b{c}", "{}{a}", "a{b}{c}", "{}foo", "{foo}bar", "bar{foo}", "{user1000}.following", "\xff{\x00}", "lock:{x}:y"} {
		want, err := n.Do(t, "CLUSTER", "KEYSLOT", key).AsInt64()
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT %q: %v", key, err)
		}
		if got := keySlot(key); int64(got) != want {
			t.Errorf("keySlot(%q) = %d, server says %d", key, got, want)
		}
	}
}
