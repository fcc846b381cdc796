package scriptlock

import (
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiting writer's withdrawal made again (RwCancel with repeat: its reply
// was lost, or its publish refused) finds the writer gone and tells the
// readers it held back that they may enter ("1") when no writer is left
// waiting. It must say so only while readers can enter (the lock free or
// held for reading): held by a writer (taken since the first attempt), the
// lock wakes every waiting reader and writer for nothing, and Redisson's
// readers read "1" as a read unlock.
func TestRWCancelRepeatQuietWhileWriteHeld(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	for _, tc := range []struct {
		name    string
		hash    []string // the lock's hash, none: free
		publish bool
	}{
		{name: "write held", hash: []string{"mode", "write", "44444444-0000-8000-8000-000000000000:w:write", "1"}},
		{name: "read held", hash: []string{"mode", "read", "44444444-0000-8000-8000-000000000000:r", "1"}, publish: true},
		{name: "free", publish: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rw := mustRW(t, c, "cancel-repeat:"+tc.name)
			if tc.hash != nil {
				if err := node.Do(t, append([]string{"HSET", rw.key}, tc.hash...)...).Error(); err != nil {
					t.Fatal(err)
				}
			}
			log := listen(t, node, rw.channel)
			registered, err := generated.RwCancel(ctx, c.rc, rw.key, rw.writers, rw.channel, "gone:w:write", "publish", true)
			if err != nil || registered {
				t.Fatalf("repeated withdrawal: %v, %v; want false (the writer gone)", registered, err)
			}
			if !tc.publish {
				log.quiet(t, 300*time.Millisecond)
				return
			}
			if got, want := log.next(t, 2*time.Second), rw.channel+" 1"; got != want {
				t.Fatalf("repeated withdrawal published %q, want %q", got, want)
			}
		})
	}
}

// The repeated withdrawal reads the lock whatever holds the name by then:
// freed, it may have been taken by another kind of lock (a LeanMutex's
// string, a Mutex's hash without a mode). Readers cannot enter there: the
// repeat publishes nothing, and does not fail with Redis's WRONGTYPE.
func TestRWCancelRepeatQuietWhileOtherKindHolds(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	for _, tc := range []struct {
		name string
		take []string // the other kind's lock on the name
	}{
		{"LeanMutex", []string{"SET", "{key}", "44444444-0000-8000-8000-000000000000:lean", "PX", "30000"}},
		{"Mutex", []string{"HSET", "{key}", "44444444-0000-8000-8000-000000000000:m", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rw := mustRW(t, c, "cancel-repeat-kind:"+tc.name)
			take := append([]string(nil), tc.take...)
			take[1] = rw.key
			if err := node.Do(t, take...).Error(); err != nil {
				t.Fatal(err)
			}
			log := listen(t, node, rw.channel)
			registered, err := generated.RwCancel(ctx, c.rc, rw.key, rw.writers, rw.channel, "gone:w:write", "publish", true)
			if err != nil || registered {
				t.Fatalf("repeated withdrawal: %v, %v; want false (the writer gone)", registered, err)
			}
			log.quiet(t, 300*time.Millisecond)
		})
	}
}

// A waiting writer that gives up while another writer holds the lock
// leaves no reader held back: readers cannot enter until that writer's
// release, which tells them. Its withdrawal, the first attempt too, must
// publish nothing then: "1" woke every waiting reader and writer, Go's and
// Redisson's (a read unlock to them), for nothing, at every give-up. Held
// for reading or free, the withdrawal tells the readers it held back.
func TestRWCancelQuietWhileWriteHeld(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	const writer = "44444444-0000-8000-8000-000000000000:w:write"
	for _, tc := range []struct {
		name    string
		hash    []string // the lock's hash, none: free
		publish bool
	}{
		{name: "write held", hash: []string{"mode", "write", "55555555-0000-8000-8000-000000000000:x:write", "1"}},
		{name: "read held", hash: []string{"mode", "read", "55555555-0000-8000-8000-000000000000:r", "1"}, publish: true},
		{name: "free", publish: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rw := mustRW(t, c, "cancel-first:"+tc.name)
			if tc.hash != nil {
				if err := node.Do(t, append([]string{"HSET", rw.key}, tc.hash...)...).Error(); err != nil {
					t.Fatal(err)
				}
			}
			deadline := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
			if err := node.Do(t, "ZADD", rw.writers, deadline, writer).Error(); err != nil {
				t.Fatal(err)
			}
			log := listen(t, node, rw.channel)
			registered, err := generated.RwCancel(ctx, c.rc, rw.key, rw.writers, rw.channel, writer, "publish", false)
			if err != nil || !registered {
				t.Fatalf("withdrawal: %v, %v; want true (the writer was registered)", registered, err)
			}
			if !tc.publish {
				log.quiet(t, 300*time.Millisecond)
				return
			}
			if got, want := log.next(t, 2*time.Second), rw.channel+" 1"; got != want {
				t.Fatalf("withdrawal published %q, want %q", got, want)
			}
		})
	}
}
