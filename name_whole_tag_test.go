package scriptlock

import (
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Without a key prefix, a name that is one whole hash tag ("{x}") is
// ErrInvalidName: Redisson's rule derives its companion keys from it as it
// does from "x" ({x}:timeout, redisson_lock_token:{x}, scriptlock_fair_queue:{x},
// the channels), so a PermitSemaphore "{x}" reclaimed and handed out "x"'s
// permits, a FairMutex "x" waited behind "{x}"'s queue, and an RWMutex
// "{x}"'s read release deleted "x"'s read leases. Names with a tag and more,
// and the same name under a prefix (whose keys differ), are fine.
func TestNameWholeHashTagRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	bare := newTestClient(t, node.Client(t), WithKeyPrefix(""))
	prefixed := newTestClient(t, node.Client(t))
	kinds := map[string]func(c *Client, name string) error{
		"Mutex":           func(c *Client, n string) error { _, err := c.Mutex(n); return err },
		"FairMutex":       func(c *Client, n string) error { _, err := c.FairMutex(n); return err },
		"LeanMutex":       func(c *Client, n string) error { _, err := c.LeanMutex(n); return err },
		"RWMutex":         func(c *Client, n string) error { _, err := c.RWMutex(n); return err },
		"Semaphore":       func(c *Client, n string) error { _, err := c.Semaphore(n); return err },
		"PermitSemaphore": func(c *Client, n string) error { _, err := c.PermitSemaphore(n); return err },
		"CountDownLatch":  func(c *Client, n string) error { _, err := c.CountDownLatch(n); return err },
	}
	for kind, make := range kinds {
		for _, name := range []string{"{x}", "{order:42}"} {
			if err := make(bare, name); !errors.Is(err, ErrInvalidName) {
				t.Errorf("%s(%q) without a key prefix: %v, want ErrInvalidName", kind, name, err)
			}
			if err := make(prefixed, name); err != nil {
				t.Errorf("%s(%q) under a key prefix: %v", kind, name, err)
			}
		}
		for _, name := range []string{"x", "{x}:1", "a{x}", "{x}y", "{x}{y}"} {
			if err := make(bare, name); err != nil {
				t.Errorf("%s(%q) without a key prefix: %v", kind, name, err)
			}
		}
	}
}
