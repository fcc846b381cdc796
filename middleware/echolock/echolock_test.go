package echolock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/exampleredis"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// The Example runs against a redis-server started here.
func TestMain(m *testing.M) {
	exampleredis.Main(m, 1, goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// recoverer turns handler panics into 500s, as Echo's Recover middleware does.
func recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = echo.NewHTTPError(http.StatusInternalServerError, fmt.Sprint(r))
			}
		}()
		return next(c)
	}
}

type result struct {
	code   int
	body   string
	header http.Header
}

func do(t *testing.T, srv *httptest.Server, method, path string, body string, hdr ...string) result {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, string(b), resp.Header}
}

func serve(t *testing.T, e *echo.Echo) *httptest.Server {
	srv := httptest.NewServer(e)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// keyLog records the keys a lock function was asked for, without the
// test's key prefix, for tests that check what a request locked.
type keyLog struct {
	mu   sync.Mutex
	keys []string
}

// lockFunc is env's lock function, each key it is asked for recorded.
func (l *keyLog) lockFunc(env *mwtest.Env) func(key string) (scriptlock.Locker, error) {
	newLock := env.LockFunc()
	return func(key string) (scriptlock.Locker, error) {
		l.mu.Lock()
		l.keys = append(l.keys, strings.TrimPrefix(key, env.Prefix))
		l.mu.Unlock()
		return newLock(key)
	}
}

// reset forgets the keys recorded so far.
func (l *keyLog) reset() {
	l.mu.Lock()
	l.keys = nil
	l.mu.Unlock()
}

// joined is the keys recorded since the last reset, comma-separated.
func (l *keyLog) joined() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.keys, ",")
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	e := echo.New()
	e.Use(recoverer)
	cfg := echolock.LockConfig{KeyLookup: "param:id,header:X-Order-Id,query:id,json:order.id", KeyPrefix: env.Prefix, Lock: locks}
	mw := echolock.LockWithConfig(cfg)
	var handled atomic.Int64
	h := func(c echo.Context) error {
		handled.Add(1)
		fence, ok := scriptlock.Fence(c.Request().Context())
		if !ok {
			return errors.New("no fencing token in the handler context")
		}
		return c.String(http.StatusOK, strconv.FormatInt(fence, 10))
	}
	e.POST("/orders/:id", h, mw)
	e.POST("/orders", h, mw)
	e.POST("/echo", func(c echo.Context) error {
		b, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return err
		}
		return c.String(http.StatusOK, string(b))
	}, mw)
	srv := serve(t, e)

	t.Run("path param", func(t *testing.T) {
		r1 := do(t, srv, "POST", "/orders/42", "")
		r2 := do(t, srv, "POST", "/orders/42", "")
		if r1.code != 200 || r2.code != 200 {
			t.Fatalf("codes %d %d, want 200 200 (%s %s)", r1.code, r2.code, r1.body, r2.body)
		}
		f1, _ := strconv.ParseInt(r1.body, 10, 64)
		f2, _ := strconv.ParseInt(r2.body, 10, 64)
		if f2 <= f1 {
			t.Errorf("fencing tokens %d then %d, want increasing", f1, f2)
		}
	})
	t.Run("header and query", func(t *testing.T) {
		if r := do(t, srv, "POST", "/orders", "", "X-Order-Id", "7"); r.code != 200 {
			t.Errorf("header key: %d %s", r.code, r.body)
		}
		if r := do(t, srv, "POST", "/orders?id=7", ""); r.code != 200 {
			t.Errorf("query key: %d %s", r.code, r.body)
		}
	})
	t.Run("json body restored", func(t *testing.T) {
		body := `{"order": {"id": 99}, "amount": 5}`
		r := do(t, srv, "POST", "/echo", body, "Content-Type", "application/json")
		if r.code != 200 || r.body != body {
			t.Errorf("got %d %q, want 200 and the body back", r.code, r.body)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		before := handled.Load()
		if r := do(t, srv, "POST", "/orders", ""); r.code != http.StatusBadRequest {
			t.Errorf("got %d, want 400", r.code)
		}
		if r := do(t, srv, "POST", "/echo", `{"other": 1}`); r.code != http.StatusBadRequest {
			t.Errorf("json without the field: got %d, want 400", r.code)
		}
		if handled.Load() != before {
			t.Error("handler ran without a key")
		}
	})
	t.Run("invalid key", func(t *testing.T) {
		for _, path := range []string{"/orders?id=a%00b", "/orders?id=" + strings.Repeat("x", 257), "/orders?id=%FF", "/orders?id=1&id=2"} {
			if r := do(t, srv, "POST", path, ""); r.code != http.StatusBadRequest {
				t.Errorf("%s: got %d, want 400", path[:min(len(path), 30)], r.code)
			}
		}
		if r := do(t, srv, "POST", "/echo", `{"order": {"id": true}}`); r.code != http.StatusBadRequest {
			t.Errorf("json bool: got %d, want 400", r.code)
		}
	})
	t.Run("contended", func(t *testing.T) {
		holder := env.Lock(t, locks, env.Prefix+"busy")
		hctx := scriptlock.WithOwner(context.Background(), "test-holder")
		if _, err := holder.Lock(hctx); err != nil {
			t.Fatal(err)
		}
		defer holder.Unlock(hctx)
		r := do(t, srv, "POST", "/orders/busy", "")
		if r.code != http.StatusConflict {
			t.Fatalf("got %d, want 409", r.code)
		}
		if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("Retry-After %q, want a positive number of seconds", r.header.Get("Retry-After"))
		}
	})
	t.Run("escaped hash tag", func(t *testing.T) {
		if r := do(t, srv, "POST", "/orders?id=%7Bslot%7D:x", ""); r.code != 200 {
			t.Fatalf("got %d %s", r.code, r.body)
		}
	})
}

func TestContendedWaitAndLocked(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	e := echo.New()
	e.POST("/a/:id", func(c echo.Context) error { return c.NoContent(204) },
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks, Wait: 2 * time.Second}))
	e.POST("/b/:id", func(c echo.Context) error { return c.NoContent(204) },
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks, ContendedStatus: http.StatusLocked}))
	srv := serve(t, e)

	holder := env.Lock(t, locks, env.Prefix+"1")
	hctx := scriptlock.WithOwner(context.Background(), "test-holder")
	if _, err := holder.Lock(hctx); err != nil {
		t.Fatal(err)
	}
	if r := do(t, srv, "POST", "/b/1", ""); r.code != http.StatusLocked {
		t.Errorf("ContendedStatus 423: got %d", r.code)
	}
	time.AfterFunc(200*time.Millisecond, func() { _ = holder.Unlock(hctx) })
	start := time.Now()
	if r := do(t, srv, "POST", "/a/1", ""); r.code != 204 {
		t.Errorf("waiting request: got %d, want 204 once the holder released", r.code)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("request did not wait for the holder (%s)", d)
	}
}

func TestRedisDown(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	var ran atomic.Int64
	h := func(c echo.Context) error { ran.Add(1); return c.NoContent(204) }
	e.POST("/closed/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	e.POST("/open/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc(), FailOpen: true}))
	srv := serve(t, e)
	env.Node.Kill()
	if r := do(t, srv, "POST", "/closed/1", ""); r.code != http.StatusServiceUnavailable {
		t.Errorf("fail closed: got %d, want 503", r.code)
	}
	if ran.Load() != 0 {
		t.Error("handler ran without the lock")
	}
	if r := do(t, srv, "POST", "/open/1", ""); r.code != 204 {
		t.Errorf("fail open: got %d, want 204", r.code)
	}
}

func TestLockLost(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	e := echo.New()
	lost := make(chan error, 2)
	e.POST("/written/:id", func(c echo.Context) error {
		ctx := c.Request().Context()
		if err := c.String(200, "partial"); err != nil {
			return err
		}
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
		<-ctx.Done()
		lost <- context.Cause(ctx)
		return nil
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	srv := serve(t, e)
	t.Run("nothing written", func(t *testing.T) {
		e.POST("/quiet/:id", func(c echo.Context) error {
			ctx := c.Request().Context()
			env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
			select {
			case <-ctx.Done():
				lost <- context.Cause(ctx)
				return nil
			case <-time.After(5 * time.Second):
				lost <- nil
				return c.NoContent(204)
			}
		}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
		r := do(t, srv, "POST", "/quiet/1", "")
		if cause := <-lost; !errors.Is(cause, scriptlock.ErrLockLost) {
			t.Errorf("handler context cause %v, want ErrLockLost", cause)
		}
		if r.code != http.StatusServiceUnavailable {
			t.Errorf("got %d, want 503", r.code)
		}
	})
	t.Run("handler returns an HTTP error", func(t *testing.T) {
		e.POST("/conflict/:id", func(c echo.Context) error {
			ctx := c.Request().Context()
			env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
			<-ctx.Done()
			lost <- context.Cause(ctx)
			return echo.NewHTTPError(http.StatusConflict, "stale")
		}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
		r := do(t, srv, "POST", "/conflict/3", "")
		if cause := <-lost; !errors.Is(cause, scriptlock.ErrLockLost) {
			t.Errorf("handler context cause %v, want ErrLockLost", cause)
		}
		if r.code != http.StatusServiceUnavailable {
			t.Errorf("got %d, want 503: a lost lock outranks the handler's own error", r.code)
		}
	})
	t.Run("already written", func(t *testing.T) {
		r := do(t, srv, "POST", "/written/2", "")
		if cause := <-lost; !errors.Is(cause, scriptlock.ErrLockLost) {
			t.Errorf("handler context cause %v, want ErrLockLost", cause)
		}
		if r.code != 200 || r.body != "partial" {
			t.Errorf("got %d %q, want the response the handler wrote", r.code, r.body)
		}
	})
}

func TestPanicReleases(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	e.Use(recoverer)
	e.POST("/:id", func(c echo.Context) error { panic("boom") },
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	srv := serve(t, e)
	for range 3 {
		if r := do(t, srv, "POST", "/1", ""); r.code != http.StatusInternalServerError {
			t.Fatalf("got %d, want 500 from the recovery middleware", r.code)
		}
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("keys left behind after panics: %v", keys)
	}
}

func TestReentrantUnderHandler(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	e := echo.New()
	e.POST("/:id", func(c echo.Context) error {
		ctx := c.Request().Context()
		// Nested code locking the same key with the request context re-enters.
		inner := env.Lock(t, locks, env.Prefix+c.Param("id"))
		if _, err := inner.TryLock(ctx, 0); err != nil {
			return err
		}
		return inner.Unlock(ctx)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/5", ""); r.code != 200 {
		t.Fatalf("got %d %s", r.code, r.body)
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}

// TestThousandRequests runs 1,000 requests over 20 connections on 50 keys, a
// fifth of them failing or panicking, and checks the handler never ran twice
// at once for a key and no lock key is left behind.
func TestThousandRequests(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	e.Use(recoverer)
	var inside [50]atomic.Int32
	var overlap atomic.Int32
	e.POST("/:id", func(c echo.Context) error {
		id, _ := strconv.Atoi(c.Param("id"))
		if inside[id].Add(1) > 1 {
			overlap.Add(1)
		}
		defer inside[id].Add(-1)
		time.Sleep(100 * time.Microsecond)
		switch n := c.QueryParam("n"); {
		case strings.HasSuffix(n, "3"):
			panic("handler panic")
		case strings.HasSuffix(n, "7"):
			return echo.NewHTTPError(http.StatusTeapot, http.StatusText(http.StatusTeapot))
		}
		return c.NoContent(204)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc(), Wait: 10 * time.Second}))
	srv := serve(t, e)
	var wg sync.WaitGroup
	codes := make(chan int, 1000)
	next := atomic.Int64{}
	for range 20 {
		wg.Go(func() {
			for {
				n := next.Add(1) - 1
				if n >= 1000 {
					return
				}
				r := do(t, srv, "POST", fmt.Sprintf("/%d?n=%d", n%50, n), "")
				codes <- r.code
			}
		})
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[204] != 800 || count[500] != 100 || count[418] != 100 {
		t.Errorf("status counts %v, want 800×204, 100×500, 100×418", count)
	}
	if overlap.Load() != 0 {
		t.Errorf("%d times two requests held the same key", overlap.Load())
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("%d keys left behind, e.g. %v", len(keys), keys[0])
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	if _, err := (echolock.LockConfig{}).ToMiddleware(); err == nil {
		t.Error("missing Lock accepted")
	}
	lf := func(string) (scriptlock.Locker, error) { return nil, nil }
	if _, err := (echolock.LockConfig{Lock: lf, KeyLookup: "body:x"}).ToMiddleware(); err == nil {
		t.Error("unknown source accepted")
	}
	if _, err := (echolock.LockConfig{Lock: lf, KeyPrefix: strings.Repeat("p", 300)}).ToMiddleware(); err == nil {
		t.Error("prefix too long for lock names accepted")
	}
	var _ = core.DefaultKeyPrefix
}

func TestClientConfig(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t, scriptlock.WithKeyPrefix(""))
	e := echo.New()
	h := func(c echo.Context) error {
		_, ok := scriptlock.Fence(c.Request().Context())
		return c.String(200, strconv.FormatBool(ok))
	}
	e.POST("/plain/:id", h, echolock.Lock(env.Locks))
	e.POST("/fair/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Client: env.Locks, Fair: true, Lease: 10 * time.Second}))
	srv := serve(t, e)
	for _, p := range []string{"/plain/1", "/fair/1"} {
		if r := do(t, srv, "POST", p, ""); r.code != 200 || r.body != "true" {
			t.Errorf("%s: %d %s", p, r.code, r.body)
		}
	}
	holder := env.FairMutex(t, env.Prefix+"2")
	hctx := scriptlock.WithOwner(context.Background(), "test-holder")
	if _, err := holder.Lock(hctx); err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(hctx)
	if r := do(t, srv, "POST", "/fair/2", ""); r.code != http.StatusConflict {
		t.Errorf("fair, contended: %d, want 409", r.code)
	}
}

// TestErrorHandler: the hook sees every refusal with its cause and decides
// the answer; the handler never runs for a refused request.
func TestErrorHandler(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	var seen []error
	var mu sync.Mutex
	cfg := echolock.LockConfig{
		KeyPrefix: env.Prefix,
		Lock:      env.LockFunc(),
		ErrorHandler: func(c echo.Context, err error) error {
			mu.Lock()
			seen = append(seen, err)
			mu.Unlock()
			var he *echo.HTTPError
			if errors.As(err, &he) && errors.Is(errors.Unwrap(he), scriptlock.ErrNotAcquired) {
				return c.JSON(http.StatusLocked, map[string]string{"error": "busy"})
			}
			return err
		},
	}
	hold := make(chan struct{})
	entered := make(chan struct{}, 1)
	var handled atomic.Int64
	e.POST("/orders/:id", func(c echo.Context) error {
		handled.Add(1)
		entered <- struct{}{}
		<-hold
		return c.NoContent(http.StatusNoContent)
	}, echolock.LockWithConfig(cfg))
	srv := serve(t, e)

	first := make(chan result, 1)
	go func() { first <- do(t, srv, "POST", "/orders/5", "") }()
	<-entered
	r := do(t, srv, "POST", "/orders/5", "")
	close(hold)
	if r.code != http.StatusLocked || !strings.Contains(r.body, "busy") {
		t.Errorf("contended request through the hook: %d %q, want 423 with the hook's body", r.code, r.body)
	}
	if r := <-first; r.code != http.StatusNoContent {
		t.Errorf("first request: %d", r.code)
	}
	if r := do(t, srv, "POST", "/orders/"+strings.Repeat("x", 300), ""); r.code != http.StatusBadRequest {
		t.Errorf("overlong key through the hook: %d, want 400", r.code)
	}
	if n := handled.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || !errors.Is(errors.Unwrap(seen[1].(*echo.HTTPError)), core.ErrKeyInvalid) {
		t.Errorf("hook saw %v, want the contention and then the invalid key", seen)
	}
}
