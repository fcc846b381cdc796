package echolock

// What the tests reach of Echo's response, spelled per Echo version, so that
// the tests read alike for v4 and v5.

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// EchoResponse is the echo.Response of c.
func EchoResponse(c echo.Context) *echo.Response { return c.Response() }

// RawWriter is the http.ResponseWriter res writes to.
func RawWriter(res *echo.Response) http.ResponseWriter { return res.Writer }

// SetRawWriter makes res write to w.
func SetRawWriter(res *echo.Response, w http.ResponseWriter) { res.Writer = w }
