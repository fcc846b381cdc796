package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// registrationKeys are the keys a waiter registers in: Mutex's waiter set,
// FairMutex's queues (both protocols) and RWMutex's pending writers.
var registrationKeys = []string{"scriptlock_lock_waiters:", "scriptlock_fair_queue:", "scriptlock_fair_timeout:",
	"redisson_lock_queue:", "redisson_lock_timeout:", "redisson_rwlock_writers:"}

// A waiter whose wait ends without the lock (ctx ended, TryLock's wait)
// leaves no registration behind: not after the waiter timeout, but as it
// returns (a wait its ctx ended leaves in the background).
func TestEndedWaitLeavesNoRegistration(t *testing.T) {
	t.Parallel()
	ends := []struct {
		name string
		wait func(l Locker) error
	}{
		{"Cancelled", func(l Locker) error {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(400*time.Millisecond, cancel)
			_, err := l.Lock(ctx)
			if !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		}},
		{"TryLockWait", func(l Locker) error {
			_, err := l.TryLock(context.Background(), 400*time.Millisecond)
			if !errors.Is(err, ErrNotAcquired) {
				return err
			}
			return nil
		}},
	}
	for _, wk := range waitKinds[:5] {
		for _, end := range ends {
			t.Run(wk.name+"/"+end.name, func(t *testing.T) {
				p := newProxied(t)
				h := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
				_, release := wk.setup(t, h, p.c, "ended")
				defer release()
				l := waitLocker(t, wk.name, p.c, "ended")
				if err := end.wait(l); err != nil {
					t.Fatalf("wait: %v", err)
				}
				var left []string
				ok := eventually(time.Second, func() bool {
					keys, err := p.node.Do(t, "KEYS", "*").AsStrSlice()
					if err != nil {
						t.Fatal(err)
					}
					left = left[:0]
					for _, k := range keys {
						for _, r := range registrationKeys {
							if strings.HasPrefix(k, r) {
								left = append(left, k)
							}
						}
					}
					return len(left) == 0
				})
				if !ok {
					t.Errorf("registration keys %v left a second after the wait ended", left)
				}
			})
		}
	}
}

// waitLocker is the waiting side of the lock waitKinds.
func waitLocker(t *testing.T, kind string, c *Client, name string) Locker {
	switch kind {
	case "Mutex":
		return mustMutex(t, c, name)
	case "FairMutex":
		return mustFair(t, c, name)
	case "FairMutexRedissonQueue":
		return mustFair(t, c, name, WithRedissonFairQueue(3*time.Second))
	case "RWMutexWriter":
		return mustRW(t, c, name)
	case "RWMutexReader":
		return mustRW(t, c, name).RLocker()
	}
	t.Fatalf("no locker for %s", kind)
	return nil
}
