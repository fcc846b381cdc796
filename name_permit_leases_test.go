package scriptlock

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A name whose key is a PermitSemaphore's lease set ({name}:timeout, or
// <name>:timeout for a name with a hash tag) is ErrInvalidName: a lock of
// that name read and wrote the semaphore's zset of held permits (a Mutex
// failed with WRONGTYPE, a Semaphore's or latch's Delete removed every
// held permit's lease, so the holders' permits were never given back).
func TestNameOfPermitLeaseKeyRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	ps := mustPermits(t, c, "{x}")
	if _, err := ps.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	leases := ps.Key() + ":timeout"
	held := func() int64 {
		t.Helper()
		n, err := node.Do(t, "ZCARD", leases).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := held(); n != 1 {
		t.Fatalf("ZCARD %s = %d, want the held permit's lease", leases, n)
	}
	bare := newTestClient(t, node.Client(t), WithKeyPrefix(""))
	for _, x := range []struct {
		c    *Client
		name string
	}{
		{c, "{x}:timeout"},
		{bare, leases},
		{bare, "{a}:timeout"},
		{bare, "app:{a}:timeout"},
	} {
		for _, kind := range []struct {
			name string
			// use makes the handle and, when it is accepted, uses it as
			// a program would, to show what that does to the leases.
			use func() (used string, made error)
		}{
			{"Mutex", func() (string, error) {
				m, err := x.c.Mutex(x.name)
				if err != nil {
					return "", err
				}
				_, err = m.TryLock(ctx, 0)
				return fmt.Sprintf("TryLock: %v", err), nil
			}},
			{"LeanMutex", func() (string, error) {
				_, err := x.c.LeanMutex(x.name)
				return "", err
			}},
			{"RWMutex", func() (string, error) {
				_, err := x.c.RWMutex(x.name)
				return "", err
			}},
			{"FairMutex", func() (string, error) {
				_, err := x.c.FairMutex(x.name)
				return "", err
			}},
			{"Semaphore", func() (string, error) {
				s, err := x.c.Semaphore(x.name)
				if err != nil {
					return "", err
				}
				ok, err := s.Delete(ctx)
				return fmt.Sprintf("Delete: %v, %v", ok, err), nil
			}},
			{"CountDownLatch", func() (string, error) {
				l, err := x.c.CountDownLatch(x.name)
				if err != nil {
					return "", err
				}
				ok, err := l.Delete(ctx)
				return fmt.Sprintf("Delete: %v, %v", ok, err), nil
			}},
			{"PermitSemaphore", func() (string, error) {
				_, err := x.c.PermitSemaphore(x.name)
				return "", err
			}},
		} {
			used, made := kind.use()
			if !errors.Is(made, ErrInvalidName) {
				t.Errorf("%s(%q): %v, want ErrInvalidName; %s, leases of {x} held: %d", kind.name, x.name, made, used, held())
			}
		}
	}
	if n := held(); n != 1 {
		t.Errorf("ZCARD %s = %d after the refused names, want 1", leases, n)
	}
	// A lock taken first under the name of a semaphore's lease set makes
	// the semaphore fail.
	if m, err := bare.Mutex("{b}:timeout"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Mutex(%q): %v, want ErrInvalidName", "{b}:timeout", err)
		if err == nil {
			_, lockErr := m.TryLock(ctx, 0)
			ps := mustPermits(t, bare, "{b}")
			_, setErr := ps.TrySetPermits(ctx, 1)
			_, acqErr := ps.TryAcquire(ctx, time.Minute, 0)
			avail, availErr := ps.AvailablePermits(ctx)
			t.Errorf("then TryLock: %v; PermitSemaphore {b}: TrySetPermits(1): %v, TryAcquire: %v, AvailablePermits: %d, %v", lockErr, setErr, acqErr, avail, availErr)
		}
	}
	// Names that merely resemble it are fine.
	for _, name := range []string{"timeout", "x:timeout", "{x}:timeouts", "{x}:timeout:1", "{x}:x_timeout"} {
		if _, err := bare.Mutex(name); err != nil {
			t.Errorf("Mutex(%q): %v", name, err)
		}
	}
}
