package scriptlock

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// keysState is every key's DUMP and remaining life on n, by name.
type keyState struct {
	dump string
	pttl int64
	at   time.Time // when the PTTL's answer came
}

func keysState(t *testing.T, n *redistest.Node) map[string]keyState {
	t.Helper()
	keys, err := n.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	cmds := make([][]string, 0, 2*len(keys))
	for _, k := range keys {
		cmds = append(cmds, []string{"DUMP", k}, []string{"PTTL", k})
	}
	res := n.DoMulti(t, cmds...)
	at := time.Now()
	out := make(map[string]keyState, len(keys))
	for i, k := range keys {
		d, err := res[2*i].ToString()
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		p, err := res[2*i+1].AsInt64()
		if err != nil {
			t.Fatalf("PTTL %s: %v", k, err)
		}
		out[k] = keyState{d, p, at}
	}
	return out
}

// sameKeys reports what differs between two snapshots taken a short while
// apart: a key added, removed, its value changed, or its life set anew.
func sameKeys(before, after map[string]keyState) []string {
	var diff []string
	for k, b := range before {
		a, ok := after[k]
		switch {
		case !ok:
			diff = append(diff, k+" removed")
		case a.dump != b.dump:
			diff = append(diff, k+" changed")
		// Its life runs down no faster than the time between the reads
		// (a second allowed for the first read's way to the test): less
		// left than that is a life set anew, shorter.
		case (a.pttl < 0) != (b.pttl < 0) || a.pttl > b.pttl || a.pttl < b.pttl-a.at.Sub(b.at).Milliseconds()-1000:
			diff = append(diff, k+" life "+strconv.FormatInt(b.pttl, 10)+" -> "+strconv.FormatInt(a.pttl, 10))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diff = append(diff, k+" added")
		}
	}
	sort.Strings(diff)
	return diff
}

// TestReleaseRefusedWritesNothing: a release the ACL user may not publish is
// refused with NO_PUBLISH and "nothing changed", for every lock kind and
// whoever waits: every key keeps its value and its life (DUMP, PTTL), and
// the hold's context ends with ErrLockLost. So does a force unlock (but for
// the record it reserves before the call).
func TestReleaseRefusedWritesNothing(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	past := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	later := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
	do := func(args ...string) {
		t.Helper()
		if err := n.Do(t, args...).Error(); err != nil {
			t.Fatal(err)
		}
	}
	m := mustMutex(t, app, "m")
	mc := mustMutex(t, app, "mc")
	mr := mustMutex(t, app, "mr", WithLease(10*time.Second))
	mrLong := mustMutex(t, app, "mr", WithLease(time.Minute))
	f := mustFair(t, app, "f")
	rf := mustFair(t, app, "rf", WithRedissonFairQueue(time.Minute))
	rw := mustRW(t, app, "rw")
	rr := mustRW(t, app, "rr")
	for _, k := range []struct {
		name   string
		lock   func() (context.Context, error)
		unlock func(context.Context) error
		queue  func()
		force  func() (bool, error)
	}{
		{"Mutex", func() (context.Context, error) { return m.Lock(ctx) }, m.Unlock, nil, func() (bool, error) { return m.ForceUnlock(ctx) }},
		// A re-entry with a longer lease given up: the release brings the
		// expiry forward, and tells the waiters.
		{"Mutex, re-entered", func() (context.Context, error) {
			held, err := mr.Lock(WithOwner(ctx, "o"))
			if err == nil {
				held, err = mrLong.Lock(WithOwner(ctx, "o"))
			}
			return held, err
		}, mrLong.Unlock, nil, func() (bool, error) { return mr.ForceUnlock(ctx) }},
		{"Mutex, contended", func() (context.Context, error) { return mc.Lock(ctx) }, mc.Unlock, func() {
			do("ZADD", mc.waiters, "1000", "55555555-0000-4000-8000-000000000000:1")
		}, func() (bool, error) { return mc.ForceUnlock(ctx) }},
		// A dead head (its deadline passed) before a live one.
		{"FairMutex", func() (context.Context, error) { return f.Lock(ctx) }, f.Unlock, func() {
			do("RPUSH", f.queue, "33333333-0000-4000-8000-000000000000:1", "33333333-0000-4000-8000-000000000000:2")
			do("ZADD", f.timeouts, past, "33333333-0000-4000-8000-000000000000:1", later, "33333333-0000-4000-8000-000000000000:2")
		}, func() (bool, error) { return f.ForceUnlock(ctx) }},
		{"FairMutex (Redisson's queue)", func() (context.Context, error) { return rf.Lock(ctx) }, rf.Unlock, func() {
			do("RPUSH", rf.queue, "44444444-0000-4000-8000-000000000000:1", "44444444-0000-4000-8000-000000000000:2")
			do("ZADD", rf.timeouts, past, "44444444-0000-4000-8000-000000000000:1", later, "44444444-0000-4000-8000-000000000000:2")
		}, func() (bool, error) { return rf.ForceUnlock(ctx) }},
		{"RWMutex write", func() (context.Context, error) { return rw.Lock(ctx) }, rw.Unlock, nil, func() (bool, error) { return rw.ForceUnlock(ctx) }},
		{"RWMutex read", func() (context.Context, error) { return rr.RLock(ctx) }, rr.RUnlock, nil, func() (bool, error) { return rr.ForceUnlock(ctx) }},
	} {
		held, err := k.lock()
		if err != nil {
			t.Fatalf("%s: lock: %v", k.name, err)
		}
		if k.queue != nil {
			k.queue()
		}
		before := keysState(t, n)
		err = k.unlock(held)
		if !errors.Is(err, generated.ErrNoPublish) {
			t.Errorf("%s: Unlock by a user without the channels: %v, want generated.ErrNoPublish", k.name, err)
		}
		if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
			t.Errorf("%s: Unlock refused (%v), yet it wrote: %v", k.name, err, diff)
		}
		select {
		case <-held.Done():
			if cause := context.Cause(held); !errors.Is(cause, ErrLockLost) {
				t.Errorf("%s: the hold's context ended with %v, want ErrLockLost", k.name, cause)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: the hold's context did not end after its refused release", k.name)
		}
		before = keysState(t, n)
		ok, err := k.force()
		if ok || !errors.Is(err, generated.ErrNoPublish) {
			t.Errorf("%s: ForceUnlock by a user without the channels: %v %v, want false, generated.ErrNoPublish", k.name, ok, err)
		}
		after := keysState(t, n)
		for key := range after {
			if _, was := before[key]; !was && strings.HasPrefix(key, "redisson_unlock_latch:") {
				delete(after, key) // the call's reserved record
			}
		}
		if diff := sameKeys(before, after); len(diff) > 0 {
			t.Errorf("%s: ForceUnlock refused (%v), yet it wrote: %v", k.name, err, diff)
		}
	}
}
