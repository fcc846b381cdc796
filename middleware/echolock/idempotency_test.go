package echolock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

func idemServer(t *testing.T, cfg echolock.IdempotencyConfig, h echo.HandlerFunc) (*httptest.Server, *redistest.Node) {
	t.Helper()
	node := redistest.Server(t)
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	warmStore(t, store)
	cfg.Store = store
	e := echo.New()
	e.Use(recoverer)
	mw := echolock.IdempotencyWithConfig(cfg)
	e.POST("/charges", h, mw)
	e.POST("/charges/:id", h, mw)
	return serve(t, e), node
}

// warmStore has store open its connection and load its scripts with claims
// on keys of a scope of their own, released again: on a loaded machine the
// first Reserve can miss the store's timeout, which a test's first request
// would get as a 503 without its handler run.
func warmStore(t *testing.T, store *idempotency.Store) {
	t.Helper()
	for i, deadline := 0, time.Now().Add(30*time.Second); ; i++ {
		r, err := store.Reserve(context.Background(), "warm", strconv.Itoa(i), "fp")
		if err == nil && r.State == idempotency.Claimed {
			if err := r.Claim.Release(context.Background()); err != nil {
				t.Fatalf("warm-up Release: %v", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("warm-up Reserve = %+v, %v; want Claimed", r, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestIdempotencyReplay(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, _ := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error {
		n := runs.Add(1)
		c.Response().Header().Set("X-Not-Stored", "1")
		c.Response().Header().Set(echo.HeaderLocation, "/charges/1")
		return c.JSONBlob(http.StatusCreated, []byte(`{"run":`+string(rune('0'+n))+`, "bytes":"\u00e9"}`))
	})
	body := `{"amount": 100}`
	first := do(t, srv, "POST", "/charges", body, "Idempotency-Key", `"key-1"`, "Content-Type", "application/json")
	if first.code != 201 || first.header.Get(echolock.HeaderIdempotentReplayed) != "" {
		t.Fatalf("first: %d %v", first.code, first.header)
	}
	again := do(t, srv, "POST", "/charges", body, "Idempotency-Key", "key-1", "Content-Type", "application/json")
	if again.code != 201 || again.body != first.body || again.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("replay: %d %q %v; want 201 %q replayed", again.code, again.body, again.header, first.body)
	}
	if again.header.Get(echo.HeaderLocation) != "/charges/1" || again.header.Get(echo.HeaderContentType) != first.header.Get(echo.HeaderContentType) {
		t.Errorf("stored headers not replayed: %v", again.header)
	}
	if again.header.Get("X-Not-Stored") != "" {
		t.Errorf("unlisted header replayed")
	}
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times", runs.Load())
	}
	if r := do(t, srv, "POST", "/charges", `{"amount": 200}`, "Idempotency-Key", "key-1"); r.code != http.StatusUnprocessableEntity {
		t.Errorf("other payload: %d, want 422", r.code)
	}
	if r := do(t, srv, "POST", "/charges/9", body, "Idempotency-Key", "key-1"); r.code != http.StatusUnprocessableEntity {
		t.Errorf("other route: %d, want 422", r.code)
	}
	if r := do(t, srv, "POST", "/charges", body, "Idempotency-Key", `"unterminated`); r.code != http.StatusBadRequest {
		t.Errorf("malformed key: %d, want 400", r.code)
	}
	if r := do(t, srv, "POST", "/charges", body, "Idempotency-Key", "a", "Idempotency-Key", "b"); r.code != http.StatusBadRequest {
		t.Errorf("two keys: %d, want 400", r.code)
	}
	if r := do(t, srv, "POST", "/charges", body); r.code != 201 {
		t.Errorf("no key, not required: %d, want the handler's 201", r.code)
	}
}

func TestIdempotencyRequired(t *testing.T) {
	t.Parallel()
	srv, _ := idemServer(t, echolock.IdempotencyConfig{Required: true}, func(c echo.Context) error { return c.NoContent(204) })
	if r := do(t, srv, "POST", "/charges", "x"); r.code != http.StatusBadRequest {
		t.Errorf("missing key: %d, want 400", r.code)
	}
}

func TestIdempotencyServerErrorNotStored(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, _ := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error {
		switch runs.Add(1) {
		case 1:
			return echo.NewHTTPError(http.StatusBadGateway, "upstream down")
		case 2:
			panic("boom")
		}
		return echo.NewHTTPError(http.StatusPaymentRequired, "card declined")
	})
	for i, want := range []int{502, 500, 402, 402} {
		if r := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "k"); r.code != want {
			t.Errorf("attempt %d: %d, want %d", i+1, r.code, want)
		}
	}
	if runs.Load() != 3 {
		t.Errorf("handler ran %d times, want 3 (5xx and panic released the key, the 402 was stored)", runs.Load())
	}
}

func TestIdempotencyOversizeResponse(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, _ := idemServer(t, echolock.IdempotencyConfig{MaxResponseBytes: 10}, func(c echo.Context) error {
		runs.Add(1)
		return c.String(200, strings.Repeat("x", 11))
	})
	if r := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "k"); r.code != 200 || len(r.body) != 11 {
		t.Fatalf("first: %d %q", r.code, r.body)
	}
	if r := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "k"); r.code != http.StatusConflict {
		t.Errorf("duplicate of an unstored response: %d, want 409", r.code)
	}
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times", runs.Load())
	}
}

// TestIdempotencyConcurrent sends 50 identical requests with one key at once:
// the handler runs exactly once; the others get the replay or 409.
func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, _ := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error {
		runs.Add(1)
		time.Sleep(50 * time.Millisecond)
		return c.String(http.StatusCreated, "charged")
	})
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := map[string]int{}
	for range 50 {
		wg.Go(func() {
			<-start
			r := do(t, srv, "POST", "/charges", `{"amount":1}`, "Idempotency-Key", "same")
			kind := "other"
			switch {
			case r.code == 201 && r.header.Get(echolock.HeaderIdempotentReplayed) == "true" && r.body == "charged":
				kind = "replay"
			case r.code == 201 && r.body == "charged":
				kind = "original"
			case r.code == 409:
				kind = "in flight"
			}
			mu.Lock()
			count[kind]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	if runs.Load() != 1 || count["original"] != 1 || count["other"] != 0 || count["replay"]+count["in flight"] != 49 {
		t.Errorf("handler ran %d times; outcomes %v", runs.Load(), count)
	}
	t.Logf("outcomes: %v", count)
}

func TestIdempotencyStoreDown(t *testing.T) {
	t.Parallel()
	srv, node := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error { return c.NoContent(204) })
	node.Kill()
	if r := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "k"); r.code != http.StatusServiceUnavailable {
		t.Errorf("store down: %d, want 503", r.code)
	}
}
