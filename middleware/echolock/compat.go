package echolock

// The operations whose spelling differs between Echo v4 and Echo v5. The rest
// of the package is written in the part of Echo's API both read alike, and
// the v5 package (middleware/echolock/v5) is generated from it, with its own
// compat.go.

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// wrapWriter puts wrap(w) between Echo's response bookkeeping and w, the
// writer Echo's response writes to, and returns that bookkeeping, which says
// what the handler sent through Echo, and a func that takes wrap(w) out.
func wrapWriter(c echo.Context, wrap func(w http.ResponseWriter) http.ResponseWriter) (res *echo.Response, unwrap func()) {
	res = c.Response()
	w := res.Writer
	res.Writer = wrap(w)
	return res, func() { res.Writer = w }
}

// withInternal returns base with cause as its internal error.
func withInternal(base *echo.HTTPError, cause error) *echo.HTTPError {
	return &echo.HTTPError{Code: base.Code, Message: base.Message, Internal: cause}
}

// errorStatus returns the status Echo's DefaultHTTPErrorHandler answers err
// with when err chooses one: an *echo.HTTPError, or the *echo.HTTPError in its
// Internal. Any other error is a 500 to it, and ok is false.
func errorStatus(err error) (status int, ok bool) {
	he, ok := err.(*echo.HTTPError)
	if !ok {
		return 0, false
	}
	if in, ok := he.Internal.(*echo.HTTPError); ok {
		he = in
	}
	return he.Code, true
}

// writeError answers err now through the Echo's HTTPErrorHandler.
func writeError(c echo.Context, err error) { c.Error(err) }

// formValues parses the request's form (the query string's included).
func formValues(c echo.Context) (url.Values, error) { return c.FormParams() }

// routerRoute returns the route part of the fingerprint of c's request when
// its Echo has virtual hosts (e.Host), and false when it has none (the route
// path alone is the route then). Echo picks the router by the request's
// Host as sent: a virtual host's route counts with its host, and a route of
// the default router, which serves every other host, is told apart from
// both, so that no router's route shares a record with another's of the
// same path. Neither spells a route path (those begin with '/'). alone says
// that this router has a route of that path and no other router of the Echo
// has one: a fingerprint of the path alone then names this router's route
// only (not so for a path no router has, such as the empty one of a request
// not yet routed, in e.Pre).
func routerRoute(c echo.Context) (route []byte, alone, ok bool) {
	e := c.Echo()
	if e == nil || len(e.Routers()) == 0 { // a context not made by an Echo, or no virtual host
		return nil, false, false
	}
	host, path := c.Request().Host, c.Path()
	own, vhost := e.Routers()[host]
	if vhost {
		route = core.FieldsPart("virtual-host", []string{host}, func(string) []string { return []string{path} })
	} else {
		own = e.Router()
		route = core.FieldsPart("default-router", []string{"path"}, func(string) []string { return []string{path} })
	}
	alone = routerHasPath(own, path) && (own == e.Router() || !routerHasPath(e.Router(), path))
	for _, r := range e.Routers() {
		if r != own && routerHasPath(r, path) {
			alone = false
		}
	}
	return route, alone, true
}

// routerHasPath reports whether r has a route of path.
func routerHasPath(r *echo.Router, path string) bool {
	for _, rt := range r.Routes() {
		if rt.Path == path {
			return true
		}
	}
	return false
}

// chainStatus returns the Code of the first *echo.HTTPError in err's chain, 0 for none.
func chainStatus(err error) int {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	return 0
}
