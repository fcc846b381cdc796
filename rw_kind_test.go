package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read-write lock and a Mutex are both hashes in Redisson's layout, told
// apart by the read-write lock's mode field. An RWMutex on a name a Mutex
// holds, or a Mutex on a name an RWMutex holds, is ErrWrongKind and leaves
// the lock as it was; the read-write scripts took a Mutex's hash over.
func TestRWMutexAndMutexOnOneName(t *testing.T) {
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
