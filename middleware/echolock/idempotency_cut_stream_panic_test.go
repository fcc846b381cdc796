package echolock_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyStreamCutByClientThenPanic: a handler streaming its answer
// whose client goes away mid-stream, and that then panics (Recover further
// out) instead of returning, has sent only part of its answer, as one that
// returns: the key is kept and a retry gets 409, not that part replayed as
// the whole answer.
func TestIdempotencyStreamCutByClientThenPanic(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	returned := make(chan struct{}, 1)
	e := echo.New()
	e.Use(middleware.Recover())
	e.POST("/exports", func(c echo.Context) error {
		defer func() { returned <- struct{}{} }()
		c.Response().Header().Set(echo.HeaderContentType, "text/event-stream")
		c.Response().WriteHeader(http.StatusOK)
		for {
			if _, err := c.Response().Write([]byte("data: part\n\n")); err != nil {
				panic(err)
			}
			echolock.EchoResponse(c).Flush()
			select {
			case <-c.Request().Context().Done():
				panic(errors.New("export stream broken off"))
			case <-time.After(20 * time.Millisecond):
			}
		}
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	leaveMidStream(t, srv, "/exports", "K")
	waitReturned(t, returned, 5*time.Second, "the handler did not see its client go")
	if r := settled(t, srv, "/exports", "K"); r.code != http.StatusConflict || !strings.Contains(r.body, "not stored") {
		t.Errorf("retry after the client left mid-stream and the handler panicked: %d %q replayed %q, want 409: the answer was cut short, not replayable",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed))
	}
}
