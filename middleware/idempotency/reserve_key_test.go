package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestReserveInvalidKey: Reserve takes the key as ParseKey returns it; a key
// ParseKey would refuse (empty, over the length limit, a control character
// or a byte outside printable ASCII) is refused with ErrKeyInvalid before
// anything is sent, and leaves nothing in Redis.
func TestReserveInvalidKey(t *testing.T) {
	t.Parallel()
	s, node, prefix := newStore(t, idempotency.WithMaxKeyLen(16))
	for _, key := range []string{"", strings.Repeat("k", 17), "a\nb", "a\x00", "\xff", "é", strings.Repeat("k", 1<<20)} {
		r, err := s.Reserve(context.Background(), "acct", key, "fp")
		if !errors.Is(err, idempotency.ErrKeyInvalid) || r.Claim != nil {
			t.Errorf("Reserve(key %.20q (%d bytes)) = %+v, %v; want ErrKeyInvalid", key, len(key), r, err)
		}
	}
	if keys, err := node.Do(t, "KEYS", prefix+"*").AsStrSlice(); err != nil || len(keys) != 0 {
		t.Fatalf("after refused reservations: keys %.200q (%v), want none", keys, err)
	}
	if r, err := s.Reserve(context.Background(), "acct", strings.Repeat("k", 16), "fp"); err != nil || r.State != idempotency.Claimed {
		t.Fatalf("Reserve with a key at the limit: %+v, %v; want Claimed", r, err)
	}
}
