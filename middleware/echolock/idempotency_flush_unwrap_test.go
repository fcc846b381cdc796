package echolock_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// unwrapOnly is a response writer wrapper of the kind middleware further out
// installs (metrics, access logs) that reaches the writer's other methods,
// Flush among them, only through Unwrap, as http.ResponseController does.
type unwrapOnly struct{ w http.ResponseWriter }

func (u *unwrapOnly) Header() http.Header         { return u.w.Header() }
func (u *unwrapOnly) Write(b []byte) (int, error) { return u.w.Write(b) }
func (u *unwrapOnly) WriteHeader(code int)        { u.w.WriteHeader(code) }
func (u *unwrapOnly) Unwrap() http.ResponseWriter { return u.w }

// TestIdempotencyFlushThroughUnwrap: an event stream under Idempotency
// reaches the client as it is flushed, also behind a writer wrapper that
// flushes only through Unwrap (echo.Response.Flush uses
// http.ResponseController, which finds it): the client reads the first event
// while the handler still runs.
func TestIdempotencyFlushThroughUnwrap(t *testing.T) {
	t.Parallel()
	got := make(chan struct{})
	store := plainStore(t)
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			echolock.SetRawWriter(echolock.EchoResponse(c), &unwrapOnly{echolock.RawWriter(echolock.EchoResponse(c))})
			return next(c)
		}
	})
	e.POST("/events", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentType, "text/event-stream")
		c.Response().WriteHeader(http.StatusOK)
		if _, err := c.Response().Write([]byte("data: 1\n\n")); err != nil {
			return err
		}
		echolock.EchoResponse(c).Flush()
		select {
		case <-got:
		case <-time.After(3 * time.Second):
		}
		_, err := c.Response().Write([]byte("data: 2\n\n"))
		return err
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	req, _ := http.NewRequest("POST", srv.URL+"/events", nil)
	req.Header.Set("Idempotency-Key", "stream-1")
	start := time.Now()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	close(got)
	if err != nil || strings.TrimSpace(line) != "data: 1" || time.Since(start) > 2*time.Second {
		t.Fatalf("first event: %q %v after %s; want it flushed at once, while the handler runs", line, err, time.Since(start).Round(time.Millisecond))
	}
}
