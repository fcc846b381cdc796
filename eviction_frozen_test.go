package scriptlock

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestEvictionWarningFrozenNodeSparesOtherNodes: without the failover guard
// a Client looks at every primary's eviction policy in the background. The
// look shared one 2-second deadline across the primaries, asked one after
// another: a frozen primary asked first used it up, and a healthy primary
// that may evict lock keys went unreported, again at every look while the
// node stayed frozen.
func TestEvictionWarningFrozenNodeSparesOtherNodes(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	rc := cl.Client(t)
	prims := cl.Primaries(t)
	evicting, frozen := prims[0], prims[1]
	evicting.Do(t, "CONFIG", "SET", "maxmemory", "100mb", "maxmemory-policy", "allkeys-lru")
	// Connections to every node open, as in a service that has been running.
	for addr, n := range rc.Nodes() {
		if err := n.Do(context.Background(), n.B().Ping().Build()).Error(); err != nil {
			t.Fatalf("PING %s: %v", addr, err)
		}
	}
	frozen.Pause()
	defer frozen.Resume()

	// Each Client asks the primaries in an order of its own (a map's, seldom
	// a different one for a small map): enough of them that some meet the
	// frozen node before the evicting one.
	const clients = 48
	logs := make([]*syncBuffer, clients)
	cs := make([]*Client, clients)
	for i := range cs {
		logs[i] = new(syncBuffer)
		c, err := New(rc, sharedPrefix(t), WithFailoverGuard(false, 0), WithLogger(slog.New(slog.NewTextHandler(logs[i], nil))))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cs[i] = c
	}
	// Every Client's first acquisition starts its look, all at about once.
	errs := make(chan error, clients)
	for i, c := range cs {
		go func() {
			var m *Mutex
			for j := 0; m == nil; j++ {
				if mm := mustMutex(t, c, "healthy-"+strconv.Itoa(j)); cl.NodeFor(t, mm.Key()) != frozen {
					m = mm
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			l, err := m.Lock(ctx)
			if err == nil {
				err = m.Unlock(l)
			}
			if err != nil {
				err = fmt.Errorf("client %d: Lock and Unlock on a healthy node: %w", i, err)
			}
			errs <- err
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cs {
		// A look ends within its 2-second bound, frozen node or not.
		if !eventually(5*time.Second, func() bool { return c.guard.evictionChecks.Load() != 0 }) {
			t.Fatalf("client %d: no look at the eviction policy within 5s", i)
		}
		// Written by the Client's reporter, just after the look.
		if !eventually(2*time.Second, func() bool { return strings.Contains(logs[i].String(), "maxmemory_policy=allkeys-lru") }) {
			t.Errorf("client %d: the primary that may evict lock keys went unreported while another primary was frozen; log:\n%s", i, logs[i].String())
		}
	}
}
