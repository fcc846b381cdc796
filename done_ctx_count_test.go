package scriptlock

import (
	"context"
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A count-changing call given a context that has already ended sends
// nothing, so it says so: the context's error, not ErrOutcomeUnknown (which
// would have the caller read the count before calling again, for a change
// that cannot have run), and no key is written. (Release and CountDown run
// detached from ctx: an ended one still releases and counts.)
func TestCountChangeDoneContextNotSent(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	done, cancel := context.WithCancel(context.Background())
	cancel()
	s := mustSem(t, c, "s")
	p := mustPermits(t, c, "p")
	lt := mustLatch(t, c, "lt")
	for _, x := range []struct {
		what string
		call func() error
	}{
		{"Semaphore.TrySetPermits", func() error { _, err := s.TrySetPermits(done, 1); return err }},
		{"Semaphore.AddPermits", func() error { _, err := s.AddPermits(done, 1); return err }},
		{"PermitSemaphore.TrySetPermits", func() error { _, err := p.TrySetPermits(done, 1); return err }},
		{"PermitSemaphore.AddPermits", func() error { _, err := p.AddPermits(done, 1); return err }},
		{"CountDownLatch.TrySetCount", func() error { _, err := lt.TrySetCount(done, 1); return err }},
	} {
		err := x.call()
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrOutcomeUnknown) {
			t.Errorf("%s with an ended context: %v; want context.Canceled, not ErrOutcomeUnknown", x.what, err)
		}
	}
	if n := dbsize(t, node); n != 0 {
		t.Errorf("%d keys written", n)
	}
}
