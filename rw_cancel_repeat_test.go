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
	for _, tc := range rwHeldCases("44444444-0000-8000-8000-000000000000:w:write", "44444444-0000-8000-8000-000000000000:r") {
		t.Run(tc.name, func(t *testing.T) {
			rw := mustRW(t, c, "cancel-repeat:"+tc.name)
			tc.hold(t, node, rw)
			log := listen(t, node, rw.channel)
			registered, err := generated.RwCancel(ctx, c.rc, rw.key, rw.writers, rw.channel, "gone:w:write", "publish", true, 0)
			if err != nil || registered {
				t.Fatalf("repeated withdrawal: %v, %v; want false (the writer gone)", registered, err)
			}
			tc.checkPublished(t, log, rw, "repeated withdrawal")
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
	for _, kind := range otherKindLocks("44444444-0000-8000-8000-000000000000") {
		t.Run(kind.name, func(t *testing.T) {
			rw := mustRW(t, c, "cancel-repeat-kind:"+kind.name)
			doAll(t, node, kind.take(rw.key))
			log := listen(t, node, rw.channel)
			registered, err := generated.RwCancel(ctx, c.rc, rw.key, rw.writers, rw.channel, "gone:w:write", "publish", true, 0)
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
	for _, tc := range rwHeldCases("55555555-0000-8000-8000-000000000000:x:write", "55555555-0000-8000-8000-000000000000:r") {
		t.Run(tc.name, func(t *testing.T) {
			rw := mustRW(t, c, "cancel-first:"+tc.name)
			tc.hold(t, node, rw)
			deadline := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
			doAll(t, node, []string{"ZADD", rw.writers, deadline, writer})
			log := listen(t, node, rw.channel)
			registered, err := generated.RwCancel(ctx, c.rc, rw.key, rw.writers, rw.channel, writer, "publish", false, 0)
			if err != nil || !registered {
				t.Fatalf("withdrawal: %v, %v; want true (the writer was registered)", registered, err)
			}
			tc.checkPublished(t, log, rw, "withdrawal")
		})
	}
}

// rwHeldCase is a RWMutex held by a writer, by a reader, or free, and
// whether a writer's withdrawal then tells the readers they may enter.
type rwHeldCase struct {
	name    string
	hash    []string // the lock's hash, none: free
	publish bool
}

// rwHeldCases are the lock held for writing by writeHolder, for reading by
// readHolder, and free.
func rwHeldCases(writeHolder, readHolder string) []rwHeldCase {
	return []rwHeldCase{
		{name: "write held", hash: []string{"mode", "write", writeHolder, "1"}},
		{name: "read held", hash: []string{"mode", "read", readHolder, "1"}, publish: true},
		{name: "free", publish: true},
	}
}

// hold writes the case's hash as rw's lock.
func (tc rwHeldCase) hold(t *testing.T, node *redistest.Node, rw *RWMutex) {
	t.Helper()
	if tc.hash != nil {
		doAll(t, node, append([]string{"HSET", rw.key}, tc.hash...))
	}
}

// checkPublished checks that what (a withdrawal) published "1" on rw's
// channel if the case says so, and nothing otherwise.
func (tc rwHeldCase) checkPublished(t *testing.T, log *channelLog, rw *RWMutex, what string) {
	t.Helper()
	if !tc.publish {
		log.quiet(t, 300*time.Millisecond)
		return
	}
	if got, want := log.next(t, 2*time.Second), rw.channel+" 1"; got != want {
		t.Fatalf("%s published %q, want %q", what, got, want)
	}
}

// otherKindLock is a lock of another kind that may take a RWMutex's name once
// it is free.
type otherKindLock struct {
	name string
	take func(key string) []string // the command that takes key
}

// otherKindLocks are a LeanMutex's string and a Mutex's hash without a mode,
// held by the Client of the given id.
func otherKindLocks(id string) []otherKindLock {
	return []otherKindLock{
		{"LeanMutex", func(key string) []string { return []string{"SET", key, id + ":lean", "PX", "30000"} }},
		{"Mutex", func(key string) []string { return []string{"HSET", key, id + ":m", "1"} }},
	}
}

// doAll runs each command on node, failing the test on an error.
func doAll(t *testing.T, node *redistest.Node, cmds ...[]string) {
	t.Helper()
	for _, cmd := range cmds {
		if err := node.Do(t, cmd...).Error(); err != nil {
			t.Fatal(err)
		}
	}
}
