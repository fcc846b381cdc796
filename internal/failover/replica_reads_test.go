package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSentinelReplicaReadsAwait: a rueidis client that sends read-only
// commands to replicas (SendToReplicas, as rueidis suggests for read
// scaling) sends a latch's count reads there too, where a replica behind
// its primary has no count yet. Await decides on that count: it must read
// it from the primary, and wait while the latch counts there.
func TestSentinelReplicaReadsAwait(t *testing.T) {
	t.Parallel()
	s := redistest.Sentinel(t, redistest.WithProxiedReplication())
	rc := s.Client(t, func(o *rueidis.ClientOption) {
		o.SendToReplicas = func(cmd rueidis.Completed) bool { return cmd.IsReadOnly() }
	})
	c, err := scriptlock.New(rc, scriptlock.WithKeyPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.CountDownLatch("gate")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The replicas fall behind: replication is held back from here on.
	for _, p := range s.ReplicationProxies {
		p.Freeze()
	}
	defer func() {
		for _, p := range s.ReplicationProxies {
			p.Thaw()
		}
	}()
	if ok, err := l.TrySetCount(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetCount: %v, %v", ok, err)
	}
	if n, err := s.Primary(t).Do(t, "GET", l.Key()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("count on the primary: %d, %v", n, err)
	}
	start := time.Now()
	done, err := l.AwaitTimeout(ctx, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if done {
		t.Fatalf("AwaitTimeout reported the latch open after %v while its count is 1 on the primary", time.Since(start).Round(time.Millisecond))
	}
	res := make(chan error, 1)
	go func() { res <- l.Await(ctx) }()
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-res:
		t.Fatalf("Await returned (%v) while the latch counts", err)
	default:
	}
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("Await: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Await not released 5 s after the count reached zero")
	}
}

// TestSentinelReplicaReadsUndo: the same client, with the failover guard,
// acquires while no replica acknowledges (replication held back), under a
// deadline that ends while the guard's WAIT waits: the acquisition's outcome
// is unknown, and it is undone by owner in the background. The undo decides
// what to give back on the owner's hold count, which it must read from the
// primary: a replica without the grant reads none, and the lock was left
// held, with no owner to release it, for its whole lease.
func TestSentinelReplicaReadsUndo(t *testing.T) {
	t.Parallel()
	s := redistest.Sentinel(t, redistest.WithProxiedReplication())
	rc := s.Client(t, func(o *rueidis.ClientOption) {
		o.SendToReplicas = func(cmd rueidis.Completed) bool { return cmd.IsReadOnly() }
	})
	c, err := scriptlock.New(rc, scriptlock.WithKeyPrefix(redistest.Prefix(t)),
		scriptlock.WithFailoverGuard(true, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rw, err := c.RWMutex("rw")
	if err != nil {
		t.Fatal(err)
	}
	kinds := []struct {
		name string
		l    scriptlock.Locker
		key  string
	}{{"RWMutexRead", rw.RLocker(), rw.Key()}, {"RWMutex", rw, rw.Key()}}
	for _, k := range []struct {
		name string
		make func(string) (scriptlock.Locker, error)
	}{
		{"Mutex", func(n string) (scriptlock.Locker, error) { return c.Mutex(n) }},
		{"FairMutex", func(n string) (scriptlock.Locker, error) { return c.FairMutex(n) }},
		{"LeanMutex", func(n string) (scriptlock.Locker, error) { return c.LeanMutex(n) }},
	} {
		l, err := k.make(k.name)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, struct {
			name string
			l    scriptlock.Locker
			key  string
		}{k.name, l, l.(interface{ Key() string }).Key()})
	}
	// Each kind once, so that its scripts are loaded and the replicas counted.
	for _, k := range kinds {
		lctx, err := k.l.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		if err := k.l.Unlock(lctx); err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
	}
	for _, p := range s.ReplicationProxies {
		p.Freeze()
	}
	defer func() {
		for _, p := range s.ReplicationProxies {
			p.Thaw()
		}
	}()
	primary := s.Primary(t)
	for _, k := range kinds {
		actx, acancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := k.l.TryLock(actx, 0)
		acancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: TryLock cut off by its deadline: %v, want DeadlineExceeded", k.name, err)
		}
		// The undo runs at once and looks again 0.25 s, 1 s and 3 s later.
		// It is waited for before the next kind, which may share the key
		// (the RWMutex after its read lock) and must find it free.
		for deadline := time.Now().Add(4 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			n, err := primary.Do(t, "EXISTS", k.key).AsInt64()
			if err == nil && n == 0 {
				break
			}
			if time.Now().After(deadline) {
				pttl, _ := primary.Do(t, "PTTL", k.key).AsInt64()
				t.Fatalf("%s: the acquisition cut off is still held on the primary 4 s later (PTTL %d ms): %d, %v", k.name, pttl, n, err)
			}
		}
	}
}
