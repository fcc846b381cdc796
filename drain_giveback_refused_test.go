package scriptlock

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestDrainGiveBackRefusedSaysSo: a guarded DrainPermits no replica
// acknowledged gives its permits back; when the ACL user may not publish
// the give-back's message it is refused (NO_PUBLISH) and changes nothing,
// and the call's error said "the drain was undone; its 3 permits went with
// the count, deleted since": nothing was deleted, and the permits are taken
// still. The error says they were not given back.
func TestDrainGiveBackRefusedSaysSo(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	if err := primary.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels", "+@all").Error(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	prefix := sharedPrefix(t)
	admin := newTestClient(t, primary.Client(t), prefix)
	logs := &logSink{}
	app := newTestClient(t, primary.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), prefix,
		WithFailoverGuard(true, 200*time.Millisecond), WithLogger(slog.New(logs)))
	ctx := testCtx(t, 30*time.Second)
	if ok, err := mustSem(t, admin, "drain").TrySetPermits(ctx, 3); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	s := mustSem(t, app, "drain")
	replica.Pause()
	defer replica.Resume()
	v, err := s.DrainPermits(ctx)
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("DrainPermits with the replica stopped: %d, %v; want ErrNotReplicated", v, err)
	}
	if n := countAt(t, primary, s.Key()); n != 0 {
		t.Fatalf("the refused give-back left %d permits, want 0 (nothing given back)", n)
	}
	if msg := err.Error(); strings.Contains(msg, "was undone") || strings.Contains(msg, "deleted since") || !strings.Contains(msg, "not given back") {
		t.Errorf("DrainPermits whose give-back was refused: %q; want it to say its permits were not given back", msg)
	}
}
