package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read-write lock and a Mutex are both hashes in Redisson's layout, told
// apart by the read-write lock's mode field. An RWMutex on a name a Mutex
// holds, or a Mutex on a name an RWMutex holds, is ErrWrongKind and leaves
// the lock as it was; the read-write scripts took a Mutex's hash over.
func TestRWMutexAndMutexOnOneName(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	dump := func(key string) string {
		t.Helper()
		v, err := node.Do(t, "DUMP", key).ToString()
		if err != nil {
			t.Fatalf("DUMP %s: %v", key, err)
		}
		return v
	}

	m := mustMutex(t, c, "kind-mutex")
	mctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rw := mustRW(t, c, "kind-mutex")
	before := dump(m.Key())
	for _, call := range []struct {
		name string
		f    func(context.Context) (context.Context, error)
	}{
		{"RWMutex.TryLock", func(ctx context.Context) (context.Context, error) { return rw.TryLock(ctx, 0) }},
		{"RWMutex.TryRLock", func(ctx context.Context) (context.Context, error) { return rw.TryRLock(ctx, 0) }},
		{"RWMutex.Lock", rw.Lock},
		{"RWMutex.RLock", rw.RLock},
	} {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := call.f(cctx)
		cancel()
		if !errors.Is(err, ErrWrongKind) {
			t.Errorf("%s on a name a Mutex holds: %v, want ErrWrongKind", call.name, err)
		}
		if after := dump(m.Key()); after != before {
			t.Errorf("%s on a name a Mutex holds changed the lock", call.name)
			before = after
		}
	}
	if mctx.Err() != nil {
		t.Fatalf("the Mutex hold ended: %v", context.Cause(mctx))
	}

	rw2 := mustRW(t, c, "kind-rw")
	for _, read := range []bool{false, true} {
		lock := rw2.Lock
		if read {
			lock = rw2.RLock
		}
		lctx, err := lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before := dump(rw2.Key())
		m2 := mustMutex(t, c, "kind-rw")
		for _, call := range []struct {
			name string
			f    func(context.Context) (context.Context, error)
		}{
			{"Mutex.TryLock", func(ctx context.Context) (context.Context, error) { return m2.TryLock(ctx, 0) }},
			{"Mutex.Lock", m2.Lock},
		} {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := call.f(cctx)
			cancel()
			if !errors.Is(err, ErrWrongKind) {
				t.Errorf("%s on a name an RWMutex holds (read %v): %v, want ErrWrongKind", call.name, read, err)
			}
			if after := dump(rw2.Key()); after != before {
				t.Errorf("%s on a name an RWMutex holds changed the lock", call.name)
			}
		}
		unlock := rw2.Unlock
		if read {
			unlock = rw2.RUnlock
		}
		if err := unlock(lctx); err != nil {
			t.Fatal(err)
		}
	}
}

// RWMutex.State, IsLocked and ForceUnlock on a name a Mutex (a hash without
// a mode) or a LeanMutex (a string) holds are ErrWrongKind and leave the lock
// alone: State read a Mutex's hash as a free read-write lock, ForceUnlock
// deleted it, and a LeanMutex's WRONGTYPE came back unmarked.
func TestRWMutexInspectOtherKind(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	for _, other := range []Locker{mustMutex(t, c, "kind-m"), mustLean(t, c, "kind-l")} {
		lctx, err := other.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rw := mustRW(t, c, other.Name())
		before, _ := node.Do(t, "DUMP", rw.Key()).ToString()
		if st, err := rw.State(ctx); !errors.Is(err, ErrWrongKind) {
			t.Errorf("RWMutex.State on a name a %T holds: %+v, %v; want ErrWrongKind", other, st, err)
		}
		if locked, err := rw.IsLocked(ctx); !errors.Is(err, ErrWrongKind) {
			t.Errorf("RWMutex.IsLocked on a name a %T holds: %v, %v; want ErrWrongKind", other, locked, err)
		}
		if ok, err := rw.ForceUnlock(ctx); !errors.Is(err, ErrWrongKind) {
			t.Errorf("RWMutex.ForceUnlock on a name a %T holds: %v, %v; want ErrWrongKind", other, ok, err)
		}
		if after, _ := node.Do(t, "DUMP", rw.Key()).ToString(); after != before {
			t.Fatalf("RWMutex calls on a name a %T holds changed the lock", other)
		}
		if err := other.Unlock(lctx); err != nil {
			t.Fatalf("%T.Unlock: %v", other, err)
		}
	}
}

// TestMutexInspectOtherKind: Mutex and FairMutex State, IsLocked and
// ForceUnlock on a name another kind of lock holds (a read-write lock's
// hash, a LeanMutex's string, a Semaphore's count) are ErrWrongKind and
// change nothing; ForceUnlock deleted it.
func TestMutexInspectOtherKind(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	type other struct {
		what string
		take func(name string) (release func())
	}
	lock := func(l Locker) func() {
		lctx, err := l.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := l.Unlock(lctx); err != nil {
				t.Fatalf("%T.Unlock: %v", l, err)
			}
		}
	}
	others := []other{
		{"an RWMutex writer", func(name string) func() { return lock(mustRW(t, c, name)) }},
		{"an RWMutex reader", func(name string) func() { return lock(mustRW(t, c, name).RLocker()) }},
		{"a LeanMutex", func(name string) func() { return lock(mustLean(t, c, name)) }},
		{"a Semaphore", func(name string) func() {
			if ok, err := mustSem(t, c, name).TrySetPermits(ctx, 3); err != nil || !ok {
				t.Fatalf("TrySetPermits: %v, %v", ok, err)
			}
			return func() {}
		}},
	}
	type handle struct {
		kind       string
		state      func() (LockState, error)
		isLocked   func() (bool, error)
		forceUnlck func() (bool, error)
	}
	for i, o := range others {
		name := "kind-o" + strconv.Itoa(i)
		release := o.take(name)
		m, f := mustMutex(t, c, name), mustFair(t, c, name)
		for _, h := range []handle{
			{"Mutex", func() (LockState, error) { return m.State(ctx) }, func() (bool, error) { return m.IsLocked(ctx) }, func() (bool, error) { return m.ForceUnlock(ctx) }},
			{"FairMutex", func() (LockState, error) { return f.State(ctx) }, func() (bool, error) { return f.IsLocked(ctx) }, func() (bool, error) { return f.ForceUnlock(ctx) }},
		} {
			before, _ := node.Do(t, "DUMP", m.Key()).ToString()
			if st, err := h.state(); !errors.Is(err, ErrWrongKind) {
				t.Errorf("%s.State on a name %s holds: %+v, %v; want ErrWrongKind", h.kind, o.what, st, err)
			}
			if locked, err := h.isLocked(); !errors.Is(err, ErrWrongKind) {
				t.Errorf("%s.IsLocked on a name %s holds: %v, %v; want ErrWrongKind", h.kind, o.what, locked, err)
			}
			if ok, err := h.forceUnlck(); !errors.Is(err, ErrWrongKind) {
				t.Errorf("%s.ForceUnlock on a name %s holds: %v, %v; want ErrWrongKind", h.kind, o.what, ok, err)
			}
			if after, _ := node.Do(t, "DUMP", m.Key()).ToString(); after != before {
				t.Fatalf("%s calls on a name %s holds changed it", h.kind, o.what)
			}
		}
		release()
	}
}
