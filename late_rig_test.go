package scriptlock

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// lateRig is what the tests of releases reaching the server late share: a
// Client c behind a proxy (rueidis drops a connection whose write waits a
// second, and dials anew), a Client other straight on the same server, and
// one lock named name of kind ("Mutex", "FairMutex", "Write" or "Read": an
// RWMutex's sides) on each; field is the owner "job"'s field in the lock's
// hash (a write hold's carries ":write").
type lateRig struct {
	node     *redistest.Node
	px       *netproxy.Proxy
	c, other *Client
	m, rival probeLocker
	field    string
}

// droppingClient is a rueidis client of addr (a proxy's, which may hold
// what is written) that drops a connection whose write waits a second as
// dead, and dials anew, closed at test end.
func droppingClient(t *testing.T, addr string) rueidis.Client {
	t.Helper()
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true,
		PipelineMultiplex: -1, ConnWriteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	return rc
}

func newLateRig(t *testing.T, kind, name string, opts ...Option) *lateRig {
	t.Helper()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc := droppingClient(t, px.Addr)
	prefix := sharedPrefix(t)
	r := &lateRig{node: node, px: px}
	r.c = newTestClient(t, rc, append([]Option{prefix}, opts...)...)
	r.other = newTestClient(t, node.Client(t), prefix)
	r.field = r.c.id + ":job"
	switch kind {
	case "Mutex":
		r.m, r.rival = mustMutex(t, r.c, name), mustMutex(t, r.other, name)
	case "FairMutex":
		r.m, r.rival = mustFair(t, r.c, name), mustFair(t, r.other, name)
	case "Write":
		r.m, r.rival = mustRW(t, r.c, name), mustRW(t, r.other, name)
		r.field += ":write"
	default:
		r.m, r.rival = rwRead{mustRW(t, r.c, name)}, mustRW(t, r.other, name)
	}
	return r
}
