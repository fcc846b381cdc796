package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestPermitSemaphoreFailoverGuard: the same for a PermitSemaphore's
// Acquire and TryAcquire, which leave no permit held and the free count as
// it was; and an Extend no replica acknowledged fails with
// ErrNotReplicated, the permit still held.
func TestPermitSemaphoreFailoverGuard(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	s := mustPermits(t, c, "guarded-permits")
	if _, err := s.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	id, err := s.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatalf("Acquire with a healthy replica: %v", err)
	}
	if err := s.Extend(ctx, id, time.Minute); err != nil {
		t.Fatalf("Extend with a healthy replica: %v", err)
	}
	replica.Pause()
	defer replica.Resume()
	for _, tc := range []struct {
		name string
		f    func() (string, error)
	}{
		{"Acquire", func() (string, error) { return s.Acquire(ctx, time.Minute) }},
		{"TryAcquire", func() (string, error) { return s.TryAcquire(ctx, time.Minute, 0) }},
		{"TryAcquire with a wait", func() (string, error) { return s.TryAcquire(ctx, time.Minute, time.Second) }},
	} {
		got, err := tc.f()
		if !errors.Is(err, ErrNotReplicated) {
			if err == nil {
				_ = s.Release(ctx, got)
			}
			t.Errorf("%s with the replica stopped: %q, %v; want ErrNotReplicated", tc.name, got, err)
		}
		if st, err := s.State(ctx); err != nil || st.Available != 1 || st.Held != 1 {
			t.Errorf("%s with the replica stopped left %+v, %v; want 1 available, 1 held (the acquisition undone)", tc.name, st, err)
		}
	}
	if err := s.Extend(ctx, id, 2*time.Minute); !errors.Is(err, ErrNotReplicated) {
		t.Errorf("Extend with the replica stopped: %v, want ErrNotReplicated", err)
	}
	off := mustPermits(t, c, "guarded-permits", WithFailoverGuard(false, 0))
	other, err := off.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatalf("Acquire with the guard off: %v", err)
	}
	if err := off.Release(ctx, other); err != nil {
		t.Fatal(err)
	}
	replica.Resume()
	// Releases are not guarded: one the replica missed while stopped is
	// replicated once it is back.
	if err := s.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	var got string
	err = acked(func() (err error) { got, err = s.Acquire(ctx, time.Minute); return }) // the replica catching up
	if err != nil {
		t.Fatalf("Acquire with the replica back: %v", err)
	}
	_ = s.Release(ctx, got)
}

// TestPermitSemaphoreGuardReplicas: WithGuardReplicas applies to a
// PermitSemaphore, on the Client and on a handle: with one of two replicas
// stopped, a handle that waits for both fails with ErrNotReplicated and
// holds nothing, and the default count of one still grants.
func TestPermitSemaphoreGuardReplicas(t *testing.T) {
	t.Parallel()
	primary, replicas := redistest.ReplicatedN(t, 2)
	guard := WithFailoverGuard(true, 100*time.Millisecond)
	prefix := sharedPrefix(t)
	c := newTestClient(t, primary.Client(t), prefix, guard)
	all := newTestClient(t, primary.Client(t), prefix, guard, WithGuardReplicas(GuardAllReplicas))
	ctx := testCtx(t, 30*time.Second)
	permits := map[string]*PermitSemaphore{
		"client": mustPermits(t, all, "guard-all-permits"),
		"handle": mustPermits(t, c, "guard-all-permits", WithGuardReplicas(2)),
	}
	if _, err := permits["client"].TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for k, p := range permits {
		var id string
		err := acked(func() (err error) { id, err = p.Acquire(ctx, time.Minute); return })
		if err != nil {
			t.Fatalf("%s: Acquire with both replicas running: %v", k, err)
		}
		if err := p.Release(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	replicas[1].Pause()
	defer replicas[1].Resume()
	for k, p := range permits {
		if _, err := p.Acquire(ctx, time.Minute); !errors.Is(err, ErrNotReplicated) {
			t.Errorf("%s: Acquire waiting for every replica, one of two stopped: %v, want ErrNotReplicated", k, err)
		}
		if st, err := p.State(ctx); err != nil || st.Available != 1 || st.Held != 0 {
			t.Errorf("%s: %+v, %v after the undone acquisition; want 1 available, none held", k, st, err)
		}
	}
	one := mustPermits(t, c, "guard-all-permits")
	var id string
	err := acked(func() (err error) { id, err = one.Acquire(ctx, time.Minute); return })
	if err != nil {
		t.Fatalf("Acquire waiting for one replica, one of two stopped: %v", err)
	}
	_ = one.Release(ctx, id)
}

// TestPermitSemaphoreGuardNoReplicas: on a primary without replicas a
// guarded PermitSemaphore sends no WAIT, for its acquisitions or Extend.
func TestPermitSemaphoreGuardNoReplicas(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	p := mustPermits(t, c, "unreplicated-permits")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		id, err := p.Acquire(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Extend(ctx, id, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := p.Release(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if n := waitCalls(t, node); n != 0 {
		t.Fatalf("%d WAIT calls on a primary without replicas, want none", n)
	}
}

// TestPermitExtendGuardedConnBroken: a guarded Extend whose connection
// breaks while its WAIT waits (the script ran, its reply is lost) is made
// again within ctx, as rueidis makes an unguarded one: rueidis repeats no
// call sent with WAIT, and the Extend failed with the broken connection's
// error.
func TestPermitExtendGuardedConnBroken(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 5*time.Second))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "extend-broken")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Extend(ctx, id, time.Minute); err != nil { // the script loaded
		t.Fatal(err)
	}
	replica.Pause()
	done := make(chan error, 1)
	go func() { done <- p.Extend(ctx, id, 2*time.Minute) }()
	// The Extend's connection, blocked in WAIT, is killed.
	killed := false
	for deadline := time.Now().Add(4 * time.Second); !killed && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		list, err := primary.Do(t, "CLIENT", "LIST").ToString()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, " cmd=wait ") {
				f := strings.Fields(line)[0] // id=<n>
				if err := primary.Do(t, "CLIENT", "KILL", "ID", strings.TrimPrefix(f, "id=")).Error(); err != nil {
					t.Fatal(err)
				}
				killed = true
				break
			}
		}
	}
	replica.Resume()
	if !killed {
		t.Fatal("no client blocked in WAIT to kill")
	}
	if err := <-done; err != nil {
		t.Fatalf("Extend whose connection broke under its WAIT: %v, want it made again and acknowledged", err)
	}
	if err := p.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
}
