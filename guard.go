package scriptlock

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// guarded reports whether the failover guard applies to an acquisition: it
// is on and the primary has replicas to wait for. With the guard off, the
// eviction policy is still looked at (checkEviction).
func (c *Client) guarded(ctx context.Context, cfg *config) bool {
	if !cfg.guard {
		c.checkEviction()
		return false
	}
	return c.replicas(ctx) > 0
}

// evictionRefresh is how often checkEviction looks at the servers again.
const evictionRefresh = time.Minute

// checkEviction starts, at the first acquisition without the failover guard
// (whose replica count reads the policy otherwise: countReplicas), a
// background look at the eviction policy of every primary, made again every
// evictionRefresh until Close: a lock key evicted under memory pressure is a
// lock lost while its holder runs, and the log must say so whatever the
// guard. After the first call it costs an atomic load.
func (c *Client) checkEviction() {
	g := &c.guard
	if g.evictionStarted.Load() || !g.evictionStarted.CompareAndSwap(false, true) {
		return
	}
	c.background(func() {
		t := time.NewTicker(evictionRefresh)
		defer t.Stop()
		for {
			ctx, cancel := context.WithTimeout(c.ctx, 2*time.Second)
			for _, n := range c.rc.Nodes() {
				info, err := n.Do(ctx, n.B().Info().Section("replication", "memory").Build()).ToString()
				if err == nil && strings.Contains(info, "role:master") {
					c.warnEviction(info)
				}
			}
			cancel()
			g.evictionChecks.Add(1)
			select {
			case <-c.ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// sendGuarded sends an acquiring script call and WAIT 1 in one pipeline on the
// same connection, so WAIT covers exactly that write, and reports whether a
// replica acknowledged it within timeout. A NOSCRIPT reply loads the scripts
// and sends both again.
func (c *Client) sendGuarded(ctx context.Context, timeout time.Duration, build func() (rueidis.Completed, error)) (reply rueidis.RedisResult, acked bool, err error) {
	send := func() ([]rueidis.RedisResult, error) {
		cmd, err := build()
		if err != nil {
			return nil, err
		}
		waitMs := max(timeout.Milliseconds(), 1)
		wait := c.rc.B().Wait().Numreplicas(1).Timeout(waitMs).Build()
		if c.rc.Mode() == rueidis.ClientModeCluster {
			// A Cluster client follows a MOVED or ASK for the script alone
			// and keeps the old node's WAIT reply, which then vouches for a
			// write it never saw (and rueidis fails on an ASK in such a
			// pipeline). A dedicated connection follows no redirection: the
			// redirected reply comes back, and the script and its WAIT are
			// sent together to the node it names (redirect).
			var out []rueidis.RedisResult
			_ = c.rc.Dedicated(func(d rueidis.DedicatedClient) error {
				out = d.DoMulti(ctx, cmd, wait)
				return nil
			})
			return c.redirect(ctx, out, build, waitMs), nil
		}
		return c.rc.DoMulti(ctx, cmd, wait), nil
	}
	replies, err := send()
	if err == nil && isNoScript(replies[0].Error()) {
		if err = generated.Preload(ctx, c.rc); err == nil {
			replies, err = send()
		}
	}
	if err != nil {
		return rueidis.RedisResult{}, false, err
	}
	n, werr := replies[1].AsInt64()
	return replies[0], werr == nil && n >= 1, nil
}

// redirect follows a MOVED or ASK the script of a guarded attempt met on a
// Cluster (out: the replies of the script and its WAIT): the script and a
// new WAIT go out together on one connection to the node the redirection
// names (after ASKING for an ASK), which the Client's slot map may not send
// it to yet. The redirected script ran nothing, so sending it again is safe.
// A node the Client has no connection to, or a command that cannot be
// built, leaves the redirection as it was: the attempt is made again
// (retryLater) once the Client knows the slot's node.
func (c *Client) redirect(ctx context.Context, out []rueidis.RedisResult, build func() (rueidis.Completed, error), waitMs int64) []rueidis.RedisResult {
	re, ok := rueidis.IsRedisErr(out[0].Error())
	if !ok {
		return out
	}
	addr, moved := re.IsMoved()
	asked := false
	if !moved {
		if addr, asked = re.IsAsk(); !asked {
			return out
		}
	}
	n, ok := c.rc.Nodes()[addr]
	if !ok {
		return out
	}
	cmd, err := build()
	if err != nil {
		return out
	}
	wait := n.B().Wait().Numreplicas(1).Timeout(waitMs).Build()
	if !asked {
		return n.DoMulti(ctx, cmd, wait)
	}
	return n.DoMulti(ctx, n.B().Asking().Build(), cmd, wait)[1:]
}

// notReplicated is the error of an acquisition the guard undid.
func notReplicated(timeout time.Duration) error {
	return fmt.Errorf("%w within %s; the acquisition was undone", ErrNotReplicated, timeout)
}

func isNoScript(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsNoScript()
}
