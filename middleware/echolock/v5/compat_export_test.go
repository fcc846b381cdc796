package echolock

// What the tests reach of Echo's response, spelled per Echo version, so that
// the tests read alike for v4 and v5.

import (
	"net/http"

	"github.com/labstack/echo/v5"
)

// EchoResponse is the echo.Response of c: the first one under c.Response().
func EchoResponse(c *echo.Context) *echo.Response {
	res, err := echo.UnwrapResponse(c.Response())
	if err != nil {
		panic(err)
	}
	return res
}

// RawWriter is the http.ResponseWriter res writes to.
func RawWriter(res *echo.Response) http.ResponseWriter { return res.ResponseWriter }

// SetRawWriter makes res write to w.
func SetRawWriter(res *echo.Response, w http.ResponseWriter) { res.ResponseWriter = w }
