package redistest

import (
	"fmt"
	"net"
	"testing"
	"time"
)

// Replicated starts a primary and a replica of it (replicaof), and waits until
// the replica reports master_link_status:up, so that a write on the primary
// reaches the replica shortly after. Both nodes get opts.
func Replicated(t testing.TB, opts ...Option) (primary, replica *Node) {
	t.Helper()
	cfg := newConfig(opts)
	primary = newNode(t, cfg)
	startAll(t, []*Node{primary})
	replica = newNode(t, cfg)
	host, port, _ := net.SplitHostPort(primary.Addr)
	replica.replicaOf = host + " " + port
	startAll(t, []*Node{replica})
	if err := waitLinkUp(replica.Addr, startTimeout); err != nil {
		t.Fatalf("redistest: replica %s of %s: %v", replica.Addr, primary.Addr, err)
	}
	return primary, replica
}

func waitLinkUp(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		info, err := rawCmd(addr, time.Second, "INFO", "replication")
		if err == nil && infoField(info, "master_link_status") == "up" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("master_link_status not up after %v (last: %q, %v)", timeout, infoField(info, "master_link_status"), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
