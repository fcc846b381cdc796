package echolock_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyClaimLost: when a running request's claim ends (here its
// record is deleted, as a failover to a replica that never got it would),
// the handler's context ends with idempotency.ErrClaimLost, the client gets
// 503 and nothing is stored, so the request never runs twice at once: a
// handler that stops on its context has stopped before a retry can run.
func TestIdempotencyClaimLost(t *testing.T) {
	// Not parallel: its claim is renewed against a one-second deadline for
	// the retry's three seconds, which other tests' load in this process
	// would put at risk (a 300 ms claim lost a renewal on a loaded machine).
	env := mwtest.New(t)
	store := env.Store(t, idempotency.WithClaimTTL(time.Second))
	var (
		mu      sync.Mutex
		running int
		most    int
		causes  = make(chan error, 4)
	)
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		defer func() {
			mu.Lock()
			running--
			mu.Unlock()
		}()
		if c.Request().Header.Get("X-Lose") != "" {
			env.DropRecords(t)
		}
		ctx := c.Request().Context()
		select {
		case <-ctx.Done():
			causes <- context.Cause(ctx)
			return ctx.Err()
		case <-time.After(3 * time.Second):
			causes <- nil
			return c.String(http.StatusCreated, "charged")
		}
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	start := time.Now()
	r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K", "X-Lose", "1")
	if cause := <-causes; !errors.Is(cause, idempotency.ErrClaimLost) {
		t.Fatalf("handler context cause %v, want idempotency.ErrClaimLost", cause)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the loss took %s to reach the handler (claim TTL 1 s)", took)
	}
	if r.code != http.StatusServiceUnavailable || r.header.Get(echolock.HeaderIdempotentReplayed) != "" {
		t.Fatalf("claim lost: %d %q, want 503", r.code, r.body)
	}
	// Nothing was stored: the retry runs, to completion this time.
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K"); r.code != http.StatusCreated || r.body != "charged" {
		t.Fatalf("retry: %d %q, want the handler's 201", r.code, r.body)
	}
	if cause := <-causes; cause != nil {
		t.Fatalf("retry's context ended: %v", cause)
	}
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K"); r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("second retry: %d, want the stored 201 replayed", r.code)
	}
	if most != 1 {
		t.Errorf("%d handlers ran at once for one key", most)
	}
}

// TestIdempotencyReplayedHeadersMatchBody: behind Echo's Gzip middleware the
// stored body is the handler's (uncompressed) one, so the stored headers are
// the handler's too: a replay to a client that does not take gzip must not
// say Content-Encoding: gzip.
func TestIdempotencyReplayedHeadersMatchBody(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	e := echo.New()
	e.Use(middleware.Gzip())
	e.POST("/charges", func(c echo.Context) error {
		return c.String(http.StatusCreated, "charged 100")
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	// An explicit Accept-Encoding keeps net/http from decompressing.
	first := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K", "Accept-Encoding", "gzip")
	if first.code != http.StatusCreated || first.header.Get(echo.HeaderContentEncoding) != "gzip" {
		t.Fatalf("first: %d Content-Encoding %q, want a gzip 201", first.code, first.header.Get(echo.HeaderContentEncoding))
	}
	r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K", "Accept-Encoding", "identity")
	if r.header.Get(echolock.HeaderIdempotentReplayed) != "true" || r.body != "charged 100" {
		t.Fatalf("replay: %d %q replayed=%q", r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed))
	}
	if ce := r.header.Get(echo.HeaderContentEncoding); ce != "" {
		t.Errorf("replayed plain body with Content-Encoding %q", ce)
	}
	// A client that takes gzip gets the replay compressed by Gzip itself.
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K", "Accept-Encoding", "gzip"); r.header.Get(echo.HeaderContentEncoding) != "gzip" || r.body == "charged 100" {
		t.Errorf("replay to a gzip client: Content-Encoding %q body %q", r.header.Get(echo.HeaderContentEncoding), r.body)
	}
}

// TestIdempotencyEmptyAnswerStored: a handler that returns nil without
// writing answers 200 with an empty body; that is its outcome, stored like
// any other, not a reason to run it again on every retry.
func TestIdempotencyEmptyAnswerStored(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges", func(echo.Context) error {
		runs.Add(1)
		return nil
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	for i := range 3 {
		r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K")
		if r.code != http.StatusOK || r.body != "" {
			t.Fatalf("request %d: %d %q, want an empty 200", i, r.code, r.body)
		}
		if replayed := r.header.Get(echolock.HeaderIdempotentReplayed) == "true"; replayed != (i > 0) {
			t.Errorf("request %d: replayed %v", i, replayed)
		}
	}
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times for one key", runs.Load())
	}
}

// TestIdempotencyBadLockKeyLeavesNothing: a request refused by the lock
// middleware for its key (400, 413) never ran, so nothing of it stays in
// Redis, whatever the store predicate says.
func TestIdempotencyBadLockKeyLeavesNothing(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	lock := echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Client: env.Locks, KeyLookup: "form:order", MaxBodyBytes: 64})
	h := func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusOK, "done")
	}
	e.POST("/pay", h, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, StoreStatus: func(int) bool { return true }}), lock)
	// A body limit set before the lookup: the lookup must answer 413, not 400.
	e.POST("/limited", h, func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Request().Body = http.MaxBytesReader(c.Response(), c.Request().Body, 16)
			return next(c)
		}
	}, echolock.Idempotency(store), lock)
	srv := serve(t, e)
	form := "Content-Type"
	for _, tc := range []struct {
		path, body string
		want       int
	}{
		{"/pay", "order=", http.StatusBadRequest},
		{"/pay", "order=a%00b", http.StatusBadRequest},
		{"/pay", "other=1", http.StatusBadRequest},
		{"/limited", "order=" + strings.Repeat("1", 40), http.StatusRequestEntityTooLarge},
	} {
		for i := range 2 {
			key := fmt.Sprintf("K-%s-%s", tc.path, tc.body)
			r := do(t, srv, "POST", tc.path, tc.body, "Idempotency-Key", key, form, "application/x-www-form-urlencoded")
			if r.code != tc.want || r.header.Get(echolock.HeaderIdempotentReplayed) != "" {
				t.Errorf("%s %q (try %d): %d %q replayed=%q, want %d, not replayed", tc.path, tc.body, i, r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed), tc.want)
			}
		}
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("bad input left keys in Redis: %v", keys)
	}
	if runs.Load() != 0 {
		t.Errorf("handler ran %d times", runs.Load())
	}
}

// TestIdempotencyReplayReplacesHeaders: a middleware in front of the
// Idempotency middleware sets headers on every response (a request id, a
// default Content-Type, Vary). A replay carries each stored header with
// exactly the stored values, once, replacing what the outer middleware set
// under that name, and leaves the outer middleware's other headers alone.
func TestIdempotencyReplayReplacesHeaders(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	e := echo.New()
	var n atomic.Int64
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("X-Request-Id", fmt.Sprintf("outer-%d", n.Add(1)))
			h.Set(echo.HeaderContentType, "text/plain; charset=outer")
			h.Set(echo.HeaderVary, "Origin")
			h.Set("X-Outer", "kept")
			return next(c)
		}
	})
	stored := append([]string{"X-Request-Id", echo.HeaderVary}, echolock.DefaultIdempotencyConfig.StoredHeaders...)
	e.POST("/charges", func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Request-Id", "charge-1")
		h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		h.Del(echo.HeaderVary)
		h.Add(echo.HeaderVary, "Accept")
		h.Add(echo.HeaderVary, "Accept-Language")
		return c.JSONBlob(http.StatusCreated, []byte(`{"charged":100}`))
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, StoredHeaders: stored}))
	srv := serve(t, e)

	first := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K")
	again := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K")
	if again.code != http.StatusCreated || again.header.Get(echolock.HeaderIdempotentReplayed) != "true" || again.body != first.body {
		t.Fatalf("replay: %d %q replayed=%q; want 201 %q replayed", again.code, again.body, again.header.Get(echolock.HeaderIdempotentReplayed), first.body)
	}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"X-Request-Id", []string{"charge-1"}},
		{echo.HeaderContentType, []string{echo.MIMEApplicationJSON}},
		{echo.HeaderVary, []string{"Accept", "Accept-Language"}},
		{"X-Outer", []string{"kept"}},
	} {
		if got := first.header.Values(c.name); !slices.Equal(got, c.want) {
			t.Errorf("first %s: %q, want %q", c.name, got, c.want)
		}
		if got := again.header.Values(c.name); !slices.Equal(got, c.want) {
			t.Errorf("replayed %s: %q, want %q", c.name, got, c.want)
		}
	}
}
