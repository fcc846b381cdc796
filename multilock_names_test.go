package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Two members with one name (the same lock name on two deployments, or two
// handles of one lock) cannot be ordered by name: two MultiLocks over them,
// given in opposite orders, would take them in opposite orders and wait on
// each other in a cycle, and FenceOf could name only one of their tokens.
// NewMultiLock refuses them.
func TestMultiLockSameNameMembers(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 2)
	c0 := newTestClient(t, nodes[0].Client(t))
	c1 := newTestClient(t, nodes[1].Client(t))
	x0, x1 := mustMutex(t, c0, "x"), mustMutex(t, c1, "x")
	again := mustMutex(t, c0, "x")
	for _, locks := range [][]Locker{{x0, x1}, {x1, x0}, {x0, again}} {
		ml, err := NewMultiLock(locks)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("NewMultiLock over two members named %q: %v, want ErrInvalidArgument (acquisition order %v)", "x", err, clientOrder(ml, c0))
		}
	}
}

// clientOrder says which member a MultiLock takes first: 0 when it is c0's.
func clientOrder(ml *MultiLock, c0 *Client) []int {
	if ml == nil {
		return nil
	}
	var order []int
	for _, l := range ml.Locks() {
		if l.(*Mutex).c == c0 {
			order = append(order, 0)
		} else {
			order = append(order, 1)
		}
	}
	return order
}

// A nil handle in a Locker (a *Mutex whose constructor failed, its error
// dropped) is a nil member: NewMultiLock refuses it with ErrInvalidArgument
// instead of panicking as it reads the member's name.
func TestMultiLockTypedNilMember(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	var nilMutex *Mutex
	var nilRedLock *RedLock
	var nilMulti *MultiLock
	for _, locks := range [][]Locker{{nilMutex}, {mustMutex(t, c, "a"), nilRedLock}, {nilMulti, mustMutex(t, c, "b")}} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("NewMultiLock with a nil handle among %d members panicked: %v", len(locks), v)
				}
			}()
			if _, err := NewMultiLock(locks); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("NewMultiLock with a nil handle: %v, want ErrInvalidArgument", err)
			}
		}()
	}
}

// An owner id an RWMutex member refuses (one ending in ":write") is
// ErrInvalidArgument before any member is taken: the members ordered before
// the RWMutex were acquired (their fencing counters drawn, their waiters
// woken by the release) and given back first.
func TestMultiLockInvalidOwnerChangesNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	a := mustMutex(t, c, "a")
	for _, member := range []Locker{mustRW(t, c, "b"), mustRW(t, c, "b").RLocker()} {
		ml := mustMulti(t, []Locker{a, member})
		_, err := ml.TryLock(WithOwner(ctx, "job:write"), 0)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("TryLock with an owner the RWMutex refuses: %v, want ErrInvalidArgument", err)
		}
		if n, err := node.Do(t, "EXISTS", a.fence).AsInt64(); err != nil || n != 0 {
			t.Fatalf("member %q's fencing counter after the refused TryLock: EXISTS %d, %v; want it untouched", a.Name(), n, err)
		}
	}
}

// taggedLocker is a Locker of another package's kind whose values Go cannot
// compare (a slice field).
type taggedLocker struct {
	Locker
	tags []string
}

// Members whose values cannot be compared with == are distinct locks like
// any other: NewMultiLock takes them instead of panicking.
func TestMultiLockUncomparableMembers(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	locks := []Locker{taggedLocker{mustMutex(t, c, "a"), nil}, taggedLocker{mustMutex(t, c, "b"), []string{"x"}}}
	var err error
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("NewMultiLock over two %T members panicked: %v", locks[0], v)
			}
		}()
		_, err = NewMultiLock(locks)
	}()
	if err != nil {
		t.Fatalf("NewMultiLock: %v", err)
	}
	same := taggedLocker{mustMutex(t, c, "a"), nil}
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("NewMultiLock over two %T members named alike panicked: %v", same, v)
			}
		}()
		_, err = NewMultiLock([]Locker{same, taggedLocker{mustMutex(t, c, "a"), nil}})
	}()
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("two members named %q: %v, want ErrInvalidArgument", "a", err)
	}
}
