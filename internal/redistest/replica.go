package redistest

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Replicated starts a primary and a replica of it (replicaof), and waits until
// the replica reports master_link_status:up, so that a write on the primary
// reaches the replica shortly after. Both nodes get opts.
func Replicated(t testing.TB, opts ...Option) (primary, replica *Node) {
	t.Helper()
	primary, replicas := ReplicatedN(t, 1, opts...)
	return primary, replicas[0]
}

// ReplicatedN is Replicated with n replicas of the primary, each in sync
// when it returns.
func ReplicatedN(t testing.TB, n int, opts ...Option) (primary *Node, replicas []*Node) {
	t.Helper()
	cfg := newConfig(opts)
	primary = newNode(t, cfg)
	startAll(t, []*Node{primary})
	host, port, _ := net.SplitHostPort(primary.Addr)
	for range n {
		replica := newNode(t, cfg)
		replica.replicaOf = host + " " + port
		replicas = append(replicas, replica)
	}
	startAll(t, replicas)
	for _, replica := range replicas {
		if err := waitSynced(primary, replica, startTimeout); err != nil {
			t.Fatalf("redistest: replica %s of %s: %v", replica.Addr, primary.Addr, err)
		}
	}
	return primary, replicas
}

// waitSynced polls until the replica reports master_link_status:up and the
// primary lists it as online, the point from which the primary streams every
// write to it.
func waitSynced(primary, replica *Node, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		link, state := "", ""
		info, err := rawCmd(replica.Addr, time.Second, "INFO", "replication")
		if err == nil {
			link = infoField(info, "master_link_status")
		}
		if link == "up" {
			info, err = rawCmd(primary.Addr, time.Second, "INFO", "replication")
			if err == nil {
				// The replica may be any slaveN line once there are several.
				for i := range 16 {
					line := infoField(info, "slave"+strconv.Itoa(i))
					// A replica on TLS (tls-replication yes) gives its TLS port.
					if strings.Contains(line, "port="+strconv.Itoa(replica.Port)+",") ||
						replica.TLSPort != 0 && strings.Contains(line, "port="+strconv.Itoa(replica.TLSPort)+",") {
						state = line
						break
					}
				}
				if strings.Contains(state, "state=online") {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not in sync after %v (replica master_link_status:%q, primary lists it as %q, %v)", timeout, link, state, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
