package idempotency

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestACLUserForClients: the Clients' user of docs/operations.md, with the
// store's keys added as the page says (~scriptlock:idem:*), runs the store;
// without them Redis refuses it (NOPERM).
func TestACLUserForClients(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	line := redistest.DocACLUser(t, "../../docs/operations.md", "orders", "pw")
	if err := node.Do(t, line...).Error(); err != nil {
		t.Fatalf("%s: %v", strings.Join(line, " "), err)
	}
	rc := node.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "orders", "pw" })
	s, err := NewStore(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Reserve(ctx, "acct", "k0", "fp"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("Reserve without the store's keys: %v, want Redis's NOPERM", err)
	}

	if err := node.Do(t, "ACL", "SETUSER", "orders", "~"+DefaultPrefix+"*").Error(); err != nil {
		t.Fatal(err)
	}
	r, err := s.Reserve(ctx, "acct", "k1", "fp")
	if err != nil || r.State != Claimed {
		t.Fatalf("Reserve: %+v, %v; want Claimed", r, err)
	}
	if _, err := r.Claim.Complete(ctx, []byte("paid")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if r, err := s.Reserve(ctx, "acct", "k1", "fp"); err != nil || r.State != Done || string(r.Response) != "paid" {
		t.Fatalf("Reserve again: %+v, %v; want Done with the stored response", r, err)
	}
	r, err = s.Reserve(ctx, "acct", "k2", "fp")
	if err != nil || r.State != Claimed {
		t.Fatalf("Reserve k2: %+v, %v; want Claimed", r, err)
	}
	if err := r.Claim.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
}
