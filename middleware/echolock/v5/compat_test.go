package echolock_test

// The test helpers whose spelling differs between Echo v4 and Echo v5; the
// other test files are generated from the v4 package's.

import (
	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"
)

// bodyLimit1M is Echo's BodyLimit middleware with a limit of 1 MiB.
func bodyLimit1M() echo.MiddlewareFunc { return middleware.BodyLimit(1 << 20) }
