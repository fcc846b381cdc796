package scriptlock

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// noChannelClients makes, on each node, an ACL user "app" that may run every
// command on every key but publish on no channel, so that every release
// sending a message is refused (NO_PUBLISH, nothing changed), and returns a
// Client per node logged in as it, all with one key prefix.
func noChannelClients(t *testing.T, nodes []*redistest.Node, opts ...Option) []*Client {
	t.Helper()
	opts = append([]Option{sharedPrefix(t)}, opts...)
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels", "+@all").Error(); err != nil {
			t.Fatalf("ACL SETUSER: %v", err)
		}
		cs[i] = newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), opts...)
	}
	return cs
}

// allowChannels lets the user "app" publish on every channel of each node.
func allowChannels(t *testing.T, nodes ...*redistest.Node) {
	t.Helper()
	for _, n := range nodes {
		if err := n.Do(t, "ACL", "SETUSER", "app", "allchannels").Error(); err != nil {
			t.Fatal(err)
		}
	}
}

// requireHeld fails the test unless each key is held on n (want) or free.
func requireHeld(t *testing.T, n *redistest.Node, want bool, what string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if got, _ := n.Do(t, "EXISTS", k).AsInt64(); (got == 1) != want {
			t.Fatalf("%s: %s %s", k, what, map[bool]string{true: "is gone", false: "is still held"}[want])
		}
	}
}

// redLockHeldEverywhere fails the test unless every node holds r's lock.
func redLockHeldEverywhere(t *testing.T, r *RedLock, nodes []*redistest.Node, what string) {
	t.Helper()
	for i, n := range nodes {
		requireHeld(t, n, true, what, r.nodes[i].Key())
	}
}

// refusedUnlocks is the outcome of two Unlocks of one hold whose releases
// the ACL refused: first took the hold's unlocking, second was made beside
// it. Both must report the refusal (generated.ErrNoPublish), and neither
// ErrNotHeld, "already unlocked", while the lock is still held.
func refusedUnlocks(t *testing.T, first, second error, firstWhat, secondWhat string) {
	t.Helper()
	for _, e := range []struct {
		err  error
		what string
	}{{first, firstWhat}, {second, secondWhat}} {
		if errors.Is(e.err, ErrNotHeld) {
			t.Fatalf("%s answered ErrNotHeld while the lock is held: %v", e.what, e.err)
		}
		if !errors.Is(e.err, generated.ErrNoPublish) {
			t.Fatalf("%s: %v, want generated.ErrNoPublish", e.what, e.err)
		}
	}
}

// unlockBesideBlocked unlocks lctx with unlock, and, once setHook's hook
// has seen that Unlock start releasing, unlocks again with second beside it;
// the first release is held back for 100 ms. It returns both errors.
func unlockBesideBlocked(started, proceed chan struct{}, first, second func() error) (error, error) {
	firstErr := make(chan error, 1)
	go func() { firstErr <- first() }()
	<-started
	secondErr := make(chan error, 1)
	go func() { secondErr <- second() }()
	time.Sleep(100 * time.Millisecond)
	close(proceed)
	return <-firstErr, <-secondErr
}

// unlockBesideStarting runs first, the Unlock with the hold's context, with
// an unlockHook (set by setHook) that, when that Unlock has taken the hold's
// unlocking, starts second, an Unlock by owner, and waits until it has marked
// the hold (marked) or 500 ms passed (it may wait for the first instead).
func unlockBesideStarting(setHook func(func()), marked func() bool, first, second func() error) (error, error) {
	secondErr := make(chan error, 1)
	var once atomic.Bool
	setHook(func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		go func() { secondErr <- second() }()
		for end := time.Now().Add(500 * time.Millisecond); !marked() && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
	})
	e1 := first()
	return e1, <-secondErr
}
