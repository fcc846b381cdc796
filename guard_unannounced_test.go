package scriptlock

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSlotMapUnannouncedHostname: on a Cluster whose nodes prefer
// hostnames (cluster-preferred-endpoint-type hostname) and one primary
// announces none, CLUSTER SLOTS names that primary "?": rueidis skips its
// slots (no endpoint to reach it by), and so does the Client's slot map,
// which the failover guard's replica count reads. Read as host "?", it named
// a primary no node of the Client answers for.
func TestSlotMapUnannouncedHostname(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	prims := cl.Primaries(t)
	bare := prims[0]
	asked := prims[1]
	unannounced := map[string]bool{bare.Addr: true, replicaOf(t, cl, bare).Addr: true}
	for _, n := range cl.Nodes {
		if !unannounced[n.Addr] {
			if err := n.Do(t, "CONFIG", "SET", "cluster-announce-hostname", "localhost").Error(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range cl.Nodes {
		if err := n.Do(t, "CONFIG", "SET", "cluster-preferred-endpoint-type", "hostname").Error(); err != nil {
			t.Fatal(err)
		}
	}
	// Every node's hostname (or its absence) known to the node asked.
	waitFor(t, 20*time.Second, "hostnames gossiped", func() bool {
		ranges, err := asked.Do(t, "CLUSTER", "SLOTS").ToArray()
		if err != nil {
			return false
		}
		for _, r := range ranges {
			f, _ := r.ToArray()
			for _, nd := range f[2:] {
				e, _ := nd.ToArray()
				host, _ := e[0].ToString()
				port, _ := e[1].AsInt64()
				want := "localhost"
				if unannounced["127.0.0.1:"+strconv.FormatInt(port, 10)] {
					want = "?"
				}
				if host != want {
					return false
				}
			}
		}
		return true
	})
	owners := slotMap(testCtx(t, 10*time.Second), asked.Addr, asked.Client(t))
	named := map[string]bool{}
	for _, o := range owners {
		if strings.HasPrefix(o.addr, "?") {
			t.Errorf("slot map names %s for slots %d-%d; want that primary's slots skipped, as rueidis does", o.addr, o.start, o.end)
		}
		named[o.addr] = true
	}
	for _, p := range prims[1:] {
		if a := "localhost:" + strconv.Itoa(p.Port); !named[a] {
			t.Errorf("slot map %+v does not name %s", owners, a)
		}
	}
}
