package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestPublishCommandRefusalSaysCommand: a user allowed every channel but
// refused the PUBLISH command itself was told it may not publish to the
// channel, which it named: granting that channel would change nothing. The
// refusal (NO_PUBLISH, nothing changed) says it is the command.
func TestPublishCommandRefusalSaysCommand(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	if err := n.Do(t, "ACL", "SETUSER", "nopub", "on", ">pw", "~*", "allchannels", "+@all", "-publish", "-spublish").Error(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	prefix := sharedPrefix(t)
	admin := newTestClient(t, n.Client(t), prefix, WithShardedPubSub(false))
	app := newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "nopub", "pw" }), prefix, WithShardedPubSub(false))
	ctx := testCtx(t, 30*time.Second)

	sem, _ := admin.Semaphore("s")
	if ok, err := sem.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	ps, _ := admin.PermitSemaphore("ps")
	if ok, err := ps.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("PermitSemaphore TrySetPermits: %v %v", ok, err)
	}
	latch, _ := admin.CountDownLatch("l")
	if ok, err := latch.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetCount: %v %v", ok, err)
	}
	m := mustMutex(t, app, "m")
	ops := []struct {
		name string
		call func() error
	}{
		{"Semaphore.Release", func() error { s, _ := app.Semaphore("s"); return s.Release(ctx, 1) }},
		{"Semaphore.TrySetPermits", func() error { s, _ := app.Semaphore("fresh"); _, err := s.TrySetPermits(ctx, 3); return err }},
		{"PermitSemaphore.AddPermits", func() error { s, _ := app.PermitSemaphore("ps"); _, err := s.AddPermits(ctx, 2); return err }},
		{"CountDownLatch.CountDown", func() error { l, _ := app.CountDownLatch("l"); return l.CountDown(ctx) }},
		{"Mutex.Unlock", func() error {
			held, err := m.Lock(ctx)
			if err != nil {
				return err
			}
			return m.Unlock(held)
		}},
	}
	for _, o := range ops {
		err := o.call()
		var se *generated.ScriptError
		if !errors.Is(err, generated.ErrNoPublish) || !errors.As(err, &se) {
			t.Errorf("%s by a user refused PUBLISH: %v, want generated.ErrNoPublish", o.name, err)
			continue
		}
		if strings.Contains(se.Message, "to channel") || !strings.Contains(se.Message, "command") {
			t.Errorf("%s by a user refused PUBLISH: %q names a channel; want the command named as what is refused", o.name, se.Message)
		}
	}
}
