package echolock_test

import (
	"testing"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestKeyPrefixHashTag: a key prefix whose braces make no complete hash tag
// makes every lock name invalid. It fails at startup, not as a 400 blaming
// each client's key; a prefix with a complete tag is accepted.
func TestKeyPrefixHashTag(t *testing.T) {
	t.Parallel()
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

// TestKeyPrefixCompanion: a key prefix that makes every lock name the name
// of another lock's companion key (its fencing counter, queue, ...: a
// prefix "redisson_lock_token:", or one that does so only after the
// Client's own key prefix) makes every lock name invalid. It fails at
// startup, not as a 400 blaming each client's key: the lock options were
// checked on the name "probe", without the prefix.
func TestKeyPrefixCompanion(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	for _, p := range []string{"redisson_lock_token:", "scriptlock_fair_queue:app:"} {
		if _, err := (echolock.LockConfig{Client: env.Locks, KeyPrefix: p}).ToMiddleware(); err == nil {
			t.Errorf("KeyPrefix %q accepted; every request would answer 400", p)
		}
	}
	prefixed, err := scriptlock.New(env.Node.Client(t), scriptlock.WithKeyPrefix("redisson_"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prefixed.Close() })
	if _, err := (echolock.LockConfig{Client: prefixed, KeyPrefix: "sc:"}).ToMiddleware(); err == nil {
		t.Error(`KeyPrefix "sc:" under the Client's key prefix "redisson_" accepted; every request would answer 400`)
	}
	if _, err := (echolock.LockConfig{Client: prefixed, KeyPrefix: "orders:"}).ToMiddleware(); err != nil {
		t.Errorf(`KeyPrefix "orders:" under the Client's key prefix "redisson_" refused: %v`, err)
	}
}
