// Package mwtest sets up real Redis, a scriptlock client and lock factories
// for the middleware tests.
package mwtest

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// Env is one test's Redis server, clients and key prefix.
type Env struct {
	Node   *redistest.Node
	Redis  *Counting // every round trip the scriptlock client makes goes through it
	Locks  *scriptlock.Client
	Prefix string // unique to the test; use as the middleware key prefix
}

// New starts a redis-server for t and a scriptlock client on it.
func New(t testing.TB, opts ...scriptlock.Option) *Env {
	t.Helper()
	node := redistest.Server(t)
	rc := &Counting{Client: node.Client(t)}
	lc, err := scriptlock.New(rc, opts...)
	if err != nil {
		t.Fatalf("scriptlock.New: %v", err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	return &Env{Node: node, Redis: rc, Locks: lc, Prefix: redistest.Prefix(t)}
}

// Store returns an idempotency store on the test's server, its records
// under Prefix + "idem:", closed at test end.
func (e *Env) Store(t testing.TB, opts ...idempotency.Option) *idempotency.Store {
	t.Helper()
	store, err := idempotency.NewStore(e.Redis, append([]idempotency.Option{idempotency.WithPrefix(e.Prefix + "idem:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	return store
}

// DropRecords deletes every idempotency record of Store's stores, leaving
// the scopes' accounting: a claim lost as a failover to a replica that never
// got it would lose it.
func (e *Env) DropRecords(t testing.TB) {
	t.Helper()
	for _, k := range e.Keys(t, e.Prefix+"idem:*") {
		if !strings.Contains(k, "#") {
			e.Node.Do(t, "DEL", k)
		}
	}
}

// LockFunc returns Mutex handles with opts.
func (e *Env) LockFunc(opts ...scriptlock.LockOption) func(key string) (scriptlock.Locker, error) {
	return func(key string) (scriptlock.Locker, error) { return e.Locks.Mutex(key, opts...) }
}

// Keys lists the keys matching pattern (test inspection only).
func (e *Env) Keys(t testing.TB, pattern string) []string {
	t.Helper()
	keys, err := e.Redis.Do(context.Background(), e.Redis.B().Keys().Pattern(pattern).Build()).AsStrSlice()
	if err != nil {
		t.Fatalf("KEYS %s: %v", pattern, err)
	}
	return keys
}

// ScriptCalls returns how many scripts the server ran (EVALSHA, EVAL and
// their _RO forms), from INFO commandstats.
func (e *Env) ScriptCalls(t testing.TB) int64 {
	t.Helper()
	info, err := e.Node.Do(t, "INFO", "commandstats").ToString()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	var total int64
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		switch name {
		case "cmdstat_evalsha", "cmdstat_eval", "cmdstat_evalsha_ro", "cmdstat_eval_ro":
		default:
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok2 := strings.CutPrefix(f, "calls="); ok && ok2 {
				n, _ := strconv.ParseInt(v, 10, 64)
				total += n
			}
		}
	}
	return total
}

// Counting is a rueidis.Client that counts round trips: each Do, DoCache,
// DoMulti or DoMultiCache is one.
type Counting struct {
	rueidis.Client
	n atomic.Int64
}

// RoundTrips returns the round trips so far.
func (c *Counting) RoundTrips() int64 { return c.n.Load() }

func (c *Counting) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.Do(ctx, cmd)
}

func (c *Counting) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.DoMulti(ctx, multi...)
}

func (c *Counting) DoCache(ctx context.Context, cmd rueidis.Cacheable, ttl time.Duration) rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.DoCache(ctx, cmd, ttl)
}

func (c *Counting) DoMultiCache(ctx context.Context, multi ...rueidis.CacheableTTL) []rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.DoMultiCache(ctx, multi...)
}

// Lock returns the lock newLock gives for key; an error fails t.
func (e *Env) Lock(t testing.TB, newLock func(string) (scriptlock.Locker, error), key string) scriptlock.Locker {
	t.Helper()
	l, err := newLock(key)
	if err != nil {
		t.Fatalf("lock %q: %v", key, err)
	}
	return l
}

// Mutex returns the Env client's Mutex called name; an error fails t.
func (e *Env) Mutex(t testing.TB, name string) *scriptlock.Mutex {
	t.Helper()
	m, err := e.Locks.Mutex(name)
	if err != nil {
		t.Fatalf("Mutex(%q): %v", name, err)
	}
	return m
}

// FairMutex returns the Env client's FairMutex called name; an error fails t.
func (e *Env) FairMutex(t testing.TB, name string) *scriptlock.FairMutex {
	t.Helper()
	f, err := e.Locks.FairMutex(name)
	if err != nil {
		t.Fatalf("FairMutex(%q): %v", name, err)
	}
	return f
}
