package echolock_test

// The test helpers whose spelling differs between Echo v4 and Echo v5; the
// v5 package has its own.

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// bodyLimit1M is Echo's BodyLimit middleware with a limit of 1 MiB.
func bodyLimit1M() echo.MiddlewareFunc { return middleware.BodyLimit("1M") }
