package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Queue entries and pending writers whose deadline passed belong to waiters
// that are gone: list, inspect, watch and --json count only the live ones and
// show the stale ones apart.
func TestStaleWaitersNotCounted(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	do := func(args ...string) {
		t.Helper()
		if err := d.rc.Do(ctx, d.rc.B().Arbitrary(args...).Build()).Error(); err != nil {
			t.Fatal(args, err)
		}
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10) }
	id := "0a1b2c3d-0000-4000-8000-00000000000"

	// A held FairMutex: one live waiter in its own queue, two gone; one live
	// and one gone in Redisson's.
	f := mustFair(t, c, "fair")
	if _, err := f.Lock(scriptlock.WithOwner(ctx, "holder")); err != nil {
		t.Fatal(err)
	}
	k := layout.For(prefix+"fair", false)
	do("RPUSH", k.FairQueue, id+"1:gone", id+"2:live", id+"3:gone")
	do("ZADD", k.FairTimeouts, ms(-time.Minute), id+"1:gone", ms(time.Minute), id+"2:live", ms(-time.Second), id+"3:gone")
	do("RPUSH", k.Queue, id+"4:gone", id+"5:live")
	do("ZADD", k.Timeouts, ms(-time.Minute), id+"4:gone", ms(time.Minute), id+"5:live")

	// A read-held RWMutex: one live pending writer, one gone.
	rw := mustRW(t, c, "rw")
	if _, err := rw.RLock(scriptlock.WithOwner(ctx, "reader")); err != nil {
		t.Fatal(err)
	}
	kw := layout.For(prefix+"rw", false)
	do("ZADD", kw.Writers, ms(-time.Minute), id+"6:gone:write", ms(time.Minute), id+"7:live:write")

	fr := inspectJSON(t, ctx, d, prefix, "fair")
	if fr.QueueLength != 2 || fr.StaleQueueLength != 3 {
		t.Errorf("fair: queue_length %d, stale %d; want 2 live, 3 stale", fr.QueueLength, fr.StaleQueueLength)
	}
	for _, q := range fr.Queue {
		if q.Stale != strings.HasSuffix(q.Field, ":gone") {
			t.Errorf("fair: waiter %s stale=%v", q.Field, q.Stale)
		}
	}
	wr := inspectJSON(t, ctx, d, prefix, "rw")
	if wr.WriterCount != 1 || wr.StaleWriterCount != 1 {
		t.Errorf("rw: pending_writer_count %d, stale %d; want 1 live, 1 stale", wr.WriterCount, wr.StaleWriterCount)
	}

	// list: QUEUED counts the live ones only.
	r := cli(ctx, d, "", "list", "--key-prefix", prefix)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != exitOK || len(lines) != 3 {
		t.Fatalf("list: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	header := strings.Fields(lines[0])
	want := map[string]string{"fair": "2", "rw": "1"}
	for _, line := range lines[1:] {
		row := strings.Fields(line)
		for i, h := range header {
			if h == "QUEUED" && row[i] != want[row[0]] {
				t.Errorf("list: QUEUED of %s is %s, want %s (live waiters only)\n%s", row[0], row[i], want[row[0]], r.out)
			}
		}
	}
	var l listing
	r = cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatal(err, r.out)
	}
	for _, lk := range l.Locks {
		if n := lk.QueueLength + lk.WriterCount; strconv.FormatInt(n, 10) != want[strings.TrimPrefix(lk.Key, prefix)] {
			t.Errorf("list --json: %s counts %d waiters", lk.Key, n)
		}
	}

	// inspect: the totals and the stale ones apart.
	r = cli(ctx, d, "", "inspect", "--key-prefix", prefix, "fair")
	if !regexpLine(r.out, `^QUEUED\s+2 `) || !regexpLine(r.out, `^STALE QUEUED\s+3 `) || strings.Count(r.out, "  stale\n") != 3 {
		t.Errorf("inspect fair:\n%s", r.out)
	}
	r = cli(ctx, d, "", "inspect", "--key-prefix", prefix, "rw")
	if !regexpLine(r.out, `^PENDING WRITERS\s+1$`) || !regexpLine(r.out, `^STALE WRITERS\s+1 `) {
		t.Errorf("inspect rw:\n%s", r.out)
	}

	// watch: its first line names the live waiters only.
	for name, wantLine := range map[string]string{
		"fair": "; 2 queued: " + id + "2:live, " + id + "5:live; 3 stale in queue",
		"rw":   "; 1 writer waiting: " + id + "7:live:write; 1 stale writer",
	} {
		if w := watchFirst(t, ctx, d, "--key-prefix", prefix, name); !strings.Contains(w.out, wantLine) {
			t.Errorf("watch %s: want %q in\n%s%s", name, wantLine, w.out, w.errOut)
		}
	}
}

// regexpLine reports whether a line of out matches the pattern.
func regexpLine(out, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, l := range strings.Split(out, "\n") {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// singleNode is one redis-server of the test's own, for tests that need no
// Cluster.
func singleNode(t *testing.T) deployment {
	t.Helper()
	node := redistest.Server(t)
	return deployment{name: "single", url: "redis://" + node.Addr, rc: node.Client(t)}
}
