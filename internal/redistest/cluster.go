package redistest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

const clusterSlots = 16384

// ClusterT is a Redis Cluster started by Cluster: primaries, and replicas
// with WithClusterReplicas.
type ClusterT struct {
	Nodes    []*Node  // every node; which are primaries changes with failovers (NodeFor, Primaries)
	Addrs    []string // Nodes[i].Addr
	TLSAddrs []string // Nodes[i].TLSAddr, with WithTLS
}

// Cluster starts primaries (at least 3) cluster-enabled nodes in parallel,
// and r more per primary with WithClusterReplicas(r), joins them with
// `redis-cli --cluster create ... --cluster-replicas r --cluster-yes`, and
// waits until every node reports cluster_state:ok, all nodes agree on the slot
// map, every replica is in sync with its primary and every node's CLUSTER
// SLOTS lists every node. cluster-node-timeout is 2000 ms.
func Cluster(t testing.TB, primaries int, opts ...Option) *ClusterT {
	t.Helper()
	if primaries < 3 {
		t.Fatalf("redistest: Cluster needs at least 3 primaries, got %d", primaries)
	}
	cfg := newConfig(opts)
	files := sharedTLS(t, &cfg) // the nodes connect to each other on the bus
	c := &ClusterT{Nodes: make([]*Node, primaries*(1+cfg.replicas))}
	for i := range c.Nodes {
		c.Nodes[i] = newNode(t, cfg)
		c.Nodes[i].cluster = true
		c.Nodes[i].TLS = files
	}
	startAll(t, c.Nodes)
	for _, n := range c.Nodes {
		c.Addrs = append(c.Addrs, n.Addr)
		if n.TLS != nil {
			c.TLSAddrs = append(c.TLSAddrs, n.TLSAddr)
		}
	}

	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli not found in PATH: %s", installHint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(append([]string{"--cluster", "create"}, c.Addrs...), "--cluster-replicas", strconv.Itoa(cfg.replicas), "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := waitClusterReady(c.Nodes, startTimeout); err != nil {
		t.Fatalf("redistest: cluster %v: %v", c.Addrs, err)
	}
	if err := waitReplicasSynced(c.Nodes, primaries*cfg.replicas, startTimeout); err != nil {
		t.Fatalf("redistest: cluster %v: %v", c.Addrs, err)
	}
	if cfg.replicas > 0 {
		// A node's CLUSTER SLOTS lists a replica only once it knows the
		// replica's replication offset is above 0. On a primary nothing was
		// written to, that offset first moves with its PING to its replicas,
		// every repl-ping-replica-period (10 s) from its start, and reaches
		// the other nodes by gossip after that: clients then read nodes
		// without replicas for up to 10 s or more. A FLUSHALL of the empty
		// primaries (always replicated) moves the offsets now; if a test
		// renamed it away, the wait below covers the PING.
		for _, n := range c.Nodes {
			if info, err := rawCmd(n.Addr, time.Second, "INFO", "replication"); err == nil && infoField(info, "role") == "master" {
				_, _ = rawCmd(n.Addr, time.Second, "FLUSHALL")
			}
		}
		if err := waitSlotsListAll(c.Nodes, slotsListTimeout); err != nil {
			t.Fatalf("redistest: cluster %v: %v", c.Addrs, err)
		}
	}
	return c
}

// slotsListTimeout bounds waitSlotsListAll: a PING's period (10 s, when the
// FLUSHALL is refused) and gossip between 2 s-timeout nodes on loaded cores.
const slotsListTimeout = 30 * time.Second

// waitSlotsListAll polls until every node's CLUSTER SLOTS names every node,
// each range's replicas beside its primary.
func waitSlotsListAll(nodes []*Node, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		missing := ""
		for _, n := range nodes {
			reply, err := rawCmd(n.Addr, time.Second, "CLUSTER", "SLOTS")
			ranges, _ := reply.([]any)
			ports := map[int64]bool{}
			for _, r := range ranges {
				e, _ := r.([]any)
				for _, node := range e[min(2, len(e)):] {
					if f, _ := node.([]any); len(f) >= 2 {
						port, _ := f[1].(int64)
						ports[port] = true
					}
				}
			}
			if err != nil || len(ports) != len(nodes) {
				missing = fmt.Sprintf("%s lists %d of %d nodes (%v)", n.Addr, len(ports), len(nodes), err)
				break
			}
		}
		if missing == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CLUSTER SLOTS after %v: %s", timeout, missing)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitReplicasSynced polls until want nodes are replicas whose link to their
// primary is up.
func waitReplicasSynced(nodes []*Node, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		synced := 0
		for _, n := range nodes {
			info, err := rawCmd(n.Addr, time.Second, "INFO", "replication")
			if err == nil && infoField(info, "role") == "slave" && infoField(info, "master_link_status") == "up" {
				synced++
			}
		}
		if synced == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d replicas in sync after %v", synced, want, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Primaries returns the nodes that serve slots now, as CLUSTER SLOTS on the
// first node that answers reports them.
func (c *ClusterT) Primaries(t testing.TB) []*Node {
	t.Helper()
	for _, n := range c.Nodes {
		var out []*Node
		for _, r := range c.slotRanges(n) {
			if !slices.Contains(out, r.primary) {
				out = append(out, r.primary)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	t.Fatalf("redistest: no node of %v reports its primaries", c.Addrs)
	return nil
}

// slotRange is one range of CLUSTER SLOTS and the node serving it.
type slotRange struct {
	start, end int64
	primary    *Node
}

// slotRanges reads CLUSTER SLOTS from n: the ranges whose primary is one of
// c's nodes; none when n does not answer.
func (c *ClusterT) slotRanges(n *Node) []slotRange {
	reply, err := rawCmd(n.Addr, time.Second, "CLUSTER", "SLOTS")
	if err != nil {
		return nil
	}
	rs, _ := reply.([]any)
	var out []slotRange
	for _, r := range rs {
		e, _ := r.([]any)
		if len(e) < 3 {
			continue
		}
		primary, _ := e[2].([]any)
		if len(primary) < 2 {
			continue
		}
		start, _ := e[0].(int64)
		end, _ := e[1].(int64)
		port, _ := primary[1].(int64)
		for _, m := range c.Nodes {
			if m.Port == int(port) {
				out = append(out, slotRange{start, end, m})
			}
		}
	}
	return out
}

// Client returns a rueidis cluster client seeded with every node
// (DisableCache). opts may change the option before the client is built. The
// client is closed when the test ends.
func (c *ClusterT) Client(t testing.TB, opts ...func(*rueidis.ClientOption)) rueidis.Client {
	t.Helper()
	opt := rueidis.ClientOption{
		InitAddress:  slices.Clone(c.Addrs),
		DisableCache: true,
	}
	for _, o := range opts {
		o(&opt)
	}
	return newClient(t, opt)
}

// waitClusterReady polls until every node reports cluster_state:ok and the
// same slot map covering all slots.
func waitClusterReady(nodes []*Node, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := clusterAgrees(nodes)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func clusterAgrees(nodes []*Node) error {
	var first string
	for i, n := range nodes {
		info, err := rawCmd(n.Addr, time.Second, "CLUSTER", "INFO")
		if err != nil {
			return err
		}
		if s := infoField(info, "cluster_state"); s != "ok" {
			return fmt.Errorf("%s: cluster_state:%s", n.Addr, s)
		}
		reply, err := rawCmd(n.Addr, time.Second, "CLUSTER", "SLOTS")
		if err != nil {
			return err
		}
		slots, err := slotMap(reply)
		if err != nil {
			return fmt.Errorf("%s: %w", n.Addr, err)
		}
		if i == 0 {
			first = slots
		} else if slots != first {
			return fmt.Errorf("%s sees slots %s, %s sees %s", n.Addr, slots, nodes[0].Addr, first)
		}
	}
	return nil
}

// slotMap turns a CLUSTER SLOTS reply into a canonical "start-end@port ..."
// string, and checks that it covers every slot.
func slotMap(reply any) (string, error) {
	if e, ok := reply.(respError); ok {
		return "", e
	}
	ranges, ok := reply.([]any)
	if !ok {
		return "", fmt.Errorf("CLUSTER SLOTS: unexpected reply %T", reply)
	}
	var parts []string
	covered := int64(0)
	for _, r := range ranges {
		e, ok := r.([]any)
		if !ok || len(e) < 3 {
			return "", errors.New("CLUSTER SLOTS: malformed range")
		}
		start, _ := e[0].(int64)
		end, _ := e[1].(int64)
		primary, _ := e[2].([]any)
		if len(primary) < 2 {
			return "", errors.New("CLUSTER SLOTS: malformed node")
		}
		covered += end - start + 1
		parts = append(parts, fmt.Sprintf("%05d-%05d@%v", start, end, primary[1]))
	}
	if covered != clusterSlots {
		return "", fmt.Errorf("%d of %d slots assigned", covered, clusterSlots)
	}
	slices.Sort(parts)
	return strings.Join(parts, " "), nil
}

// NodeFor returns the node that serves key's slot, as the cluster reports it
// now (CLUSTER KEYSLOT, then CLUSTER SLOTS), for tests that fail the owner of
// a key.
func (c *ClusterT) NodeFor(t testing.TB, key string) *Node {
	t.Helper()
	for _, n := range c.Nodes {
		slot, err := rawCmd(n.Addr, time.Second, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			continue // node down: ask another
		}
		s, _ := slot.(int64)
		for _, r := range c.slotRanges(n) {
			if r.start <= s && s <= r.end {
				return r.primary
			}
		}
	}
	t.Fatalf("redistest: no node of %v serves key %q", c.Addrs, key)
	return nil
}
