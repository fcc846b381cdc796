package idempotency_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// An expired usage entry whose size is missing (its field lost with the
// sizes hash, say evicted) is pruned as one of 0 bytes: the scope's total
// moves by 0, which the scripts must not send as -0 (Redis refuses "-0" as
// an integer, failing the call after its claim's first write).
func TestSizelessExpiredEntryPruned(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := redistest.Prefix(t)
	rc := node.Client(t)
	s, err := idempotency.NewStore(rc, idempotency.WithPrefix(prefix), idempotency.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx := context.Background()
	r, err := s.Reserve(ctx, "acct", "first", "fp")
	if err != nil || r.State != idempotency.Claimed {
		t.Fatalf("Reserve(first): %v %v", r.State, err)
	}
	var usage, sizes, record string
	ks, err := node.Do(t, "KEYS", prefix+"*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		switch {
		case strings.HasSuffix(k, ":first"):
			record = k
		case strings.HasSuffix(k, "#usage"):
			usage = k
		case strings.HasSuffix(k, "#sizes"):
			sizes = k
		}
	}
	if usage == "" || sizes == "" || record == "" {
		t.Fatalf("no usage or sizes key under %q", prefix)
	}
	// An entry that expired long ago, its size gone.
	node.Do(t, "ZADD", usage, "1", "gone")
	for _, call := range []struct {
		what string
		run  func() error
	}{
		{"Reserve of a new key", func() error {
			r, err := s.Reserve(ctx, "acct", "second", "fp")
			if err == nil && r.State != idempotency.Claimed {
				t.Errorf("Reserve(second): %v, want Claimed", r.State)
			}
			return err
		}},
		{"Release of a claim", func() error {
			// The claim's own size gone too.
			node.Do(t, "HDEL", sizes, record)
			return r.Claim.Release(ctx)
		}},
	} {
		if err := call.run(); err != nil {
			t.Errorf("%s beside a sizeless expired entry: %v", call.what, err)
		}
	}
	if n, err := node.Do(t, "ZSCORE", usage, "gone").ToString(); err == nil {
		t.Errorf("the sizeless expired entry is still in the usage set (score %s)", n)
	}
}
