package echolock_test

import (
	"testing"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestKeyPrefixHashTag: a key prefix whose braces make no complete hash tag
// makes every lock name invalid. It fails at startup, not as a 400 blaming
// each client's key; a prefix with a complete tag is accepted.
func TestKeyPrefixHashTag(t *testing.T) {
	env := mwtest.New(t)
	for _, p := range []string{"orders{", "orders{}:", "orders}:", "a}{b:"} {
		if _, err := (echolock.LockConfig{Client: env.Locks, KeyPrefix: p}).ToMiddleware(); err == nil {
			t.Errorf("KeyPrefix %q accepted; every request would answer 400", p)
		}
	}
	for _, p := range []string{"{orders}:", "app:{orders}:", "orders:"} {
		if _, err := (echolock.LockConfig{Client: env.Locks, KeyPrefix: p}).ToMiddleware(); err != nil {
			t.Errorf("KeyPrefix %q refused: %v", p, err)
		}
	}
}
