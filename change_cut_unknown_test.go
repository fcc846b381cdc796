package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A change whose reply is held back past the end of its context (the
// caller's deadline; the release timeout for Release and CountDown) ran: the
// server has it. Its error says the outcome is unknown (errors.Is
// ErrOutcomeUnknown), as after a lost connection: a caller that read the
// deadline's error alone as "nothing happened" and called again would
// release or count down twice, or delete what was set since.
func TestChangeCutByDeadlineOutcomeUnknown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		reserved bool // made through reservedCall: replies held once its record is reserved
		// setup prepares the change and returns when it landed and the call.
		setup func(t *testing.T, r *cutRig) (landed func() bool, call func(ctx context.Context) error)
	}{
		{"Semaphore.Release", false, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			s := mustSem(t, r.c, "cut")
			r.trySet(t, s, 5)
			r.must(t, s.Release(r.ctx, 1)) // scripts loaded
			return r.countIs(t, s.Key(), 8), func(ctx context.Context) error { return s.Release(ctx, 2) }
		}},
		{"Semaphore.AddPermits", false, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			s := mustSem(t, r.c, "cut")
			r.trySet(t, s, 5)
			_, err := s.AddPermits(r.ctx, 1) // scripts loaded
			r.must(t, err)
			return r.countIs(t, s.Key(), 8), func(ctx context.Context) error { _, err := s.AddPermits(ctx, 2); return err }
		}},
		{"Semaphore.TrySetPermits", false, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			s := mustSem(t, r.c, "cut")
			_, err := s.TrySetPermits(r.ctx, 5) // scripts loaded
			r.must(t, err)
			_, err = s.Delete(r.ctx)
			r.must(t, err)
			return r.countIs(t, s.Key(), 3), func(ctx context.Context) error { _, err := s.TrySetPermits(ctx, 3); return err }
		}},
		{"Semaphore.Delete", true, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			s := mustSem(t, r.c, "cut")
			r.trySet(t, s, 5)
			_, err := s.Delete(r.ctx) // scripts loaded
			r.must(t, err)
			r.trySet(t, s, 5)
			return r.gone(t, s.Key()), func(ctx context.Context) error { _, err := s.Delete(ctx); return err }
		}},
		{"PermitSemaphore.AddPermits", false, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			s := mustPermits(t, r.c, "cut")
			r.must(t, s.SetPermits(r.ctx, 5))
			_, err := s.AddPermits(r.ctx, 1) // scripts loaded
			r.must(t, err)
			return r.countIs(t, s.Key(), 8), func(ctx context.Context) error { _, err := s.AddPermits(ctx, 2); return err }
		}},
		{"PermitSemaphore.SetPermits", true, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			s := mustPermits(t, r.c, "cut")
			r.must(t, s.SetPermits(r.ctx, 5)) // scripts loaded
			return r.countIs(t, s.Key(), 8), func(ctx context.Context) error { return s.SetPermits(ctx, 8) }
		}},
		{"PermitSemaphore.Delete", true, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			s := mustPermits(t, r.c, "cut")
			r.must(t, s.SetPermits(r.ctx, 5))
			_, err := s.Delete(r.ctx) // scripts loaded
			r.must(t, err)
			r.must(t, s.SetPermits(r.ctx, 5))
			return r.gone(t, s.Key()), func(ctx context.Context) error { _, err := s.Delete(ctx); return err }
		}},
		{"CountDownLatch.CountDown", false, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			l := mustLatch(t, r.c, "cut")
			_, err := l.TrySetCount(r.ctx, 5)
			r.must(t, err)
			r.must(t, l.CountDown(r.ctx)) // scripts loaded
			return r.countIs(t, l.Key(), 3), func(ctx context.Context) error { return l.CountDown(ctx) }
		}},
		{"CountDownLatch.Delete", true, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			l := mustLatch(t, r.c, "cut")
			_, err := l.TrySetCount(r.ctx, 5)
			r.must(t, err)
			_, err = l.Delete(r.ctx) // scripts loaded
			r.must(t, err)
			_, err = l.TrySetCount(r.ctx, 5)
			r.must(t, err)
			return r.gone(t, l.Key()), func(ctx context.Context) error { _, err := l.Delete(ctx); return err }
		}},
		{"Mutex.ForceUnlock", true, func(t *testing.T, r *cutRig) (func() bool, func(context.Context) error) {
			m := mustMutex(t, r.c, "cut")
			_, err := m.ForceUnlock(r.ctx) // scripts loaded
			r.must(t, err)
			holder := mustMutex(t, newTestClient(t, rawClient(t, r.node.Addr), r.prefix), "cut")
			_, err = holder.LockWithLease(r.ctx, 30*time.Second)
			r.must(t, err)
			return r.gone(t, m.Key()), func(ctx context.Context) error { _, err := m.ForceUnlock(ctx); return err }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newCutRig(t)
			landed, call := tc.setup(t, r)
			if r.c.testReserved != nil {
				t.Fatal("testReserved set before the call")
			}
			err := r.cut(t, tc.reserved, landed, call)
			if !errors.Is(err, ErrOutcomeUnknown) || !strings.Contains(err.Error(), "outcome unknown") {
				t.Fatalf("change cut by its deadline after it ran = %v; want an error of unknown outcome (errors.Is ErrOutcomeUnknown)", err)
			}
		})
	}
}

// A SetPermits cut while its reservation is on its way never sent the
// change: its error is the deadline's alone, not one of unknown outcome, and
// the count is as it was.
func TestReservationCutOutcomeKnown(t *testing.T) {
	t.Parallel()
	r := newCutRig(t)
	s := mustPermits(t, r.c, "cut-reservation")
	r.must(t, s.SetPermits(r.ctx, 5)) // scripts loaded
	reserved := func() bool {
		keys, err := r.node.Do(t, "KEYS", "redisson_sc_latch:*").AsStrSlice()
		return err == nil && len(keys) >= 2 // the first call's record and this one's reservation
	}
	err := r.cut(t, false, reserved, func(ctx context.Context) error { return s.SetPermits(ctx, 8) })
	if err == nil || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("SetPermits cut before it was sent = %v; want the deadline's error, not one of unknown outcome", err)
	}
	time.Sleep(300 * time.Millisecond) // a change that arrived late, had there been one
	if got := countAt(t, r.node, s.Key()); got != 5 {
		t.Fatalf("count = %d; want 5 (nothing set)", got)
	}
}

// cutRig is a Client reaching its server through a proxy that holds back
// replies, its release timeout cutBound.
type cutRig struct {
	node   *redistest.Node
	px     *netproxy.Proxy
	prefix Option
	c      *Client
	ctx    context.Context
}

// cutBound is how long a cut call's context lives: long enough for the
// call to reach the server on a loaded machine before it ends.
const cutBound = 2 * time.Second

func newCutRig(t *testing.T) *cutRig {
	t.Helper()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	same := sharedPrefix(t)
	return &cutRig{node: node, px: px, prefix: same, ctx: testCtx(t, 20*time.Second),
		c: newTestClient(t, px.Client(t), same, WithReleaseTimeout(cutBound))}
}

func (r *cutRig) must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (r *cutRig) trySet(t *testing.T, s *Semaphore, n int64) {
	t.Helper()
	if ok, err := s.TrySetPermits(r.ctx, n); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
}

func (r *cutRig) countIs(t *testing.T, key string, n int64) func() bool {
	return func() bool { return countAt(t, r.node, key) == n }
}

func (r *cutRig) gone(t *testing.T, key string) func() bool {
	return func() bool {
		n, err := r.node.Do(t, "EXISTS", key).AsInt64()
		return err == nil && n == 0
	}
}

// cut runs call with a context ended after cutBound and the server's replies
// held back, from once its record is reserved (reserved) or at once; it
// checks that landed saw the call reach the server before the call returned,
// and returns the call's error.
func (r *cutRig) cut(t *testing.T, reserved bool, landed func() bool, call func(ctx context.Context) error) error {
	t.Helper()
	if reserved {
		r.c.testReserved = r.px.FreezeReplies
	} else {
		r.px.FreezeReplies()
	}
	ctx, cancel := context.WithTimeout(context.Background(), cutBound)
	defer cancel()
	res := make(chan error, 1)
	go func() { res <- call(ctx) }()
	ok := eventually(cutBound+time.Second, landed)
	err := <-res
	r.c.testReserved = nil // once the call returned: no hook runs beside this
	r.px.Thaw()
	if !ok {
		t.Fatalf("the call did not reach the server (error %v)", err)
	}
	return err
}
