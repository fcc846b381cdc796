package echolock

// What the tests reach of the version-specific helpers (compat.go), so that
// they read alike for Echo v4 and v5.
var (
	// EchoResponse is the echo.Response of a context.
	EchoResponse = response
	// RawWriter is the http.ResponseWriter an echo.Response writes to.
	RawWriter = writer
	// SetRawWriter makes an echo.Response write to a writer.
	SetRawWriter = setWriter
)
