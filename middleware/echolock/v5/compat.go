package echolock

// The operations whose spelling differs between Echo v4 and Echo v5. The
// other files of this package are generated from the v4 package's
// (middleware/echolock), which has its own compat.go.

//go:generate go run ../../internal/echov5gen -in .. -out .

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v5"
)

// wrapWriter puts wrap(w) between the response bookkeeping c's handler
// writes to and w, the writer under it, and returns that bookkeeping, which
// tells what the handler sent through Echo, and a func that takes wrap(w)
// out again. Echo v4 has one echo.Response on top, with the writers of
// middleware further out (Gzip) under it. In v5 those wrap c.Response() and
// the echo.Response is under them: when c.Response() is an echo.Response,
// wrap(w) goes under it as in v4; when it is another middleware's writer, an
// echo.Response is put on top of wrap(w) for the time being, starting from
// what the one under says, so that it stands where v4's does and sees the
// handler's answer before writers further out change or buffer it.
func wrapWriter(c *echo.Context, wrap func(w http.ResponseWriter) http.ResponseWriter) (res *echo.Response, unwrap func()) {
	if res, ok := c.Response().(*echo.Response); ok {
		w := res.ResponseWriter
		res.ResponseWriter = wrap(w)
		return res, func() { res.ResponseWriter = w }
	}
	w := c.Response()
	res = echo.NewResponse(wrap(w), c.Logger())
	res.Status = http.StatusOK // as Echo's own, before anything is sent
	outer, _ := echo.UnwrapResponse(w)
	if outer != nil {
		res.Committed, res.Status = outer.Committed, outer.Status
	}
	c.SetResponse(res)
	return res, func() {
		// res stays c.Response(), over w: what it says was sent is what
		// Echo's error handler and middleware further out read (Gzip may
		// still buffer it below), as v4's one echo.Response does.
		res.ResponseWriter = w
		// An informational status alone (103 Early Hints) is no answer:
		// res was told so (see the callers), and the echo.Response under
		// w, which took it for one as res did, is told too, as v4's one
		// echo.Response is.
		if outer != nil && !res.Committed && outer.Committed && informational(outer.Status) {
			outer.Committed = false
		}
	}
}

// informational reports whether status is a 1xx one other than 101
// Switching Protocols, which ends the HTTP answer.
func informational(status int) bool {
	return status < http.StatusOK && status != http.StatusSwitchingProtocols
}

// withInternal returns base wrapping cause.
func withInternal(base *echo.HTTPError, cause error) *echo.HTTPError {
	var he *echo.HTTPError
	errors.As(base.Wrap(cause), &he)
	return he
}

// errorStatus returns the status Echo's DefaultHTTPErrorHandler answers err
// with when err chooses one: the first echo.HTTPStatusCoder in its chain,
// with a status. Any other error is a 500 to it, and ok is false.
func errorStatus(err error) (status int, ok bool) {
	status = chainStatus(err)
	return status, status != 0
}

// writeError answers err now through the Echo's HTTPErrorHandler.
func writeError(c *echo.Context, err error) { c.Echo().HTTPErrorHandler(c, err) }

// formValues parses the request's form (the query string's included).
func formValues(c *echo.Context) (url.Values, error) { return c.FormValues() }

// routerRoute returns the route part of the fingerprint of c's request when
// its Echo has virtual hosts, and false when it has none. An Echo v5 has no
// virtual hosts of its own (e.Host is gone: each host is an Echo of its own,
// behind echo.NewVirtualHostHandler), so its route path alone is the route,
// as in a v4 Echo without virtual hosts, whose records a v5 one replays.
// FingerprintHeaders naming Host tells the hosts' routes apart.
func routerRoute(*echo.Context) (route []byte, alone, ok bool) { return nil, false, false }

// chainStatus returns the status of the first echo.HTTPStatusCoder in err's
// chain (echo.ErrStatusRequestEntityTooLarge, which v5's BodyLimit reader
// fails with, is not an *echo.HTTPError), 0 for none.
func chainStatus(err error) int { return echo.StatusCode(err) }
