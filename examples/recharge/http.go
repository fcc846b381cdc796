package recharge

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/scriptlock/scriptlock/middleware/echolock/v5"
)

// RechargeJSON is the HTTP answer of POST /orders/:id/recharge.
type RechargeJSON struct {
	OrderID   int64  `json:"order_id"`
	Outcome   string `json:"outcome"` // "credited" or "already processed"
	AccountID int64  `json:"account_id"`
	Amount    int64  `json:"amount"` // credited by this call
	Fence     int64  `json:"fence,omitempty"`
}

// HTTPHandler returns the Echo front end: POST /orders/:id/recharge, under
// the Idempotency-Key middleware (when configured) and the lock order:<id>.
//
// Answers: 200 with RechargeJSON (a retry of a request whose process paid
// the order and died before its answer was stored gets that answer again,
// with Idempotent-Replayed: true); 400 for an id that is not a positive
// integer; 404 for an unknown order; 409 for an order neither unpaid nor
// paid (cancelled, ...) or whose credit would overflow the account's
// balance, while the order's lock stays held
// for the whole wait (Retry-After), while a request with the same
// Idempotency-Key runs, or when this request's lock expired and a newer
// holder took the order over (nothing was written: retry); 503 when Redis
// or the database cannot be reached (Retry-After) or the lock was lost
// mid-request; 500 for any other
// failure, whose detail goes to Config.Logger, not to the client.
func (s *Server) HTTPHandler() *echo.Echo {
	e := echo.New()
	var mws []echo.MiddlewareFunc
	if s.cfg.Idempotency != nil {
		mws = append(mws, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{
			Store:  s.cfg.Idempotency, // final answers only: 409 and 5xx leave the key usable
			Logger: s.cfg.Logger,
		}))
	}
	if !s.cfg.Service.Unsafe {
		mws = append(mws, echolock.LockWithConfig(echolock.LockConfig{
			KeyFunc: func(c *echo.Context) (string, error) {
				_, key, err := parseOrderID(c.Param("id"))
				return key, err
			},
			KeyPrefix: LockPrefix,
			Lock:      s.locks.lock,
			Wait:      s.cfg.Wait,
			Logger:    s.cfg.Logger,
			// The key is the order id: say what is wrong with it, as the
			// handler and the gRPC front end do, not "lock key invalid".
			ErrorHandler: func(c *echo.Context, err error) error {
				var he *echo.HTTPError
				if errors.As(err, &he) && he.Message == echolock.ErrKeyInvalid.Message {
					return echo.NewHTTPError(http.StatusBadRequest, msgBadOrderID).Wrap(errors.Unwrap(he))
				}
				return err
			},
		}))
	}
	e.POST("/orders/:id/recharge", s.rechargeHTTP, mws...)
	return e
}

// msgBadOrderID answers an order id that is not a positive integer.
const msgBadOrderID = "order id must be a positive integer"

func (s *Server) rechargeHTTP(c *echo.Context) error {
	id, _, err := parseOrderID(c.Param("id"))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, msgBadOrderID).Wrap(err)
	}
	ctx := c.Request().Context()
	res, err := s.cfg.Service.Recharge(ctx, id)
	switch {
	case errors.Is(err, ErrOrderNotFound):
		return echo.NewHTTPError(http.StatusNotFound, "order not found")
	case errors.Is(err, ErrNotPayable):
		return echo.NewHTTPError(http.StatusConflict, "order is not payable (neither unpaid nor paid)").Wrap(err)
	case errors.Is(err, ErrBalanceOverflow):
		return echo.NewHTTPError(http.StatusConflict, "credit would overflow the account balance; nothing was changed").Wrap(err)
	case errors.Is(err, ErrStaleFence):
		return echo.NewHTTPError(http.StatusConflict, "lock expired before the write; nothing was changed, retry").Wrap(err)
	case errors.Is(err, ErrDatabaseUnavailable) && ctx.Err() == nil:
		s.cfg.Logger.WarnContext(ctx, "recharge: database unavailable", "order", id, "err", err)
		c.Response().Header().Set("Retry-After", "1")
		return echo.NewHTTPError(http.StatusServiceUnavailable, "database unavailable, retry later").Wrap(err)
	case err != nil:
		// As on gRPC: the detail goes to the log, not to the client. Without
		// the log line nobody could tell why a payment failed.
		if !endedByContext(ctx, err) {
			s.cfg.Logger.ErrorContext(ctx, "recharge failed", "order", id, "err", err)
		}
		if ctx.Err() != nil {
			return err // lock lost: echolock answers 503; client gone: nobody reads the answer
		}
		return echo.NewHTTPError(http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError)).Wrap(err)
	}
	out := RechargeJSON{OrderID: id, Outcome: res.Outcome.String(), AccountID: res.Order.AccountID, Fence: res.Fence}
	if res.Outcome == Credited {
		out.Amount = res.Order.Amount
	}
	if res.Replayed {
		// The first run's answer, rebuilt: marked like the middleware's replays.
		c.Response().Header().Set(echolock.HeaderIdempotentReplayed, "true")
	}
	return c.JSON(http.StatusOK, out)
}
