package scriptlock_test

import (
	"context"
	"database/sql"
	"errors"
	"log"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
)

// The examples compile with the package but do not run: they need a Redis.

func ExampleClient_Mutex() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	locks, err := scriptlock.New(rc) // one per process
	if err != nil {
		log.Fatal(err)
	}
	defer locks.Close()

	ctx := context.Background()
	m, err := locks.Mutex("order:42")
	if err != nil {
		log.Fatal(err) // an invalid name or option
	}
	lctx, err := m.TryLock(ctx, 2*time.Second)
	if errors.Is(err, scriptlock.ErrNotAcquired) {
		log.Print("someone else is working on order 42")
		return
	} else if err != nil {
		log.Fatal(err) // Redis unreachable, ctx ended...
	}
	defer m.Unlock(lctx) // releases even if lctx has been cancelled by then

	// Work under lctx: it is cancelled (cause scriptlock.ErrLockLost) if the
	// lock is lost, and nested code locking m with lctx re-enters the lock.
	<-lctx.Done()
}

func ExampleFence() {
	var db *sql.DB // orders(id, status, fence)
	var m *scriptlock.Mutex
	ctx := context.Background()

	lctx, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Unlock(lctx)
	token, _ := scriptlock.Fence(lctx)
	// A holder whose lease ran out while it was paused carries an older token
	// than the current holder, so its write changes nothing.
	res, err := db.ExecContext(lctx,
		`UPDATE orders SET status = 'paid', fence = $1 WHERE id = $2 AND fence < $1`, token, 42)
	if err != nil {
		log.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		log.Print("a newer lock holder got there first")
	}
}

func ExampleWithOwner() {
	var locks *scriptlock.Client
	ctx := context.Background()

	// Everything done on behalf of one request holds locks as one owner, so a
	// nested call that locks the same name re-enters instead of deadlocking.
	ctx = scriptlock.WithOwner(ctx, "request-7f3a")
	m, err := locks.Mutex("account:9")
	if err != nil {
		log.Fatal(err)
	}
	outer, _ := m.Lock(ctx)
	inner, _ := m.Lock(outer) // re-entered: State(outer).HoldCount is 2
	_ = m.Unlock(inner)
	_ = m.Unlock(outer) // the last Unlock releases the lock
}
