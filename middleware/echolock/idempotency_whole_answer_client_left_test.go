package echolock_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyWholeAnswerThenClientLeft: a handler that sent its whole
// answer (all of the Content-Length it declared, flushed) and works on
// afterwards, returning once its client has read the answer and gone, did
// not have its answer cut short: the client got it whole, so it is stored
// and replayed, not refused with 409 as one the client left mid-stream.
func TestIdempotencyWholeAnswerThenClientLeft(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	returned := make(chan struct{}, 1)
	e := echo.New()
	e.POST("/payments", func(c echo.Context) error {
		defer func() { returned <- struct{}{} }()
		const body = "paid"
		res := echolock.EchoResponse(c)
		res.Header().Set(echo.HeaderContentType, echo.MIMETextPlain)
		res.Header().Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
		res.WriteHeader(http.StatusCreated)
		if _, err := res.Write([]byte(body)); err != nil {
			return err
		}
		res.Flush()
		select { // work that goes on after the answer: the client has it
		case <-c.Request().Context().Done():
		case <-time.After(5 * time.Second):
		}
		return nil
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	if code, b, err := readAndLeave(t, srv, http.MethodPost, "/payments", "K"); err != nil || code != http.StatusCreated || string(b) != "paid" {
		t.Fatalf("first: %d %q %v", code, b, err)
	}
	waitReturned(t, returned, 10*time.Second, "the handler did not return")
	if r := settled(t, srv, "/payments", "K"); r.code != http.StatusCreated || r.body != "paid" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("retry of a request whose client got its whole answer, then left: %d %q replayed %q, want the 201 replayed",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed))
	}
}
