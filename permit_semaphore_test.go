package scriptlock

import (
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestPermitSemaphoreLifecycle(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustPermits(t, c, "workers")
	if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	id1, err := s.Acquire(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id1) {
		t.Fatalf("permit id %q is not 128 random bits in hex", id1)
	}
	id2, err := s.TryAcquire(ctx, 10*time.Second, 0)
	if err != nil || id2 == id1 {
		t.Fatalf("TryAcquire = %q, %v", id2, err)
	}
	if id, err := s.TryAcquire(ctx, time.Second, 30*time.Millisecond); !errors.Is(err, ErrNotAcquired) || id != "" {
		t.Fatalf("TryAcquire with none free = %q, %v; want ErrNotAcquired", id, err)
	}
	// Redisson's layout: held permits in {name}:timeout, scored by lease end.
	timeouts := "{" + s.Key() + "}:timeout"
	if n, err := node.Do(t, "ZCARD", timeouts).AsInt64(); err != nil || n != 2 {
		t.Fatalf("ZCARD %s = %d, %v", timeouts, n, err)
	}
	if n, err := s.AvailablePermits(ctx); err != nil || n != 0 {
		t.Fatalf("available = %d, %v", n, err)
	}
	if err := s.Release(ctx, id1); err != nil {
		t.Fatal(err)
	}
	// Releasing again, or an id nobody holds, is refused and changes nothing.
	for _, id := range []string{id1, "0123456789abcdef0123456789abcdef"} {
		err := s.Release(ctx, id)
		if !errors.Is(err, ErrUnknownPermit) || !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Release(%s): %v, want ErrUnknownPermit", id, err)
		}
	}
	if err := s.Release(ctx, ""); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Release(\"\"): %v", err)
	}
	if _, err := s.Acquire(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Acquire with zero lease: %v", err)
	}
	if n, _ := s.AvailablePermits(ctx); n != 1 {
		t.Fatalf("available = %d, want 1", n)
	}
	if err := s.Extend(ctx, id2, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Extend(ctx, id1, time.Second); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("Extend of a released permit: %v", err)
	}
	if err := s.Release(ctx, id2); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.AvailablePermits(ctx); n != 2 {
		t.Fatalf("available = %d, want 2", n)
	}
}

// A holder that dies without releasing: its permit returns when the lease
// ends, and a waiter gets it without anyone publishing.
func TestPermitSemaphoreDeadHolder(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	dead := newTestClient(t, node.Client(t), prefix)
	live := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 10*time.Second)
	if _, err := mustPermits(t, dead, "p").TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	const lease = 300 * time.Millisecond
	id, err := mustPermits(t, dead, "p").Acquire(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	dead.Close()
	start := time.Now()
	id2, err := mustPermits(t, live, "p").Acquire(ctx, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < lease-50*time.Millisecond {
		t.Fatalf("got the permit after %s, before the dead holder's lease ended", waited)
	}
	if err := mustPermits(t, live, "p").Release(ctx, id); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("release of the reclaimed permit: %v", err)
	}
	if err := mustPermits(t, live, "p").Release(ctx, id2); err != nil {
		t.Fatal(err)
	}
}

// A permit released after its lease ended but before anyone reclaimed it is
// returned once and reported as expired.
func TestPermitSemaphoreReleaseAfterLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustPermits(t, c, "p")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id, err := s.Acquire(ctx, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	if err := s.Release(ctx, id); !errors.Is(err, ErrPermitExpired) || !errors.Is(err, ErrNotHeld) {
		t.Fatalf("late Release: %v, want ErrPermitExpired", err)
	}
	if n, _ := s.AvailablePermits(ctx); n != 1 {
		t.Fatalf("available = %d, want exactly 1", n)
	}
}

// Lease ends are taken from the server's clock: the script receives only the
// lease length, and the stored expiry is the server's TIME plus the lease,
// whatever the client's clock says.
func TestPermitSemaphoreServerClock(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustPermits(t, c, "p")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	const lease = 7 * time.Minute
	id, err := s.Acquire(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	wire, _ := permitWire(id)
	score, err := node.Do(t, "ZSCORE", s.timeouts, string(wire)).ToString()
	if err != nil {
		t.Fatal(err)
	}
	expires, _ := strconv.ParseInt(score, 10, 64)
	tm, err := node.Do(t, "TIME").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	sec, _ := strconv.ParseInt(tm[0], 10, 64)
	usec, _ := strconv.ParseInt(tm[1], 10, 64)
	serverNow := sec*1000 + usec/1000
	if left := time.Duration(expires-serverNow) * time.Millisecond; left > lease || left < lease-time.Second {
		t.Fatalf("lease left on the server clock = %s, want about %s", left, lease)
	}
}

func TestPermitSemaphoreCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	c := newTestClient(t, cl.Client(t))
	ctx := testCtx(t, 20*time.Second)
	s := mustPermits(t, c, "cl-permits")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id, err := s.Acquire(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		id2, err := s.Acquire(ctx, time.Second)
		if err == nil {
			err = s.Release(ctx, id2)
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := s.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// An AddPermits whose reply is lost (its connection dropped after the server
// ran it) is made again, and the retry adds nothing twice.
func TestPermitSemaphoreAddPermitsReplyLost(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustPermits(t, p.c, "add-retry")
	if ok, err := s.TrySetPermits(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := s.AddPermits(ctx, 1); err != nil { // scripts loaded
		t.Fatal(err)
	}
	count := func() int64 { return countAt(t, p.node, s.Key()) }
	err := p.lostReply(t, func() bool { return count() == 4 }, func() error {
		_, err := s.AddPermits(ctx, 2)
		return err
	})
	if err != nil {
		t.Fatalf("AddPermits whose first reply was lost: %v, want success", err)
	}
	if n := count(); n != 4 {
		t.Fatalf("permits after the retried AddPermits = %d, want 4 (added once)", n)
	}
}

// A Release whose reply is lost (its connection dropped after the server
// ran it) reports success: the permit went back once, and the caller must
// not be told to guess.
func TestPermitSemaphoreReleaseReplyLost(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustPermits(t, p.c, "release-retry")
	if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	for range 2 { // scripts loaded
		id, err := s.Acquire(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	id, err := s.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	count := func() int64 { return countAt(t, p.node, s.Key()) }
	err = p.lostReply(t, func() bool { return count() == 2 }, func() error { return s.Release(ctx, id) })
	if err != nil {
		t.Fatalf("Release whose first reply was lost: %v, want success", err)
	}
	if n := count(); n != 2 {
		t.Fatalf("permits after the retried Release = %d, want 2 (returned once)", n)
	}
	if err := s.Release(ctx, id); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("a second Release of the same permit = %v, want ErrUnknownPermit", err)
	}
}

// An Extend whose reply is lost is made again (extending a permit twice
// gives it the same lease from a moment later) and succeeds.
func TestPermitSemaphoreExtendReplyLost(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustPermits(t, p.c, "extend-retry")
	if ok, err := s.TrySetPermits(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	id, err := s.Acquire(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Extend(ctx, id, 10*time.Second); err != nil { // script loaded
		t.Fatal(err)
	}
	wire, err := permitWire(id)
	if err != nil {
		t.Fatal(err)
	}
	expires := func() float64 {
		v, err := p.node.Do(t, "ZSCORE", s.timeouts, string(wire)).AsFloat64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := expires()
	start := time.Now()
	err = p.lostReply(t, func() bool { return expires() > before+30_000 }, func() error {
		return s.Extend(ctx, id, time.Minute)
	})
	if err != nil {
		t.Fatalf("Extend whose first reply was lost: %v, want success", err)
	}
	if left := time.Duration(expires()-float64(time.Now().UnixMilli())) * time.Millisecond; left < time.Minute-time.Since(start)-time.Second || left > time.Minute {
		t.Fatalf("permit lease left after the retried Extend = %s, want about a minute", left)
	}
}

// An AvailablePermits whose reply is lost is made again: it answers the
// count, the expired permits it returned to the pool counted once.
func TestPermitSemaphoreAvailableReplyLost(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustPermits(t, p.c, "available-retry")
	if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := s.AvailablePermits(ctx); err != nil { // script loaded
		t.Fatal(err)
	}
	if _, err := s.Acquire(ctx, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // its lease ends; AvailablePermits returns it
	held := func() int64 {
		n, err := p.node.Do(t, "ZCARD", s.timeouts).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var n int64
	err := p.lostReply(t, func() bool { return held() == 0 }, func() error {
		var err error
		n, err = s.AvailablePermits(ctx)
		return err
	})
	if err != nil || n != 2 {
		t.Fatalf("AvailablePermits whose first reply was lost = %d, %v; want 2", n, err)
	}
	if c := countAt(t, p.node, s.Key()); c != 2 {
		t.Fatalf("count = %d, want 2 (the expired permit returned once)", c)
	}
}

// An acquisition reclaims at most 1000 expired permits per call; with more
// still expired, the waiter calls again at once instead of sleeping its
// fallback: the lease end it was told was already past.
func TestPermitSemaphoreManyExpired(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustPermits(t, c, "many-expired")
	// A deficit of 2000 (AddPermits(-n)) and 2500 permits whose leases ended
	// long ago: the first two calls' 1000 each (one before the waiter
	// subscribes, one after) leave the count at 0.
	if err := node.Do(t, "SET", s.Key(), "-2000").Error(); err != nil {
		t.Fatal(err)
	}
	args := []string{"ZADD", s.timeouts}
	for i := range 2500 {
		args = append(args, "1", strconv.Itoa(i))
	}
	if err := node.Do(t, args...).Error(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := s.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("Acquire with 2500 expired permits took %s; want a prompt second attempt", took)
	}
	if st, err := s.State(ctx); err != nil || st.Available != 499 || st.Held != 1 {
		t.Fatalf("state afterwards: %+v, %v; want 499 available, 1 held", st, err)
	}
}
