package scriptlock

import (
	"context"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

func (c *Client) acquireGuarded(ctx context.Context, m *Mutex, field string, lease time.Duration) (int64, error) {
	return generated.MutexAcquire(ctx, c.rc, m.key, m.fence, lease, field)
}
