package scriptlock

import (
	"errors"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// New refuses a key prefix with a brace and no complete hash tag: every name
// without a '}' was refused at its handle, and a name such as "x}" completed
// the prefix's tag, choosing the hash slot of every key of the lock.
func TestKeyPrefixBraces(t *testing.T) {
	t.Parallel()
	rc := redistest.Server(t).Client(t)
	for _, p := range []string{"app:{", "app:{}", "app}:"} {
		c, err := New(rc, WithKeyPrefix(p))
		if err == nil {
			c.Close()
		}
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "WithKeyPrefix") {
			t.Errorf("New(WithKeyPrefix(%q)): %v, want ErrInvalidArgument naming WithKeyPrefix", p, err)
		}
	}
	c := newTestClient(t, rc, WithKeyPrefix("{app}:"))
	if _, err := c.Mutex("x"); err != nil {
		t.Errorf("Mutex under a prefix with a hash tag: %v", err)
	}
}
