package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An RWMutex release made again after its reply was lost (the first
// attempt ran and published) answers from its latch. By then a waiter the
// first attempt woke may hold the lock: the repeat must not tell every
// waiter the lock is free (each would call Redis and sleep again), as the
// repeat of a ForceUnlock does not.
func TestRWMutexReleaseRepeatQuietWhileHeld(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 30*time.Second)
	c := newTestClient(t, node.Client(t), prefix)
	rw := mustRW(t, c, "rw:repeat-quiet")
	rc := node.Client(t)
	log := listen(t, node, rw.channel)
	const gone = "gone:1" // an owner whose first attempt's reply was lost
	for _, tc := range []struct {
		name   string
		setup  [][]string
		call   func(latch string) (int64, error)
		signal string
	}{
		{
			name:  "write",
			setup: [][]string{{"HSET", rw.key, "mode", "write", gone + ":write", "1"}, {"PEXPIRE", rw.key, "30000"}},
			call: func(latch string) (int64, error) {
				res, err := generated.RwWriteRelease(ctx, rc, rw.key, rw.channel, latch, rw.prefix, rw.fence, 30*time.Second, gone+":write", "publish", 10*time.Second, 0)
				return res.Status, err
			},
			signal: "1",
		},
		{
			name: "read",
			setup: [][]string{
				{"HSET", rw.key, "mode", "read", gone, "1"},
				{"SET", rwTimeouts(rw.key, gone) + ":1", "1", "PX", "30000"},
				{"PEXPIRE", rw.key, "30000"},
			},
			call: func(latch string) (int64, error) {
				res, err := generated.RwReadRelease(ctx, rc, rw.key, rw.channel, rwTimeouts(rw.key, gone), rw.prefix, latch, gone, "publish", 10*time.Second, 0, 0)
				return res.Status, err
			},
			signal: "0",
		},
	} {
		for _, cmd := range tc.setup {
			if err := rc.Do(ctx, rc.B().Arbitrary(cmd...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		latch := rw.latch + ":repeat-" + tc.name
		if st, err := tc.call(latch); err != nil || st != 2 {
			t.Fatalf("%s release: %d, %v; want 2 (released)", tc.name, st, err)
		}
		if m, want := log.next(t, 2*time.Second), rw.channel+" "+tc.signal; m != want {
			t.Fatalf("%s release published %q, want %q", tc.name, m, want)
		}
		// A waiter woken by it takes the lock.
		lctx, err := rw.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := tc.call(latch); err != nil || st != 2 {
			t.Fatalf("repeated %s release: %d, %v; want 2 (released), as the first attempt answered", tc.name, st, err)
		}
		log.quiet(t, 500*time.Millisecond)
		if err := rw.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
		if m, want := log.next(t, 2*time.Second), rw.channel+" 1"; m != want {
			t.Fatalf("Unlock published %q, want %q", m, want)
		}
	}
}
