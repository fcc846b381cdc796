package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, append(redistest.LeakOptions(),
		// After a failed connection (a wrong password) rueidis sleeps out a
		// reconnect delay in a goroutine of its own; it ends by itself.
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1"))...)
}

// deployment is a Redis the CLI is pointed at: a URL for the CLI, a client
// for the test's own lock handles, and raw access for checks.
type deployment struct {
	name string
	url  string
	rc   rueidis.Client
	// keys lists the keys on every primary (see listKeys).
	keys func(t *testing.T) map[string]time.Time
}

// listKeys lists the keys on nodes, each with the earliest time it can
// expire (its PTTL counted from before the PTTL was sent), the zero time for
// a key without expiry. A record a call leaves (a release's or a leave's,
// for its repeat) expires on its own a few seconds later: comparing key
// counts, one that expired between two readings read as a key removed.
func listKeys(t *testing.T, nodes ...*redistest.Node) map[string]time.Time {
	t.Helper()
	keys := map[string]time.Time{}
	for _, n := range nodes {
		names, err := n.Do(t, "KEYS", "*").AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range names {
			sent := time.Now()
			pttl, err := n.Do(t, "PTTL", k).AsInt64()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case pttl >= 0:
				keys[k] = sent.Add(time.Duration(pttl) * time.Millisecond)
			case pttl == -1:
				keys[k] = time.Time{}
			} // -2: expired since KEYS, as though not listed
		}
	}
	return keys
}

// sameKeys fails the test when after, listed by read, holds a key that
// before lacks, or lacks one of before's that could not have expired by then:
// what (the calls made between the two listings) changed Redis.
func sameKeys(t *testing.T, what string, before, after map[string]time.Time, read time.Time) {
	t.Helper()
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s changed Redis: key %q written", what, k)
		}
	}
	for k, expiry := range before {
		if _, ok := after[k]; !ok {
			switch {
			case expiry.IsZero():
				t.Errorf("%s changed Redis: key %q, without expiry, removed", what, k)
			case expiry.After(read):
				t.Errorf("%s changed Redis: key %q removed %s before it could expire", what, k, expiry.Sub(read).Round(time.Millisecond))
			}
		}
	}
}

// deployments starts one single node and one 3-primary cluster; every
// command is tested on both.
func deployments(t *testing.T) []deployment {
	t.Helper()
	node := redistest.Server(t)
	cl := redistest.Cluster(t, 3)
	clusterURL := "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2]
	return []deployment{
		{name: "single", url: "redis://" + node.Addr, rc: node.Client(t), keys: func(t *testing.T) map[string]time.Time {
			return listKeys(t, node)
		}},
		{name: "cluster", url: clusterURL, rc: cl.Client(t), keys: func(t *testing.T) map[string]time.Time {
			return listKeys(t, cl.Nodes...)
		}},
	}
}

// cli runs the command line in-process and returns exit code and output.
type result struct {
	code        int
	out, errOut string
}

func cli(ctx context.Context, d deployment, stdin string, args ...string) result {
	var out, errOut bytes.Buffer
	code := run(ctx, append([]string{"--url", d.url}, args...), strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// inspectJSON runs inspect --json on name; flags go before the command.
func inspectJSON(t *testing.T, ctx context.Context, d deployment, prefix, name string, flags ...string) *Report {
	t.Helper()
	r := cli(ctx, d, "", append(flags, "inspect", "--json", "--key-prefix", prefix, name)...)
	if r.code != exitOK {
		t.Fatalf("inspect %s: exit %d\n%s%s", name, r.code, r.out, r.errOut)
	}
	var rep Report
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("inspect %s: %v\n%s", name, err, r.out)
	}
	return &rep
}

func newClient(t *testing.T, rc rueidis.Client, prefix string, opts ...scriptlock.Option) *scriptlock.Client {
	t.Helper()
	// The failover guard waits up to 2 s for a replica's acknowledgement,
	// not the default 100 ms, which a loaded machine's replica can miss.
	c, err := scriptlock.New(rc, append([]scriptlock.Option{scriptlock.WithKeyPrefix(prefix), scriptlock.WithFailoverGuard(true, 2*time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// redissonLock is Redisson's RedissonLock.tryLockInnerAsync script, as a Java
// service runs it: it writes field <uuid>:<thread-id> with a hold count.
const redissonLock = `if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then
redis.call('hincrby', KEYS[1], ARGV[2], 1);
redis.call('pexpire', KEYS[1], ARGV[1]);
return nil;
end;
return redis.call('pttl', KEYS[1]);`

func redissonAcquire(t *testing.T, ctx context.Context, rc rueidis.Client, key, field string) {
	t.Helper()
	if err := rc.Do(ctx, rc.B().Eval().Script(redissonLock).Numkeys(1).Key(key).Arg("30000", field).Build()).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("Redisson lock on %s: want nil reply (acquired), got %v", key, err)
	}
}

func TestInspect(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			prefix := redistest.Prefix(t)
			c := newClient(t, d.rc, prefix, scriptlock.WithWaiterTimeout(time.Minute))

			// Mutex, held twice by one owner.
			m := mustMutex(t, c, "order:42")
			owner := scriptlock.WithOwner(ctx, "worker-7")
			l1, err := m.Lock(owner)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Lock(l1); err != nil {
				t.Fatal(err)
			}
			token, _ := scriptlock.Fence(l1)
			r := inspectJSON(t, ctx, d, prefix, "order:42")
			if r.Kind != kindMutex || r.HolderCount != 1 || len(r.Holders) != 1 {
				t.Fatalf("mutex: %+v", r)
			}
			if h := r.Holders[0]; h.Client != c.ID() || h.Owner != "worker-7" || h.Holds != 2 || h.Write || h.ReadLeaseMS != nil {
				t.Errorf("mutex holder %+v, want client %s owner worker-7 holds 2", h, c.ID())
			}
			if r.LeaseMS <= 0 || r.LeaseMS > scriptlock.DefaultLease.Milliseconds() {
				t.Errorf("mutex lease %d ms, want (0, 30000]", r.LeaseMS)
			}
			if r.Fence == nil || *r.Fence != token {
				t.Errorf("fence %v, want %d", r.Fence, token)
			}
			text := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "order:42")
			for _, want := range []string{"LAYOUT", "mutex", c.ID(), "worker-7", "exclusive"} {
				if !strings.Contains(text.out, want) {
					t.Errorf("table output lacks %q:\n%s", want, text.out)
				}
			}

			// Two Go waiters registered on the Mutex, in wake order.
			var mwg sync.WaitGroup
			mctx, cancelMutexWaiters := context.WithCancel(ctx)
			for _, o := range []string{"waiter-a", "waiter-b"} {
				mwg.Add(1)
				go func() {
					defer mwg.Done()
					if l, err := m.Lock(scriptlock.WithOwner(mctx, o)); err == nil {
						_ = m.Unlock(l)
					}
				}()
				waitFor(t, ctx, func() bool {
					r := inspectJSON(t, ctx, d, prefix, "order:42")
					return len(r.MutexWaiters) > 0 && strings.HasSuffix(r.MutexWaiters[len(r.MutexWaiters)-1].Field, ":"+o)
				})
			}
			r = inspectJSON(t, ctx, d, prefix, "order:42")
			if r.Kind != kindMutex || r.MutexWaiterCount != 2 || len(r.MutexWaiters) != 2 ||
				r.MutexWaiters[0].Field != c.ID()+":waiter-a" || r.MutexWaiters[1].Field != c.ID()+":waiter-b" {
				t.Fatalf("mutex waiters: %+v", r)
			}
			text = cli(ctx, d, "", "inspect", "--key-prefix", prefix, "order:42")
			for _, want := range []string{"GO WAITERS", c.ID() + ":waiter-a"} {
				if !strings.Contains(text.out, want) {
					t.Errorf("table output lacks %q:\n%s", want, text.out)
				}
			}
			cancelMutexWaiters()
			mwg.Wait()
			// Waiters whose context ended leave the set in the background.
			waitFor(t, ctx, func() bool { return inspectJSON(t, ctx, d, prefix, "order:42").MutexWaiterCount == 0 })

			// FairMutex with two waiters queued in arrival order.
			f := mustFair(t, c, "fair:1")
			fctx, err := f.Lock(scriptlock.WithOwner(ctx, "first"))
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wctx, cancelWaiters := context.WithCancel(ctx)
			for _, o := range []string{"second", "third"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if l, err := f.Lock(scriptlock.WithOwner(wctx, o)); err == nil {
						_ = f.Unlock(l)
					}
				}()
				waitFor(t, ctx, func() bool {
					r := inspectJSON(t, ctx, d, prefix, "fair:1")
					return len(r.Queue) > 0 && strings.HasSuffix(r.Queue[len(r.Queue)-1].Field, ":"+o)
				})
			}
			r = inspectJSON(t, ctx, d, prefix, "fair:1")
			if r.Kind != kindFair || r.QueueLength != 2 || len(r.Queue) != 2 || !slices.Equal(r.QueueProtocols, []string{"scriptlock"}) {
				t.Fatalf("fair: %+v", r)
			}
			for _, q := range r.Queue {
				if q.Protocol != r.QueueProtocols[0] {
					t.Errorf("waiter %s in the %s queue, the lock's queue is %s", q.Field, q.Protocol, r.QueueProtocols[0])
				}
			}
			if r.Queue[0].Field != c.ID()+":second" || r.Queue[1].Field != c.ID()+":third" {
				t.Errorf("queue %v, want second then third", r.Queue)
			}
			for _, q := range r.Queue {
				if q.RemainingMS <= 0 || q.RemainingMS > time.Minute.Milliseconds() {
					t.Errorf("waiter %s deadline in %d ms, want (0, 60000]", q.Field, q.RemainingMS)
				}
			}
			cancelWaiters()
			wg.Wait()
			_ = f.Unlock(fctx)

			// RWMutex: two readers, then a writer waiting behind them.
			rw := mustRW(t, c, "rw:1")
			r1, err := rw.RLock(scriptlock.WithOwner(ctx, "reader-1"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rw.RLock(scriptlock.WithOwner(ctx, "reader-2")); err != nil {
				t.Fatal(err)
			}
			wctx, cancelWriter := context.WithCancel(ctx)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if l, err := rw.Lock(scriptlock.WithOwner(wctx, "writer")); err == nil {
					_ = rw.Unlock(l)
				}
			}()
			waitFor(t, ctx, func() bool { return inspectJSON(t, ctx, d, prefix, "rw:1").WriterCount == 1 })
			r = inspectJSON(t, ctx, d, prefix, "rw:1")
			if r.Kind != kindRW || r.Mode != "read" || r.HolderCount != 2 {
				t.Fatalf("rw: %+v", r)
			}
			var readers []string
			for _, h := range r.Holders {
				readers = append(readers, h.Owner)
				if h.ReadLeaseMS == nil || *h.ReadLeaseMS <= 0 || *h.ReadLeaseMS > scriptlock.DefaultLease.Milliseconds() {
					t.Errorf("reader %s lease %v, want (0, 30000] ms", h.Owner, h.ReadLeaseMS)
				}
			}
			sort.Strings(readers)
			if !slices.Equal(readers, []string{"reader-1", "reader-2"}) {
				t.Errorf("readers %v", readers)
			}
			if len(r.Writers) != 1 || r.Writers[0].Field != c.ID()+":writer:write" || r.Writers[0].RemainingMS <= 0 {
				t.Errorf("pending writers %+v", r.Writers)
			}
			cancelWriter()
			wg.Wait()
			_ = r1

			// Semaphore: 3 permits, 1 taken.
			s := mustSem(t, c, "sem:1")
			if _, err := s.TrySetPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			if err := s.Acquire(ctx, 1); err != nil {
				t.Fatal(err)
			}
			r = inspectJSON(t, ctx, d, prefix, "sem:1")
			if r.Kind != kindCounter || r.Counter == nil || *r.Counter != 2 {
				t.Errorf("semaphore: %+v", r)
			}

			// PermitSemaphore: two permits with leases.
			p := mustPermits(t, c, "permits:1")
			if _, err := p.TrySetPermits(ctx, 5); err != nil {
				t.Fatal(err)
			}
			id1, err := p.Acquire(ctx, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			id2, err := p.Acquire(ctx, 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			r = inspectJSON(t, ctx, d, prefix, "permits:1")
			if r.Kind != kindPermits || r.PermitCount != 2 || r.Counter == nil || *r.Counter != 3 {
				t.Fatalf("permit semaphore: %+v", r)
			}
			if r.Permits[0].ID != id1 || r.Permits[1].ID != id2 {
				t.Errorf("permits %+v, want %s then %s (by lease end)", r.Permits, id1, id2)
			}
			if ms := r.Permits[0].RemainingMS; ms <= 0 || ms > time.Minute.Milliseconds() {
				t.Errorf("permit lease %d ms left, want (0, 60000]", ms)
			}

			// CountDownLatch at 3.
			l := mustLatch(t, c, "latch:1")
			if _, err := l.TrySetCount(ctx, 3); err != nil {
				t.Fatal(err)
			}
			r = inspectJSON(t, ctx, d, prefix, "latch:1")
			if r.Kind != kindCounter || r.Counter == nil || *r.Counter != 3 {
				t.Errorf("latch: %+v", r)
			}

			// A lock a Java service took with Redisson.
			redissonAcquire(t, ctx, d.rc, prefix+"java:lock", "5a1d2c3e-0000-4000-8000-00000000beef:57")
			r = inspectJSON(t, ctx, d, prefix, "java:lock")
			if r.Kind != kindMutex || len(r.Holders) != 1 || r.Holders[0].Client != "5a1d2c3e-0000-4000-8000-00000000beef" ||
				r.Holders[0].Owner != "57" || r.Holders[0].Holds != 1 {
				t.Errorf("Redisson lock: %+v", r)
			}

			// Nothing there: exit 3. A bad name: exit 2, nothing sent.
			if res := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "nobody"); res.code != exitNotFound {
				t.Errorf("inspect of a free name: exit %d, want %d\n%s", res.code, exitNotFound, res.errOut)
			}
			before := d.keys(t)
			for _, bad := range []string{"half{tag", strings.Repeat("x", maxNameLen+1)} {
				want := exitUsage
				if bad == "half{tag" && d.name == "single" {
					// No hash tag: no lock can have it on a Cluster, where
					// its keys lie in other slots; Redisson takes it on a
					// single node, where it is read as any other name.
					want = exitNotFound
				}
				if res := cli(ctx, d, "", "inspect", bad); res.code != want {
					t.Errorf("inspect %.20q: exit %d, want %d", bad, res.code, want)
				}
			}
			if res := cli(ctx, d, "", "inspect"); res.code != exitUsage {
				t.Errorf("inspect without a name: exit %d", res.code)
			}
			after := d.keys(t)
			sameKeys(t, "bad input", before, after, time.Now())
		})
	}
}

// waitFor polls cond for up to 10 s (a loaded machine).
func waitFor(t *testing.T, ctx context.Context, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatal("condition not reached within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ACL user and password come from the URL as rueidis parses it; a wrong
// password fails with exit 1 and the password is not echoed.
func TestURLWithACLUser(t *testing.T) {
	node := redistest.Server(t, redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "&*", "+@all"))
	ctx := testCtx(t, 20*time.Second)
	good := deployment{url: "redis://ops:s3cret@" + node.Addr}
	if r := cli(ctx, good, "", "inspect", "nothing-here"); r.code != exitNotFound {
		t.Errorf("ACL user: exit %d, want %d (connected, nothing found)\n%s", r.code, exitNotFound, r.errOut)
	}
	bad := deployment{url: "redis://ops:wrong-pass@" + node.Addr}
	r := cli(ctx, bad, "", "inspect", "nothing-here")
	if r.code != exitFailure {
		t.Errorf("wrong password: exit %d, want %d", r.code, exitFailure)
	}
	if strings.Contains(r.errOut, "wrong-pass") {
		t.Errorf("password echoed: %s", r.errOut)
	}
	if r := cli(ctx, deployment{url: "ftp://" + node.Addr}, "", "inspect", "x"); r.code != exitUsage {
		t.Errorf("bad scheme: exit %d, want %d", r.code, exitUsage)
	}
	// A password the URL parser trips over: refused as bad usage, and
	// nothing of the password is printed (the parser's message quotes it).
	for _, pass := range []string{"s3cr?et", "50%off", "a/b@c"} {
		r := cli(ctx, deployment{url: "redis://ops:" + pass + "@" + node.Addr}, "", "inspect", "x")
		if r.code != exitUsage {
			t.Errorf("password %q not percent-encoded: exit %d, want %d\n%s", pass, r.code, exitUsage, r.errOut)
		}
		for _, part := range []string{pass, pass[:4], pass[len(pass)-3:]} {
			if strings.Contains(r.errOut, part) {
				t.Errorf("password %q: output shows %q: %s", pass, part, r.errOut)
			}
		}
	}
}

// A Sentinel URL (master_set) reaches the primary the sentinels name.
func TestSentinelURL(t *testing.T) {
	t.Parallel()
	s := redistest.Sentinel(t)
	d := deployment{
		url: "redis://" + s.Addrs[0] + "?addr=" + strings.Join(s.Addrs[1:], "&addr=") + "&master_set=" + redistest.SentinelMaster,
		rc:  s.Client(t),
	}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	heldMutex(t, ctx, c, "order:1", "via-sentinel")
	r := inspectJSON(t, ctx, d, prefix, "order:1")
	if len(r.Holders) != 1 || r.Holders[0].Owner != "via-sentinel" {
		t.Fatalf("inspect through Sentinel: %+v", r)
	}
	res := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	var l listing
	if res.code != exitOK || json.Unmarshal([]byte(res.out), &l) != nil || len(l.Locks) != 1 || l.Cursor != "" {
		t.Fatalf("list through Sentinel: exit %d %s %s", res.code, res.out, res.errOut)
	}
	if res := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "order:1"); res.code != exitOK {
		t.Fatalf("force-unlock through Sentinel: exit %d %s", res.code, res.errOut)
	}
}

// Sentinels that require a password of their own get it from
// --sentinel-password or $SCRIPTLOCK_SENTINEL_PASSWORD; without it, or with a
// wrong one, the command fails with exit 1, does not echo it, and changes
// nothing.
func TestSentinelPassword(t *testing.T) {
	s := redistest.Sentinel(t, redistest.WithSentinelPassword("s3ntinel"))
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, s.Client(t), prefix)
	m := heldMutex(t, ctx, c, "order:1", "guarded")
	d := deployment{url: "redis://" + s.Addrs[0] + "?addr=" + strings.Join(s.Addrs[1:], "&addr=") + "&master_set=" + redistest.SentinelMaster}
	unlock := []string{"force-unlock", "--yes", "--key-prefix", prefix, "order:1"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no password", unlock},
		{"wrong password", append([]string{"--sentinel-password", "wrong-s3cret"}, unlock...)},
	} {
		res := cli(ctx, d, "", tc.args...)
		if res.code != exitFailure || strings.Contains(res.errOut, "wrong-s3cret") || !strings.Contains(res.errOut, "the sentinels take --sentinel-user and --sentinel-password") {
			t.Errorf("%s: exit %d, want %d, with a hint and without the password in:\n%s", tc.name, res.code, exitFailure, res.errOut)
		}
		if ok, err := m.IsLocked(ctx); err != nil || !ok {
			t.Fatalf("%s: the lock changed (%v)", tc.name, err)
		}
	}
	if res := cli(ctx, deployment{url: "redis://" + s.Data[0].Addr}, "", append([]string{"--sentinel-password", "s3ntinel"}, unlock...)...); res.code != exitUsage || !strings.Contains(res.errOut, "need a ?master_set= URL") {
		t.Errorf("--sentinel-password without master_set: exit %d, want %d\n%s", res.code, exitUsage, res.errOut)
	}
	if r := inspectJSON(t, ctx, d, prefix, "order:1", "--sentinel-password", "s3ntinel"); len(r.Holders) != 1 || r.Holders[0].Owner != "guarded" {
		t.Fatalf("inspect through password-protected sentinels: %+v", r)
	}
	t.Setenv("SCRIPTLOCK_SENTINEL_PASSWORD", "s3ntinel")
	if res := cli(ctx, d, "", unlock...); res.code != exitOK {
		t.Fatalf("force-unlock with the password from the environment: exit %d\n%s", res.code, res.errOut)
	}
	if ok, err := m.IsLocked(ctx); err != nil || ok {
		t.Fatalf("force-unlock left the lock held (%v)", err)
	}
}

// A reader's lease is the longest of all its read holds' leases however many
// holds it has: inspect and list read every lease key, also those past the
// first hundred of one reader.
func TestReadLeaseManyHolds(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			prefix := redistest.Prefix(t)
			c := newClient(t, d.rc, prefix)
			rw := mustRW(t, c, "rw:many")
			reader := scriptlock.WithOwner(ctx, "reader")
			const holds, long = 250, 5 * time.Minute
			for i := 1; i <= holds; i++ {
				lease := 20 * time.Second
				if i == holds { // the longest lease is on the last hold
					lease = long
				}
				if _, err := rw.RLockWithLease(reader, lease); err != nil {
					t.Fatalf("read hold %d: %v", i, err)
				}
			}
			check := func(how string, r *Report) {
				t.Helper()
				if len(r.Holders) != 1 || r.Holders[0].Holds != holds {
					t.Fatalf("%s: holders %+v", how, r.Holders)
				}
				if l := r.Holders[0].ReadLeaseMS; l == nil {
					t.Errorf("%s: no read lease", how)
				} else if *l < (long - time.Minute).Milliseconds() {
					t.Errorf("%s: read lease %d ms of a reader whose longest hold has %s left", how, *l, long)
				}
			}
			check("inspect", inspectJSON(t, ctx, d, prefix, "rw:many"))
			res := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
			var l listing
			if res.code != exitOK || json.Unmarshal([]byte(res.out), &l) != nil || len(l.Locks) != 1 {
				t.Fatalf("list: exit %d %s %s", res.code, res.out, res.errOut)
			}
			check("list", l.Locks[0])
		})
	}
}
