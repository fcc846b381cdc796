package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestClusterFailoverContended: workers on Clients of their own contend
// for one lock under the failover guard and the watchdog while the shard
// serving it fails over again and again, by CLUSTER FAILOVER FORCE and
// TAKEOVER (which promote a replica without the primary's agreement), each
// a few seconds after the demoted primary came back as a replica of the
// new one. Every grant is acknowledged by the replica a failover then
// promotes: no two holders ever hold at once with their contexts alive,
// every grant's fencing token is above the one before it, and no Unlock
// finds its lock gone. Each failover leaves the new primary without
// replicas for a moment: a count taken then must not leave that shard's
// writes unguarded once its replica is back.
func TestClusterFailoverContended(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"FORCE", "TAKEOVER"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
			opts := []Option{sharedPrefix(t), WithWatchdog(3*time.Second, 500*time.Millisecond), WithFailoverGuard(true, 500*time.Millisecond)}
			const workers = 4
			var (
				mu      sync.Mutex
				holder  context.Context // the hold inside, nil: none
				lastTok int64
				grants  atomic.Int64
			)
			ctx, cancel := context.WithCancel(testCtx(t, 120*time.Second))
			var wg sync.WaitGroup
			defer func() {
				cancel()
				wg.Wait() // before the Clients close
			}()
			var key string
			for i := range workers {
				c := newTestClient(t, cl.Client(t), opts...)
				m := mustMutex(t, c, "contended")
				key = m.Key()
				wg.Go(func() {
					for ctx.Err() == nil {
						actx, acancel := context.WithTimeout(ctx, 5*time.Second)
						l, err := m.Lock(WithOwner(actx, fmt.Sprintf("w%d", i)))
						if err != nil {
							acancel()
							if !errors.Is(err, ErrNotReplicated) && ctx.Err() == nil {
								t.Logf("worker %d: Lock: %v", i, err)
							}
							time.Sleep(10 * time.Millisecond)
							continue
						}
						tok, _ := Fence(l)
						mu.Lock()
						if holder != nil && holder.Err() == nil && l.Err() == nil {
							t.Errorf("worker %d granted (token %d) while the hold of token %d is alive", i, tok, lastTok)
						} else if tok <= lastTok {
							t.Errorf("worker %d granted token %d, not above the last grant's %d", i, tok, lastTok)
						}
						holder, lastTok = l, max(lastTok, tok)
						mu.Unlock()
						grants.Add(1)
						time.Sleep(10 * time.Millisecond)
						mu.Lock()
						if holder == l {
							holder = nil
						}
						mu.Unlock()
						if err := m.Unlock(l); errors.Is(err, ErrNotHeld) {
							t.Errorf("worker %d: Unlock of token %d: %v", i, tok, err)
						}
						acancel()
					}
				})
			}
			time.Sleep(time.Second)
			// Three rounds keep each mode within about 15 s.
			for round := range 3 {
				p := cl.NodeFor(t, key)
				replica := replicaOf(t, cl, p)
				if err := replica.Do(t, "CLUSTER", "FAILOVER", mode).Error(); err != nil {
					t.Fatalf("round %d: CLUSTER FAILOVER %s on %s: %v", round, mode, replica.Addr, err)
				}
				if !eventually(20*time.Second, func() bool { return cl.NodeFor(t, key) == replica }) {
					t.Fatalf("round %d: %s not promoted", round, replica.Addr)
				}
				// The demoted primary comes back as a replica of the new one.
				if !eventually(20*time.Second, func() bool {
					info, err := p.Do(t, "INFO", "replication").ToString()
					return err == nil && infoField(info, "role") == "slave" && infoField(info, "master_link_status") == "up"
				}) {
					t.Fatalf("round %d: %s not a replica again", round, p.Addr)
				}
				// A few seconds: a count taken while the new primary had
				// no replica is taken again within about a second, and
				// Redis promotes a primary's replica at most once in twice
				// cluster-node-timeout (FORCE).
				before := grants.Load()
				time.Sleep(3 * time.Second)
				if grants.Load() == before {
					t.Errorf("round %d: no grant in the 3 s after the failover", round)
				}
			}
			t.Logf("%d grants", grants.Load())
		})
	}
}
