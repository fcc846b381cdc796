package scriptlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// acquireGuarded runs the acquire script and WAIT in one pipeline on the same
// connection, so WAIT covers exactly this write. When no replica acknowledged
// it in time, the acquisition is undone: a failover now would promote a
// replica without the lock and let a second owner in.
func (c *Client) acquireGuarded(ctx context.Context, m *Mutex, field string, lease time.Duration) (int64, error) {
	cmd, err := generated.MutexAcquireCommand(c.rc, m.key, m.fence, lease, field)
	if err != nil {
		return 0, err
	}
	wait := c.rc.B().Wait().Numreplicas(1).Timeout(max(m.cfg.guardTimeout.Milliseconds(), 1)).Build()
	replies := c.rc.DoMulti(ctx, cmd, wait)
	if isNoScript(replies[0].Error()) {
		if err := generated.Preload(ctx, c.rc); err != nil {
			return 0, err
		}
		cmd, _ = generated.MutexAcquireCommand(c.rc, m.key, m.fence, lease, field)
		wait = c.rc.B().Wait().Numreplicas(1).Timeout(max(m.cfg.guardTimeout.Milliseconds(), 1)).Build()
		replies = c.rc.DoMulti(ctx, cmd, wait)
	}
	res, err := generated.DecodeMutexAcquire(replies[0])
	if err != nil || !acquireResult(res).acquired() {
		return res, err
	}
	acked, err := replies[1].AsInt64()
	if err == nil && acked >= 1 {
		return res, nil
	}
	// Undo exactly the hold just taken (a re-entry only gives back one hold).
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.releaseTimeout)
	defer cancel()
	if _, _, uerr := c.release(rctx, m, lease, field); uerr != nil {
		c.log.Error("failover guard could not undo an unreplicated acquisition; it expires with its lease",
			"lock", m.name, "err", uerr)
	}
	if err != nil {
		return 0, fmt.Errorf("failover guard: WAIT: %w", err)
	}
	return 0, fmt.Errorf("%w within %s (lock %q)", ErrNotReplicated, m.cfg.guardTimeout, m.name)
}

func isNoScript(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsNoScript()
}
