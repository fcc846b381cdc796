package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Mutex release or ForceUnlock made again after its reply was lost (the
// first attempt ran, published "0" and woke the first Go waiter by name)
// finds its own work done. The waiter it woke may not hold the lock yet:
// the repeat must not wake the next Go waiter too (taking it out of the
// waiter set), nor publish "0" again, or two waiters would each take the
// wake for the lock's hand-off. Only the repeat of an attempt that failed at
// its publish (a refused SPUBLISH) tells the waiters.
func TestMutexRepeatAfterLostReplyWakesNoSecondWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 30*time.Second)
	c := newTestClient(t, node.Client(t), prefix)
	rc := node.Client(t)
	const client = "22222222-0000-8000-8000-000000000000"
	first, second := client+":w1", client+":w2"
	for _, tc := range []struct {
		name string
		// run makes the first attempt, which ran, and returns its repeat.
		run func(t *testing.T, m *Mutex, field string) func(again bool) (int64, error)
	}{
		{
			name: "vouched release",
			run: func(t *testing.T, m *Mutex, field string) func(again bool) (int64, error) {
				if res, held, err := generated.MutexReleaseLast(ctx, rc, m.key, m.channel, m.waiters, m.wake, field); err != nil || !held || res != 2 {
					t.Fatalf("release: %d, %v, %v; want 2 (released, a waiter woken)", res, held, err)
				}
				queue, timeouts := fairKeys(m.key, true)
				return func(again bool) (int64, error) {
					res, _, err := generated.MutexRelease(ctx, rc, m.key, m.channel, m.latch+":vouched", m.waiters, m.wake, m.fence, queue, timeouts, time.Minute, field, "publish", 10*time.Second, true, true, 0, again)
					return res, err
				}
			},
		},
		{
			name: "release not vouched",
			run: func(t *testing.T, m *Mutex, field string) func(again bool) (int64, error) {
				queue, timeouts := fairKeys(m.key, true)
				release := func(again bool) (int64, error) {
					res, _, err := generated.MutexRelease(ctx, rc, m.key, m.channel, m.latch+":unvouched", m.waiters, m.wake, m.fence, queue, timeouts, time.Minute, field, "publish", 10*time.Second, again, false, 0, again)
					return res, err
				}
				if res, err := release(false); err != nil || res != 2 {
					t.Fatalf("release: %d, %v; want 2 (released, a waiter woken)", res, err)
				}
				return release
			},
		},
		{
			name: "ForceUnlock",
			run: func(t *testing.T, m *Mutex, _ string) func(again bool) (int64, error) {
				record := m.latch + ":force"
				if _, err := generated.RecordReserve(ctx, rc, record, time.Minute); err != nil {
					t.Fatal(err)
				}
				force := func(again bool) (int64, error) {
					ok, err := generated.MutexForceUnlock(ctx, rc, m.key, m.channel, m.waiters, m.wake, record, "publish", time.Minute, 0, again)
					if ok {
						return 1, err
					}
					return 0, err
				}
				if ok, err := force(false); err != nil || ok != 1 {
					t.Fatalf("ForceUnlock: %d, %v; want deleted", ok, err)
				}
				return force
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMutex(t, c, "repeat-quiet:"+tc.name)
			field := "11111111-0000-8000-8000-000000000000:holder"
			for _, cmd := range [][]string{
				{"HSET", m.key, field, "1"}, {"PEXPIRE", m.key, "30000"},
				{"ZADD", m.waiters, "1", first, "2", second},
			} {
				if err := rc.Do(ctx, rc.B().Arbitrary(cmd...).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			log := listen(t, node, m.channel, m.wake+":"+client)
			repeat := tc.run(t, m, field)
			if got, want := log.next(t, 2*time.Second), m.channel+" 0"; got != want {
				t.Fatalf("first attempt published %q, want %q", got, want)
			}
			if got, want := log.next(t, 2*time.Second), m.wake+":"+client+" 1:"+first; got != want {
				t.Fatalf("first attempt published %q, want %q", got, want)
			}
			// The first waiter, woken, has not taken the lock yet.
			res, err := repeat(false)
			if err != nil || res != 1 {
				t.Fatalf("repeat: %d, %v; want 1 (released, as the first attempt did)", res, err)
			}
			log.quiet(t, 300*time.Millisecond)
			if n, err := rc.Do(ctx, rc.B().Zscore().Key(m.waiters).Member(second).Build()).AsFloat64(); err != nil || n != 2 {
				t.Fatalf("the second waiter's place: %v, %v; want it still registered: the repeat woke it as well as the first", n, err)
			}
			// The repeat of an attempt that failed at its publish (again),
			// the lock still free, wakes as that attempt was to.
			if res, err := repeat(true); err != nil || res < 1 {
				t.Fatalf("repeat after a refused publish: %d, %v; want released", res, err)
			}
			if got, want := log.next(t, 2*time.Second), m.channel+" 0"; got != want {
				t.Fatalf("repeat after a refused publish published %q, want %q", got, want)
			}
			if got, want := log.next(t, 2*time.Second), m.wake+":"+client+" 2:"+second; got != want {
				t.Fatalf("repeat after a refused publish published %q, want %q", got, want)
			}
		})
	}
	// A nested release that brought the expiry forward published "0" once;
	// its repeat, the outer hold still held, publishes nothing more.
	t.Run("nested release", func(t *testing.T) {
		m := mustMutex(t, c, "repeat-quiet:nested")
		field := "11111111-0000-8000-8000-000000000000:holder"
		for _, cmd := range [][]string{{"HSET", m.key, field, "2"}, {"PEXPIRE", m.key, "60000"}} {
			if err := rc.Do(ctx, rc.B().Arbitrary(cmd...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		log := listen(t, node, m.channel)
		queue, timeouts := fairKeys(m.key, true)
		release := func(again bool) (int64, error) {
			res, _, err := generated.MutexRelease(ctx, rc, m.key, m.channel, m.latch+":nested", m.waiters, m.wake, m.fence, queue, timeouts, 10*time.Second, field, "publish", 10*time.Second, again, true, 0, again)
			return res, err
		}
		if res, err := release(false); err != nil || res != 0 {
			t.Fatalf("nested release: %d, %v; want 0 (still held)", res, err)
		}
		if got, want := log.next(t, 2*time.Second), m.channel+" 0"; got != want {
			t.Fatalf("nested release published %q, want %q", got, want)
		}
		if res, err := release(false); err != nil || res != 0 {
			t.Fatalf("repeated nested release: %d, %v; want 0 (still held)", res, err)
		}
		log.quiet(t, 300*time.Millisecond)
		if res, err := release(true); err != nil || res != 0 {
			t.Fatalf("nested release repeated after a refused publish: %d, %v; want 0 (still held)", res, err)
		}
		if got, want := log.next(t, 2*time.Second), m.channel+" 0"; got != want {
			t.Fatalf("nested release repeated after a refused publish published %q, want %q", got, want)
		}
		if n, err := rc.Do(ctx, rc.B().Hget().Key(m.key).Field(field).Build()).AsInt64(); err != nil || n != 1 {
			t.Fatalf("holds left: %d, %v; want 1", n, err)
		}
	})
}
