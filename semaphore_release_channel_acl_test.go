package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSemaphoreReleaseChannelRefusedChangesNothing: Redis 7 gives a new ACL
// user no channel (acl-pubsub-default resetchannels). A Release whose release
// message the user may not publish fails, and must leave the count as it
// was: the permits returned before the PUBLISH was refused stayed returned,
// so a caller that took the error at its word and released again returned
// them twice.
func TestSemaphoreReleaseChannelRefusedChangesNothing(t *testing.T) {
	t.Parallel()
	n, admin, app := newNoChannelClients(t)
	ctx := testCtx(t, 20*time.Second)
	as, _ := admin.Semaphore("s")
	if ok, err := as.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	if err := as.Acquire(ctx, 1); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	s, _ := app.Semaphore("s")
	err := s.Release(ctx, 1)
	if err == nil {
		t.Fatalf("Release by a user without the channel: no error")
	}
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("Release error %v, want generated.ErrNoPublish", err)
	}
	if got := countAt(t, n, s.Key()); got != 0 {
		t.Fatalf("Release failed (%v), yet the count is %d, not 0", err, got)
	}
	if _, err := s.AddPermits(ctx, 1); err == nil {
		t.Fatalf("AddPermits by a user without the channel: no error")
	}
	if got := countAt(t, n, s.Key()); got != 0 {
		t.Fatalf("AddPermits failed, yet the count is %d, not 0", got)
	}
}

// newNoChannelClients starts a server with an ACL user "app" that may run
// every command on every key but publish on no channel (as Redis 7 gives a
// new user: acl-pubsub-default resetchannels), and returns it with a Client
// as the default user and one as "app", both in the same key space.
func newNoChannelClients(t *testing.T) (n *redistest.Node, admin, app *Client) {
	t.Helper()
	n = redistest.Server(t)
	if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels", "+@all").Error(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	prefix := sharedPrefix(t)
	admin = newTestClient(t, n.Client(t), prefix)
	app = newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), prefix)
	return n, admin, app
}
