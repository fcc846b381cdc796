package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A name whose key is another lock's companion key is ErrInvalidName: a
// read hold's lease key ({name}:<client-id>:<owner>:rwlock_timeout:1, or
// <name>:... for a name with a hash tag, within the key prefix), or, without
// a key prefix, a fencing counter, a release latch or a queue. A
// CountDownLatch of the lease key's name counted it down (the lease key
// holds 1), a Semaphore took or deleted it.
func TestNameOfCompanionKeyRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 5*time.Second)
	rw := mustRW(t, c, "{x}")
	lctx, err := rw.RLock(WithOwner(ctx, "o"))
	if err != nil {
		t.Fatal(err)
	}
	defer rw.RUnlock(lctx)
	lease := "{x}:" + c.ID() + ":o:rwlock_timeout:1"
	if n, err := node.Do(t, "EXISTS", rw.Key()+lease[3:]).AsInt64(); err != nil || n != 1 {
		t.Fatalf("read lease key: EXISTS %d, %v", n, err)
	}
	bare := newTestClient(t, node.Client(t), WithKeyPrefix(""))
	for _, x := range []struct {
		c    *Client
		name string
	}{
		{c, lease},
		{bare, lease},
		{bare, "{a}:" + c.ID() + ":o:rwlock_timeout:12"},
		{bare, "redisson_lock_token:{a}"},
		{bare, "redisson_unlock_latch:{a}:" + c.ID() + ":1"},
		{bare, "scriptlock_fair_queue:{a}"},
		{bare, "redisson_sc_latch:{a}:set"},
	} {
		for kind, make := range map[string]func() error{
			"Mutex":          func() error { _, err := x.c.Mutex(x.name); return err },
			"LeanMutex":      func() error { _, err := x.c.LeanMutex(x.name); return err },
			"Semaphore":      func() error { _, err := x.c.Semaphore(x.name); return err },
			"CountDownLatch": func() error { _, err := x.c.CountDownLatch(x.name); return err },
		} {
			if err := make(); !errors.Is(err, ErrInvalidName) {
				t.Errorf("%s(%q): %v, want ErrInvalidName", kind, x.name, err)
			}
		}
	}
	// Names that merely resemble them are fine.
	for _, name := range []string{"{x}:rwlock_timeout", "{x}:o:rwlock_timeout:a", "redisson_lock_token", "app:redisson_lock_token:{a}"} {
		if _, err := bare.Mutex(name); err != nil {
			t.Errorf("Mutex(%q): %v", name, err)
		}
	}
}

// companionKey looks at layout.CompanionPrefixes only for keys beginning
// "redisson_" or "scriptlock_": a prefix added beginning otherwise would
// never be refused.
func TestCompanionPrefixesShareTheFastPathPrefix(t *testing.T) {
	t.Parallel()
	for _, p := range layout.CompanionPrefixes {
		if !companionKey(p + "{a}") {
			t.Errorf("companionKey(%q) = false: prefix %q is skipped by the fast path", p+"{a}", p)
		}
	}
}
