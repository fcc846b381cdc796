package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardWaitRefusedByACL: an ACL user refused WAIT cannot have its writes
// guarded; a guarded acquisition is undone and fails with ErrNotReplicated,
// and the error names the server's refusal, which is what to fix (grant
// WAIT, or turn the guard off), rather than blame replicas that are fine.
func TestGuardWaitRefusedByACL(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	if err := primary.Do(t, "ACL", "SETUSER", "nowait", "on", "nopass", "~*", "&*", "+@all", "-wait").Error(); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, primary.Client(t, func(o *rueidis.ClientOption) { o.Username = "nowait" }), WithFailoverGuard(true, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "nowait-sem")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	m := mustMutex(t, c, "nowait-lock")
	errs := map[string]error{"Semaphore.Acquire": s.Acquire(ctx, 1)}
	_, errs["Mutex.Lock"] = m.Lock(ctx)
	for k, err := range errs {
		if !errors.Is(err, ErrNotReplicated) || !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("%s as a user refused WAIT: %v, want ErrNotReplicated naming the refusal (NOPERM)", k, err)
		}
	}
	if n := countAt(t, primary, s.Key()); n != 1 {
		t.Errorf("%d permits after the refused guard, want 1 (undone)", n)
	}
}
