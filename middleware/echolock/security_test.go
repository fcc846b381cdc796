package echolock_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyScopedToCaller: a stored response replays only to the
// caller who made it; callers without credentials share one anonymous scope
// that never sees an authenticated caller's records.
func TestIdempotencyScopedToCaller(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	h := func(c echo.Context) error {
		n := runs.Add(1)
		c.Response().Header().Set(echo.HeaderLocation, fmt.Sprintf("/charges/%d", n))
		return c.String(http.StatusCreated, fmt.Sprintf("run %d for %q", n, c.Request().Header.Get("Authorization")))
	}
	srv, node := idemServer(t, echolock.IdempotencyConfig{}, h)
	req := func(hdr ...string) result {
		return do(t, srv, "POST", "/charges", `{"amount":1}`, append([]string{"Idempotency-Key", "K1"}, hdr...)...)
	}
	alice := req("Authorization", "Bearer alice")
	if alice.code != 201 || alice.body != `run 1 for "Bearer alice"` {
		t.Fatalf("alice: %d %q", alice.code, alice.body)
	}
	for _, c := range []struct {
		name string
		hdr  []string
	}{
		{"bob", []string{"Authorization", "Bearer bob"}},
		{"no credentials", nil},
		{"session cookie", []string{"Cookie", "session=s1"}},
		{"alice's token plus a cookie", []string{"Authorization", "Bearer alice", "Cookie", "session=s1"}},
	} {
		before := runs.Load()
		r := req(c.hdr...)
		if r.code != 201 || r.header.Get(echolock.HeaderIdempotentReplayed) != "" || strings.Contains(r.body, "alice\"") && c.name != "alice's token plus a cookie" {
			t.Errorf("%s got %d %q replayed=%q, want a fresh run", c.name, r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed))
		}
		if runs.Load() != before+1 {
			t.Errorf("%s: handler did not run", c.name)
		}
	}
	again := req("Authorization", "Bearer alice")
	if again.code != 201 || again.body != alice.body || again.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("alice's retry: %d %q, want her stored response replayed", again.code, again.body)
	}
	anon := req()
	if anon.header.Get(echolock.HeaderIdempotentReplayed) != "true" || !strings.Contains(anon.body, `for ""`) {
		t.Errorf("anonymous retry: %d %q, want the anonymous response replayed", anon.code, anon.body)
	}
	keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	records := 0
	for _, k := range keys {
		if strings.Contains(k, "alice") || strings.Contains(k, "s1") {
			t.Errorf("record key %q holds a credential", k)
		}
		if strings.HasSuffix(k, ":K1") {
			records++
		}
	}
	if records != 5 {
		t.Errorf("%d records in %q, want one per scope (5)", records, keys)
	}

	shared, _ := idemServer(t, echolock.IdempotencyConfig{Scope: echolock.Unscoped}, h)
	do(t, shared, "POST", "/charges", "x", "Idempotency-Key", "K2", "Authorization", "Bearer alice")
	if r := do(t, shared, "POST", "/charges", "x", "Idempotency-Key", "K2", "Authorization", "Bearer bob"); r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("Unscoped: bob got %d %q, want alice's response (explicitly shared store)", r.code, r.body)
	}
}

// TestIdempotencyStoresFinalOutcomesOnly uses the recommended order
// (Idempotency in front of the lock): a request answered 409 because the
// order's lock was held, or 429/503 by the handler, leaves its key usable, so
// the retry runs.
func TestIdempotencyStoresFinalOutcomesOnly(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store, err := idempotency.NewStore(env.Redis, idempotency.WithPrefix(env.Prefix+"idem:"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var runs atomic.Int64
	var answer atomic.Int64
	answer.Store(http.StatusOK)
	e := echo.New()
	e.POST("/orders/:id", func(c echo.Context) error {
		runs.Add(1)
		return c.String(int(answer.Load()), "done")
	}, echolock.Idempotency(store), echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Client: env.Locks}))
	e.POST("/all/:id", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusOK, "done")
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, StoreStatus: func(int) bool { return true }}),
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Client: env.Locks}))
	srv := serve(t, e)

	// A holder renewed by the watchdog: its lease says nothing about when it
	// ends, so the hint is the default (1 s), not the 30 s lease.
	m := env.Mutex(t, env.Prefix+core.EscapeKey("7"))
	held, err := m.TryLock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	busy := do(t, srv, "POST", "/orders/7", "", "Idempotency-Key", "K1")
	if busy.code != http.StatusConflict || busy.header.Get("Retry-After") != "1" {
		t.Fatalf("while locked: %d Retry-After %q, want 409 Retry-After 1", busy.code, busy.header.Get("Retry-After"))
	}
	if err := m.Unlock(held); err != nil {
		t.Fatal(err)
	}
	if r := do(t, srv, "POST", "/orders/7", "", "Idempotency-Key", "K1"); r.code != 200 || r.header.Get(echolock.HeaderIdempotentReplayed) != "" || runs.Load() != 1 {
		t.Errorf("retry after the lock freed: %d %q replayed=%q runs=%d, want the handler to run", r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
	for _, st := range []int{http.StatusConflict, http.StatusLocked, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		key := fmt.Sprint("K", st)
		answer.Store(int64(st))
		if r := do(t, srv, "POST", "/orders/8", "", "Idempotency-Key", key); r.code != st {
			t.Fatalf("handler answer %d: got %d", st, r.code)
		}
		answer.Store(http.StatusOK)
		before := runs.Load()
		if r := do(t, srv, "POST", "/orders/8", "", "Idempotency-Key", key); r.code != 200 || runs.Load() != before+1 {
			t.Errorf("retry after %d: %d, runs +%d; want the handler to run", st, r.code, runs.Load()-before)
		}
	}
	// The lock middleware's own answers are not stored even by a predicate
	// that stores every status (route /all).
	held, err = m.TryLock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := do(t, srv, "POST", "/all/7", "", "Idempotency-Key", "K-all"); r.code != http.StatusConflict {
		t.Fatalf("store-everything route while locked: %d", r.code)
	}
	if err := m.Unlock(held); err != nil {
		t.Fatal(err)
	}
	before := runs.Load()
	if r := do(t, srv, "POST", "/all/7", "", "Idempotency-Key", "K-all"); r.code != 200 || runs.Load() != before+1 {
		t.Errorf("store-everything route, retry after the lock freed: %d, runs +%d; want the handler to run", r.code, runs.Load()-before)
	}
	// A final answer is stored.
	answer.Store(http.StatusNotFound)
	do(t, srv, "POST", "/orders/9", "", "Idempotency-Key", "K404")
	if r := do(t, srv, "POST", "/orders/9", "", "Idempotency-Key", "K404"); r.code != 404 || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("404 not replayed: %d %v", r.code, r.header)
	}
}

// TestIdempotencyStalledReserve: a reservation whose reply does not come
// back within the store timeout answers 503 and is undone, so the retry once
// Redis answers again runs instead of getting 409 for the claim TTL.
func TestIdempotencyStalledReserve(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	const timeout = 300 * time.Millisecond
	store, err := idempotency.NewStore(env.Node.Client(t), idempotency.WithPrefix(env.Prefix), idempotency.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "ok")
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	// Connected, the scripts loaded. A first call on a loaded machine may
	// miss the 300 ms store timeout (503, its key then held by the undo):
	// asked again under a fresh key.
	for i := 0; ; i++ {
		r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", fmt.Sprint("warm-", i))
		if r.code == http.StatusCreated {
			break
		}
		if r.code != http.StatusServiceUnavailable || i == 20 {
			t.Fatalf("warm-up: %d %s", r.code, r.body)
		}
	}
	runs.Store(0)

	env.Node.Pause()
	start := time.Now()
	r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K1")
	took := time.Since(start)
	env.Node.Resume()
	if r.code != http.StatusServiceUnavailable || strings.Contains(r.body, "127.0.0.1") {
		t.Fatalf("stalled Redis: %d %q, want 503 without internals", r.code, r.body)
	}
	// The reservation is bounded by the store timeout; its undo runs in the
	// background.
	if bound := timeout + 2*time.Second; took > bound {
		t.Errorf("stalled request took %s, want under %s", took, bound)
	}
	// The undo lands as soon as Redis answers: a retry gets the key well
	// before the 30 s claim TTL.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K1")
		if r.code == 201 && runs.Load() == 1 {
			break
		}
		// 409 while the reservation stands; 503 if a retry itself outlasts
		// the 300 ms store timeout (a connection made again on a loaded
		// machine): a client retries both.
		if (r.code != http.StatusConflict && r.code != http.StatusServiceUnavailable) || time.Now().After(deadline) {
			t.Fatalf("retry after the stall: %d %q (runs %d), want the handler to run within 5 s", r.code, r.body, runs.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIdempotencyBudgetPerCaller: one caller sending fresh keys cannot make
// Redis keep more than its scope's budget; other callers are unaffected, and
// the budget comes back as records expire.
func TestIdempotencyBudgetPerCaller(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	const budget, body = 8 << 10, 1 << 10
	// A TTL the requests below fit in on a loaded machine: records expiring
	// while alice fills her budget would let her store more.
	const ttl = 10 * time.Second
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithMaxBytesPerScope(budget), idempotency.WithTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		return c.String(http.StatusCreated, strings.Repeat("x", body))
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	stored := 0
	for i := range 20 {
		r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", fmt.Sprint("a", i), "Authorization", "Bearer alice")
		if r.code == http.StatusTooManyRequests {
			break
		}
		if r.code != http.StatusCreated {
			t.Fatalf("request %d: %d %s", i, r.code, r.body)
		}
		stored++
	}
	// Each record accounts its encoded response plus 256 bytes; the last
	// claim may overshoot the budget by one response.
	if max := budget / (body + 256); stored < max-1 || stored > max+1 {
		t.Errorf("alice stored %d responses of %d bytes before 429, want about %d (budget %d bytes)", stored, body, max, budget)
	}
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "b0", "Authorization", "Bearer bob"); r.code != http.StatusCreated {
		t.Errorf("bob while alice is over budget: %d %s", r.code, r.body)
	}
	// A replay of a stored key costs nothing and still works.
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "a0", "Authorization", "Bearer alice"); r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("alice's replay while over budget: %d", r.code)
	}
	time.Sleep(ttl + 500*time.Millisecond) // the records' TTL
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "a-later", "Authorization", "Bearer alice"); r.code != http.StatusCreated {
		t.Errorf("alice after her records expired: %d %s", r.code, r.body)
	}
}
