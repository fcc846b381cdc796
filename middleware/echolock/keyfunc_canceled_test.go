package echolock_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestKeyFuncClientGone: a KeyFunc that fails because the request's own
// context ended (the client went away while it looked the key up) is
// reported as canceled, not as a key the client got wrong: key_invalid
// counts bad input, and the client sent none.
func TestKeyFuncClientGone(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var out outcomes
	var answered error
	e := echo.New()
	e.POST("/:id", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) },
		echolock.LockWithConfig(echolock.LockConfig{
			KeyPrefix: env.Prefix, Lock: env.LockFunc(), OnOutcome: out.report,
			KeyFunc: func(c echo.Context) (string, error) {
				<-c.Request().Context().Done() // a lookup that outlived the client
				return "", fmt.Errorf("looking up the account: %w", c.Request().Context().Err())
			},
			ErrorHandler: func(_ echo.Context, err error) error { answered = err; return err },
		}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodPost, "/1", nil).WithContext(ctx)
	e.ServeHTTP(httptest.NewRecorder(), req)
	if got := out.take(); len(got) != 1 || got[0] != scriptlock.RequestCanceled {
		t.Errorf("outcomes %v, want [%v]", got, scriptlock.RequestCanceled)
	}
	var he *echo.HTTPError
	if !errors.As(answered, &he) || he.Code == http.StatusBadRequest {
		t.Errorf("answered %v, want no 400: the client sent no bad key", answered)
	}
}
