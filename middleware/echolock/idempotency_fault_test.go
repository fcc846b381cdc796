package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyCompleteAfterRedisRestart: Redis goes down after the
// request was claimed and comes back (from its append-only file) after the
// handler answered. The response is stored once Redis is back, so a
// duplicate gets it replayed and the charge never runs a second time; until
// then a duplicate answers 409.
func TestIdempotencyCompleteAfterRedisRestart(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithAOF())
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithTimeout(2*time.Second)) // a loaded machine's first call and a call after the restart fit in
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var runs atomic.Int64
	e := echo.New()
	e.Use(recoverer)
	e.POST("/charges", func(c echo.Context) error {
		if runs.Add(1) == 1 {
			node.Kill() // after the claim, before the response is stored
		}
		return c.String(http.StatusCreated, "charged")
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K"); r.code != http.StatusCreated || r.body != "charged" {
		t.Fatalf("first: %d %q, want the handler's 201", r.code, r.body)
	}
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K"); r.code != http.StatusServiceUnavailable {
		t.Errorf("duplicate while Redis is down: %d %q, want 503", r.code, r.body)
	}
	node.Restart(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K")
		if runs.Load() != 1 {
			t.Fatalf("the charge ran %d times for one key (duplicate answered %d %q)", runs.Load(), r.code, r.body)
		}
		if r.code == http.StatusCreated && r.header.Get(echolock.HeaderIdempotentReplayed) == "true" && r.body == "charged" {
			break
		}
		if r.code != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("duplicate after the restart: %d %q, want 409 until the stored 201 is replayed", r.code, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIdempotencyPanicAfterAnswer: a handler that panics before answering
// leaves the key free, so the retry runs at once; one that panics after it
// sent its answer (with Echo's Recover outside, the client gets that answer)
// has that answer stored, so a retry gets it replayed instead of running the
// charge again.
func TestIdempotencyPanicAfterAnswer(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	e.Use(recoverer)
	e.POST("/charges", func(c echo.Context) error {
		n := runs.Add(1)
		switch c.Request().Header.Get("X-Panic") {
		case "before":
			if n == 1 {
				panic("before the answer")
			}
		case "after":
			_ = c.String(http.StatusCreated, "charged")
			panic("after the answer")
		}
		return c.String(http.StatusCreated, "charged")
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K1", "X-Panic", "before"); r.code != http.StatusInternalServerError {
		t.Fatalf("panic before the answer: %d %q, want the recoverer's 500", r.code, r.body)
	}
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K1", "X-Panic", "before"); r.code != http.StatusCreated || runs.Load() != 2 {
		t.Fatalf("retry after a panic before the answer: %d %q (runs %d), want the handler's 201", r.code, r.body, runs.Load())
	}

	runs.Store(0)
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K2", "X-Panic", "after"); r.code != http.StatusCreated || r.body != "charged" {
		t.Fatalf("panic after the answer: %d %q, want the 201 the handler sent", r.code, r.body)
	}
	r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K2", "X-Panic", "after")
	if runs.Load() != 1 {
		t.Fatalf("the charge ran %d times for one key (retry answered %d %q)", runs.Load(), r.code, r.body)
	}
	if r.code != http.StatusCreated || r.body != "charged" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("retry after a panic after the answer: %d %q, want the sent 201 replayed", r.code, r.body)
	}
}

// TestIdempotencyStatusWrittenPastEcho: a handler that answers through the
// underlying http.ResponseWriter (http.ServeContent, a wrapped http.Handler
// given the writer under c.Response()) bypasses echo.Response's bookkeeping. What is
// stored is what the client was sent: its 503 is not stored (the retry runs),
// its 201 is replayed as 201.
func TestIdempotencyStatusWrittenPastEcho(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		w := echolock.RawWriter(echolock.EchoResponse(c))
		if c.Request().Header.Get("X-Fail") != "" && runs.Load() == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("provider down"))
			return nil
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("charged"))
		return nil
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K1", "X-Fail", "1"); r.code != http.StatusServiceUnavailable {
		t.Fatalf("first: %d %q, want the handler's 503", r.code, r.body)
	}
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K1", "X-Fail", "1"); r.code != http.StatusCreated || r.header.Get(echolock.HeaderIdempotentReplayed) != "" || runs.Load() != 2 {
		t.Fatalf("retry after a 503: %d %q replayed=%q (runs %d), want the handler to run and answer 201",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K1", "X-Fail", "1"); r.code != http.StatusCreated || r.body != "charged" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("duplicate after the 201: %d %q, want the 201 replayed", r.code, r.body)
	}
}

// TestIdempotencyRedisFull: Redis reaches its maxmemory (noeviction) while a
// charge runs. The charge's response is stored all the same, so its
// duplicates get it replayed, and it never runs twice; a request with a new
// key gets 503 and leaves nothing in Redis.
func TestIdempotencyRedisFull(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	node := redistest.Server(t)
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithClaimTTL(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var runs atomic.Int64
	restore := make(chan func(), 1)
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		if runs.Add(1) == 1 {
			restore <- node.OutOfMemory(t) // after the claim, before the response is stored
		}
		return c.String(http.StatusCreated, "charged")
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K"); r.code != http.StatusCreated || r.body != "charged" {
		t.Fatalf("first: %d %q, want the handler's 201", r.code, r.body)
	}
	keys, err := node.Do(t, "DBSIZE").AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // past the claim TTL: only a stored response keeps the key
	r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K")
	if runs.Load() != 1 {
		t.Fatalf("the charge ran %d times for one key (duplicate answered %d %q)", runs.Load(), r.code, r.body)
	}
	if r.code != http.StatusCreated || r.body != "charged" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("duplicate while Redis is full: %d %q, want the stored 201 replayed", r.code, r.body)
	}
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "new"); r.code != http.StatusServiceUnavailable || runs.Load() != 1 {
		t.Errorf("a new key while Redis is full: %d %q (runs %d), want 503 without running", r.code, r.body, runs.Load())
	}
	if n, _ := node.Do(t, "DBSIZE").AsInt64(); n != keys {
		t.Errorf("DBSIZE %d after the refused request, %d before", n, keys)
	}
	(<-restore)()
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "new"); r.code != http.StatusCreated || runs.Load() != 2 {
		t.Errorf("the new key once Redis has memory: %d %q (runs %d), want the handler's 201", r.code, r.body, runs.Load())
	}
}
