package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A counter with a TTL (Redisson's trySetPermits(n, ttl)) loses it on a
// DrainPermits or an AddPermits, as on Redisson's drainPermits and
// addPermits (a SET), so the semaphore's lifetime does not depend on which
// side made the call; a release and an acquisition keep it (INCRBY, DECRBY).
func TestSemaphoreCounterTTLAsRedisson(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	pttl := func(key string) int64 {
		t.Helper()
		v, err := node.Do(t, "PTTL", key).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	withTTL := func(key string, n string) {
		t.Helper()
		node.Do(t, "SET", key, n, "PX", "600000")
	}

	s := mustSem(t, c, "sem-ttl")
	withTTL(s.Key(), "5")
	if err := s.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := pttl(s.Key()); got <= 0 {
		t.Errorf("Semaphore: PTTL %d after an acquisition and a release, want the TTL kept", got)
	}
	if _, err := s.DrainPermits(ctx); err != nil {
		t.Fatal(err)
	}
	if got := pttl(s.Key()); got != -1 {
		t.Errorf("Semaphore: PTTL %d after DrainPermits, want -1 (no TTL, as Redisson's drainPermits)", got)
	}
	withTTL(s.Key(), "5")
	if _, err := s.AddPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := pttl(s.Key()); got != -1 {
		t.Errorf("Semaphore: PTTL %d after AddPermits, want -1 (no TTL, as Redisson's addPermits)", got)
	}

	p := mustPermits(t, c, "permit-ttl")
	withTTL(p.Key(), "5")
	if _, err := p.AddPermits(ctx, -1); err != nil {
		t.Fatal(err)
	}
	if got := pttl(p.Key()); got != -1 {
		t.Errorf("PermitSemaphore: PTTL %d after AddPermits, want -1 (no TTL, as Redisson's addPermits)", got)
	}
}

// PermitSemaphore.AddPermits drops the TTL of the held permits' set too (an
// acquisition copies the counter's TTL to it): the counter lives on, and a
// set that expired on the old TTL took the held permits with it, so their
// releases found nothing and the permits were lost for good.
func TestPermitAddPermitsKeepsHeldPermits(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	p := mustPermits(t, c, "held-ttl")
	node.Do(t, "SET", p.Key(), "1", "PX", "500") // Redisson's trySetPermits(1, ttl)
	id, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AddPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // past the TTL AddPermits dropped
	if err := p.Release(ctx, id); err != nil {
		t.Errorf("Release of a permit held across AddPermits: %v", err)
	}
	if n, err := p.AvailablePermits(ctx); err != nil || n != 2 {
		t.Errorf("available = %d, %v; want 2", n, err)
	}
}

// Redisson's addPermits drops the counter's TTL but leaves the one an
// acquisition copied to the held permits' set. A Go acquisition after it
// then finds a counter without expiry and a set that still expires: the set
// must lose that TTL too, or the permits held in it vanish when it runs out
// while the counter lives on, and their releases give nothing back.
func TestPermitHeldSurviveRedissonAddPermits(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	java := newRedissonJava(node.Client(t), 21)
	ctx := testCtx(t, 10*time.Second)
	p := mustPermits(t, c, "held-java-ttl")
	node.Do(t, "SET", p.Key(), "2", "PX", "500") // a TTL, as Redisson's expire(ttl) gives the counter
	first, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := java.permitAddPermits(ctx, p.Key(), 1); err != nil { // a SET: the counter's TTL is gone
		t.Fatal(err)
	}
	second, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // past the TTL the counter had
	for _, id := range []string{first, second} {
		if err := p.Release(ctx, id); err != nil {
			t.Errorf("Release of a permit held across Redisson's addPermits: %v", err)
		}
	}
	if n, err := p.AvailablePermits(ctx); err != nil || n != 3 {
		t.Errorf("available = %d, %v; want 3", n, err)
	}

	// So does a release of another permit.
	r := mustPermits(t, c, "held-java-ttl-release")
	node.Do(t, "SET", r.Key(), "2", "PX", "500")
	var ids []string
	for range 2 {
		id, err := r.Acquire(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := java.permitAddPermits(ctx, r.Key(), 1); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	if err := r.Release(ctx, ids[1]); err != nil {
		t.Errorf("Release of a permit held across Redisson's addPermits and another's release: %v", err)
	}

	// The holder's Extend keeps its permit the same way.
	q := mustPermits(t, c, "held-java-ttl-extend")
	node.Do(t, "SET", q.Key(), "1", "PX", "500")
	id, err := q.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := java.permitAddPermits(ctx, q.Key(), 1); err != nil {
		t.Fatal(err)
	}
	if err := q.Extend(ctx, id, time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	if err := q.Release(ctx, id); err != nil {
		t.Errorf("Release of a permit extended after Redisson's addPermits: %v", err)
	}
}
