package scriptlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/exampleredis"
)

// The examples run against redis-servers that the package's tests start on
// free loopback ports; in a program, redisAddr is your Redis's address.

// redisAddr returns the address of the examples' Redis.
func redisAddr() string { return exampleredis.Addrs()[0] }

// redisAddrs returns the addresses of three independent Redis servers.
func redisAddrs() []string { return exampleredis.Addrs() }

// connect returns a Client on the examples' Redis and a function that closes
// it and its rueidis client. The package example shows the same steps in full.
func connect(opts ...scriptlock.Option) (*scriptlock.Client, func()) {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{redisAddr()}})
	if err != nil {
		log.Fatal(err)
	}
	locks, err := scriptlock.New(rc, opts...)
	if err != nil {
		log.Fatal(err)
	}
	return locks, func() { locks.Close(); rc.Close() }
}

// The whole life of a lock: connect, lock, work under the lock's context with
// its fencing token, unlock.
func Example() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{redisAddr()}})
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	locks, err := scriptlock.New(rc) // one per process; it never closes rc
	if err != nil {
		log.Fatal(err)
	}
	defer locks.Close()

	ctx := context.Background()
	m, err := locks.Mutex("order:42")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	lctx, err := m.Lock(ctx) // waits; the watchdog renews the lease until Unlock
	if err != nil {
		log.Fatal(err)
	}
	token, _ := scriptlock.Fence(lctx)
	fmt.Println("locked with a fencing token:", token > 0)

	// Work under lctx: it is cancelled, with cause ErrLockLost, if the lock
	// is lost. Pass the token to the store the work writes to.

	if err := m.Unlock(lctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("after Unlock the lock context has ended:", context.Cause(lctx))
	// Output:
	// locked with a fencing token: true
	// after Unlock the lock context has ended: context canceled
}

// TryLock gives up after its wait with an error that errors.Is
// ErrNotAcquired; the *NotAcquiredError says how long the holder's lease runs.
func ExampleMutex_TryLock() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()

	m, err := locks.Mutex("order:43")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	held, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Unlock(held)

	// ctx names no owner, so this is a second owner: it waits 100 ms, then
	// gives up.
	_, err = m.TryLock(ctx, 100*time.Millisecond)
	var na *scriptlock.NotAcquiredError
	fmt.Println("not acquired:", errors.Is(err, scriptlock.ErrNotAcquired))
	fmt.Println("holder's lease known:", errors.As(err, &na) && na.Remaining > 0)
	// Output:
	// not acquired: true
	// holder's lease known: true
}

// A hold taken with an explicit lease expires on its own unless Extend gives
// it a new one; a watchdog-renewed hold needs no Extend.
func ExampleMutex_Extend() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()

	m, err := locks.Mutex("export:daily")
	if err != nil {
		log.Fatal(err)
	}
	lctx, err := m.LockWithLease(ctx, time.Second) // no watchdog: expires after 1 s
	if err != nil {
		log.Fatal(err)
	}
	defer m.Unlock(lctx)
	// ... the work takes longer than planned:
	if err := m.Extend(ctx, lctx, time.Minute); err != nil { // a minute from now
		log.Fatal(err) // ErrNotHeld: the lease ran out first, and lctx has ended
	}
	st, _ := m.State(ctx)
	fmt.Println("lease now over a second:", st.Lease > time.Second)

	_, err = m.TryLock(ctx, 0) // another owner
	fmt.Println("second owner:", errors.Is(err, scriptlock.ErrNotAcquired))
	// Output:
	// lease now over a second: true
	// second owner: true
}

// Everything done on behalf of one request holds locks as one owner, so a
// nested call that locks the same name re-enters instead of deadlocking.
func ExampleWithOwner() {
	locks, closeLocks := connect()
	defer closeLocks()

	ctx := scriptlock.WithOwner(context.Background(), "request-7f3a")
	m, err := locks.Mutex("account:9")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	outer, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	inner, err := m.Lock(outer) // the same owner: re-entered
	if err != nil {
		log.Fatal(err)
	}
	st, _ := m.State(inner) // one round trip: Locked, HoldCount (of inner's owner), Lease
	fmt.Println("holds:", st.HoldCount)

	_ = m.Unlock(inner)
	locked, _ := m.IsLocked(ctx)
	fmt.Println("locked after one Unlock:", locked)
	_ = m.Unlock(outer) // the last Unlock releases the lock
	locked, _ = m.IsLocked(ctx)
	fmt.Println("locked after the last Unlock:", locked)
	// Output:
	// holds: 2
	// locked after one Unlock: true
	// locked after the last Unlock: false
}

// fencedRow stands for a database row guarded by a fencing token, as in the
// README's Fencing section: a holder records its token on the row before it
// reads it (UPDATE orders SET fence = $1 WHERE id = $2 AND fence < $1
// RETURNING status), and its write requires that token still to be there
// (UPDATE orders SET status = 'paid' WHERE id = $2 AND fence = $1 AND status
// = 'unpaid').
type fencedRow struct {
	mu     sync.Mutex
	fence  int64
	status string
}

func (s *fencedRow) claim(token int64) (status string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token <= s.fence {
		return "", false
	}
	s.fence = token
	return s.status, true
}

func (s *fencedRow) pay(token int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token != s.fence || s.status != "unpaid" {
		return false // a newer holder has claimed the row: this holder's lock is gone
	}
	s.status = "paid"
	return true
}

// A holder whose lock ended without its knowing (a GC pause past its lease,
// here a ForceUnlock) still carries its old token: once a newer holder has
// claimed the row, the store refuses its late write, even one made before
// the newer holder writes.
func ExampleFence() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()
	store := &fencedRow{status: "unpaid"}
	m, err := locks.Mutex("order:44")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}

	first, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	stale, _ := scriptlock.Fence(first)
	status, _ := store.claim(stale)
	fmt.Println("first holder read:", status)
	// An operator in another process forces the lock open; the first holder
	// does not know yet (its own Client would have ended its context).
	admin, closeAdmin := connect()
	defer closeAdmin()
	forced, err := admin.Mutex("order:44")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := forced.ForceUnlock(ctx); err != nil {
		log.Fatal(err)
	}

	second, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Unlock(second)
	token, _ := scriptlock.Fence(second)
	status, _ = store.claim(token)
	fmt.Println("second holder read:", status)
	fmt.Println("first holder's late write accepted:", store.pay(stale))
	fmt.Println("second holder's write accepted:", store.pay(token))
	// Output:
	// first holder read: unpaid
	// second holder read: unpaid
	// first holder's late write accepted: false
	// second holder's write accepted: true
}

// A FairMutex grants the lock in arrival order; TryLock with wait 0 never
// queues.
func ExampleClient_FairMutex() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()

	f, err := locks.FairMutex("report:nightly")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	lctx, err := f.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = f.TryLock(ctx, 0) // another owner, one attempt
	fmt.Println("second owner:", errors.Is(err, scriptlock.ErrNotAcquired))
	if err := f.Unlock(lctx); err != nil { // wakes the next waiter in line
		log.Fatal(err)
	}
	lctx, err = f.TryLock(ctx, 0)
	fmt.Println("after Unlock:", err)
	_ = f.Unlock(lctx)
	// Output:
	// second owner: true
	// after Unlock: <nil>
}

// A LeanMutex is a plain SET NX PX lock for short, non-nested sections: the
// holder locking again is refused with ErrNotReentrant, and it hands out
// fencing tokens only with WithFencing.
func ExampleClient_LeanMutex() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()

	l, err := locks.LeanMutex("stock:sku-9", scriptlock.WithFencing())
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	lctx, err := l.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = l.Lock(lctx) // the same owner again
	fmt.Println("re-entry:", errors.Is(err, scriptlock.ErrNotReentrant))
	_, err = l.TryLock(ctx, 0) // another owner, one attempt
	fmt.Println("second owner:", errors.Is(err, scriptlock.ErrNotAcquired))
	token, ok := scriptlock.Fence(lctx)
	fmt.Println("fencing token:", ok && token > 0)
	fmt.Println("unlock:", l.Unlock(lctx))
	// Output:
	// re-entry: true
	// second owner: true
	// fencing token: true
	// unlock: <nil>
}

// Readers share an RWMutex; a writer waits until the last reader is gone.
func ExampleClient_RWMutex() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()

	rw, err := locks.RWMutex("catalog")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	r1, err := rw.RLock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	r2, err := rw.RLock(ctx) // a second reader, at the same time
	if err != nil {
		log.Fatal(err)
	}
	_, err = rw.TryLock(ctx, 0)
	fmt.Println("writer while reading:", errors.Is(err, scriptlock.ErrNotAcquired))

	_ = rw.RUnlock(r1)
	_ = rw.RUnlock(r2)
	w, err := rw.TryLock(ctx, 0)
	fmt.Println("writer after the readers:", err)
	token, _ := scriptlock.Fence(w) // writes carry fencing tokens
	fmt.Println("write token:", token > 0)
	_ = rw.Unlock(w)
	// Output:
	// writer while reading: true
	// writer after the readers: <nil>
	// write token: true
}

// A Semaphore is a count of permits anyone may take or give back.
func ExampleClient_Semaphore() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()

	sem, err := locks.Semaphore("pdf-renderers")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	if _, err := sem.TrySetPermits(ctx, 2); err != nil { // only if not set yet
		log.Fatal(err)
	}
	if err := sem.Acquire(ctx, 2); err != nil { // waits until 2 permits are free
		log.Fatal(err)
	}
	err = sem.TryAcquire(ctx, 1, 50*time.Millisecond)
	fmt.Println("a third permit:", errors.Is(err, scriptlock.ErrNotAcquired))
	if err := sem.Release(ctx, 2); err != nil {
		log.Fatal(err)
	}
	n, _ := sem.AvailablePermits(ctx)
	fmt.Println("available:", n)
	deleted, _ := sem.Delete(ctx) // removes the semaphore's keys
	fmt.Println("deleted:", deleted)
	// Output:
	// a third permit: true
	// available: 2
	// deleted: true
}

// A PermitSemaphore's permits have ids and leases: only the id releases a
// permit, and a permit whose holder died returns when its lease ends.
func ExampleClient_PermitSemaphore() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()

	slots, err := locks.PermitSemaphore("gpu-slots")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	if _, err := slots.TrySetPermits(ctx, 1); err != nil {
		log.Fatal(err)
	}
	id, err := slots.Acquire(ctx, 30*time.Second) // back in the pool after 30 s unless released
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("permit id digits:", len(id))
	if err := slots.Extend(ctx, id, time.Minute); err != nil { // a new lease, counted from now
		log.Fatal(err)
	}
	fmt.Println("release:", slots.Release(ctx, id))
	err = slots.Release(ctx, id)
	fmt.Println("release again:", errors.Is(err, scriptlock.ErrUnknownPermit))
	// Output:
	// permit id digits: 32
	// release: <nil>
	// release again: true
}

// A CountDownLatch lets a coordinator wait until several workers are done.
func ExampleClient_CountDownLatch() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()

	latch, err := locks.CountDownLatch("batch-42")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	if _, err := latch.TrySetCount(ctx, 3); err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			// ... a worker's part of the batch
			if err := latch.CountDown(ctx); err != nil {
				log.Print(err)
			}
		})
	}
	if err := latch.Await(ctx); err != nil { // returns when the count reaches zero
		log.Fatal(err)
	}
	wg.Wait()
	n, _ := latch.Count(ctx)
	fmt.Println("count:", n)
	// Output:
	// count: 0
}

// A MultiLock holds several locks as one, all or nothing; each member keeps
// its own fencing token.
func ExampleNewMultiLock() {
	locks, closeLocks := connect()
	defer closeLocks()
	ctx := context.Background()

	order, err := locks.Mutex("order:17")
	if err != nil {
		log.Fatal(err)
	}
	wallet, err := locks.Mutex("wallet:3") // members may live on different Redis deployments
	if err != nil {
		log.Fatal(err)
	}
	ml, err := scriptlock.NewMultiLock([]scriptlock.Locker{order, wallet})
	if err != nil {
		log.Fatal(err)
	}
	lctx, err := ml.Lock(ctx)
	if err != nil {
		log.Fatal(err) // never holding part of the set
	}
	o, _ := scriptlock.FenceOf(lctx, "order:17")
	w, _ := scriptlock.FenceOf(lctx, "wallet:3")
	fmt.Println("tokens:", o > 0, w > 0)
	fmt.Println("unlock:", ml.Unlock(lctx)) // releases every member
	// Output:
	// tokens: true true
	// unlock: <nil>
}

// A RedLock holds a lock on a majority of independent Redis deployments, one
// Client each.
func ExampleNewRedLock() {
	var clients []*scriptlock.Client
	for _, addr := range redisAddrs() { // three independent servers
		rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
		if err != nil {
			log.Fatal(err)
		}
		defer rc.Close()
		c, err := scriptlock.New(rc)
		if err != nil {
			log.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	ctx := context.Background()

	rl, err := scriptlock.NewRedLock("nightly-settlement", clients)
	if err != nil {
		log.Fatal(err)
	}
	lctx, err := rl.Lock(ctx)
	if errors.Is(err, scriptlock.ErrQuorum) {
		log.Fatal(err) // a *QuorumError says why each node refused
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println("held on a majority of", len(clients), "nodes; quorum", rl.Quorum())
	// lctx ends, with cause ErrLockLost, once fewer than a majority hold it.
	fmt.Println("unlock:", rl.Unlock(lctx))
	// Output:
	// held on a majority of 3 nodes; quorum 2
	// unlock: <nil>
}
