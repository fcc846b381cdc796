package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestPublishMissingBeforeACLCheck: on a Redis 7 Cluster without SPUBLISH
// (renamed away), reached by a user whose ACL refuses COMMAND, a fresh Client
// publishes sharded. The scripts that check their message against the ACL
// first (acl_check_cmd) find the command missing there: that refusal is
// made again with PUBLISH as the SPUBLISH's own is, and changes the count
// once. It failed the call with acl_check_cmd's "Invalid command".
func TestPublishMissingBeforeACLCheck(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--rename-command", "SPUBLISH", "", "--rename-command", "SSUBSCRIBE", "", "--rename-command", "SUNSUBSCRIBE", ""))
	for _, n := range cl.Nodes {
		if err := n.Do(t, "ACL", "SETUSER", "default", "-command").Error(); err != nil {
			t.Fatal(err)
		}
	}
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 60*time.Second)
	setup := newTestClient(t, cl.Client(t), prefix)
	rc := cl.Client(t)
	for _, key := range []string{mustSem(t, setup, "sem").Key(), mustPermits(t, setup, "permits").Key()} {
		if err := rc.Do(ctx, rc.B().Set().Key(key).Value("1").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	fresh := func(t *testing.T) *Client {
		c := newTestClient(t, cl.Client(t), prefix)
		if !c.sharded() {
			t.Fatal("a new Client does not publish sharded")
		}
		return c
	}
	t.Run("Semaphore.Release", func(t *testing.T) {
		s := mustSem(t, fresh(t), "sem")
		if err := s.Release(ctx, 2); err != nil {
			t.Fatal(err)
		}
		if n, err := s.AvailablePermits(ctx); err != nil || n != 3 {
			t.Fatalf("permits after Release(2) of 1: %d, %v; want 3", n, err)
		}
	})
	t.Run("Semaphore.AddPermits", func(t *testing.T) {
		s := mustSem(t, fresh(t), "sem")
		if n, err := s.AddPermits(ctx, 1); err != nil || n != 4 {
			t.Fatalf("AddPermits(1) of 3: %d, %v; want 4", n, err)
		}
	})
	t.Run("PermitSemaphore.AddPermits", func(t *testing.T) {
		s := mustPermits(t, fresh(t), "permits")
		if n, err := s.AddPermits(ctx, 2); err != nil || n != 3 {
			t.Fatalf("AddPermits(2) of 1: %d, %v; want 3", n, err)
		}
	})
}
