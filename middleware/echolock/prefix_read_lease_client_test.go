package echolock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestKeyPrefixReadLeaseFormAfterClientPrefix: a KeyPrefix that, after the
// Client's own key prefix, ends in ":rwlock_timeout:" ("orders:rwlock_" and
// "timeout:") makes every integer key name a read hold's lease key, which
// the Client refuses as a lock name: every request with an integer key
// would be answered 400 as if its key were invalid. ToMiddleware refuses
// it, as it does a prefix naming companion keys after the Client's.
func TestKeyPrefixReadLeaseFormAfterClientPrefix(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	prefixed, err := scriptlock.New(env.Node.Client(t), scriptlock.WithKeyPrefix("orders:rwlock_"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prefixed.Close() })
	mw, err := echolock.LockConfig{Client: prefixed, KeyPrefix: "timeout:"}.ToMiddleware()
	if err == nil {
		e := echo.New()
		e.POST("/orders/:id", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }, mw)
		r := do(t, serve(t, e), "POST", "/orders/42", "")
		t.Fatalf(`KeyPrefix "timeout:" under the Client's key prefix "orders:rwlock_" accepted; the integer key 42 is answered %d %q`, r.code, r.body)
	}
	if _, err := (echolock.LockConfig{Client: prefixed, KeyPrefix: "timeouts:"}).ToMiddleware(); err != nil {
		t.Errorf(`KeyPrefix "timeouts:" under the Client's key prefix "orders:rwlock_" refused: %v`, err)
	}
}
