package echolock_test

import (
	"testing"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestKeyLookupNamesNothing: a source that can never yield a key (a json:
// path with an empty member name, a header name no request can carry)
// would answer every request 400 as if the client had left the key out. It
// fails ToMiddleware, as grpclock's constructors refuse Field("a..b").
func TestKeyLookupNamesNothing(t *testing.T) {
	t.Parallel()
	lf := func(string) (scriptlock.Locker, error) { return nil, nil }
	for _, lookup := range []string{"json:order.", "json:.id", "json:a..b", "header:X-Order Id", "header:X-Order-Id:", "cookie:a b"} {
		if _, err := (echolock.LockConfig{Lock: lf, KeyLookup: lookup}).ToMiddleware(); err == nil {
			t.Errorf("KeyLookup %q accepted; no request can yield its key", lookup)
		}
	}
	for _, lookup := range []string{"json:order.id", "header:X-Order-Id", "header:x_order_id", "cookie:session_id", "query:a b", "form:id[]"} {
		if _, err := (echolock.LockConfig{Lock: lf, KeyLookup: lookup}).ToMiddleware(); err != nil {
			t.Errorf("KeyLookup %q refused: %v", lookup, err)
		}
	}
}
