package scriptlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// guarded reports whether the failover guard applies to an acquisition: it
// is on and the primary has replicas to wait for.
func (c *Client) guarded(ctx context.Context, cfg *config) bool {
	return cfg.guard && c.replicas(ctx) > 0
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
		wait := c.rc.B().Wait().Numreplicas(1).Timeout(max(timeout.Milliseconds(), 1)).Build()
		return c.rc.DoMulti(ctx, cmd, wait), nil
	}
	start := time.Now()
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
	if o := c.cfg.observer; o != nil {
		o.Guard(GuardEvent{Acknowledged: werr == nil && n >= 1, Duration: time.Since(start)})
	}
	return replies[0], werr == nil && n >= 1, nil
}

// notReplicated is the error of an acquisition the guard undid.
func notReplicated(timeout time.Duration) error {
	return fmt.Errorf("%w within %s; the acquisition was undone", ErrNotReplicated, timeout)
}

// acquireGuarded runs the Mutex acquire script under the failover guard.
// When no replica acknowledged it in time, the acquisition is undone: a
// failover now would promote a replica without the lock and let a second
// owner in.
func (c *Client) acquireGuarded(ctx context.Context, m *Mutex, field string, lease time.Duration) (int64, error) {
	reply, acked, err := c.sendGuarded(ctx, m.cfg.guardTimeout, func() (rueidis.Completed, error) {
		return generated.MutexAcquireCommand(c.rc, m.key, m.fence, lease, field)
	})
	if err != nil {
		return 0, err
	}
	res, err := generated.DecodeMutexAcquire(reply)
	if err != nil || !acquireResult(res).acquired() || acked {
		return res, err
	}
	// Undo exactly the hold just taken (a re-entry only gives back one hold).
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.releaseTimeout)
	defer cancel()
	if _, _, uerr := c.release(rctx, m, lease, field); uerr != nil {
		c.log.Error("failover guard could not undo an unreplicated acquisition; it expires with its lease",
			"lock", m.name, "err", uerr)
	}
	return 0, notReplicated(m.cfg.guardTimeout)
}

func isNoScript(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsNoScript()
}
