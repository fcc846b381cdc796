package echolock_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyHeadAnswerThenClientLeft: an answer to HEAD has no body,
// so it is whole once its header is sent, whatever Content-Length it
// declares (http.ServeContent declares the length of a body it does not
// write): a handler that sent it and works on until its client has read it
// and gone did not have it cut short. It is stored and replayed, not refused
// with 409 as an answer its client left mid-way.
func TestIdempotencyHeadAnswerThenClientLeft(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	returned := make(chan struct{}, 1)
	e := echo.New()
	e.HEAD("/exports/:id", func(c echo.Context) error {
		defer func() { returned <- struct{}{} }()
		res := echolock.EchoResponse(c)
		res.Header().Set(echo.HeaderContentType, echo.MIMETextPlain)
		res.Header().Set(echo.HeaderContentLength, "4096")
		res.WriteHeader(http.StatusOK)
		res.Flush()
		select { // work that goes on after the answer: the client has it
		case <-c.Request().Context().Done():
		case <-time.After(5 * time.Second):
		}
		return nil
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	if code, _, _ := readAndLeave(t, srv, http.MethodHead, "/exports/1", "K"); code != http.StatusOK {
		t.Fatalf("first: %d", code)
	}
	waitReturned(t, returned, 10*time.Second, "the handler did not return")
	var r result
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// 409 while the key is settled (in flight); a HEAD answer has no
		// body to tell that 409 from the one for an answer not stored.
		if r = do(t, srv, http.MethodHead, "/exports/1", "", echolock.HeaderIdempotencyKey, "K"); r.code != http.StatusConflict || time.Now().After(deadline) {
			break
		}
	}
	if r.code != http.StatusOK || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("retry of a HEAD whose client read its answer, then left: %d replayed %q, want the 200 replayed",
			r.code, r.header.Get(echolock.HeaderIdempotentReplayed))
	}
}
