package echolock_test

import (
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestIdempotencyHeaderInvalidName: an IdempotencyConfig.Header that is no
// HTTP header field name is carried by no request, so every request would
// run without idempotency (a retry charging again) or, with Required, be
// refused: ToMiddleware refuses it with ErrConfig, as it does such a
// StoredHeaders or FingerprintHeaders name.
func TestIdempotencyHeaderInvalidName(t *testing.T) {
	t.Parallel()
	store, err := idempotency.NewStore(redistest.Server(t).Client(t), idempotency.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	for _, name := range []string{"Idempotency Key", "Idempotency-Key:", " Idempotency-Key", "X\r\nY"} {
		_, err := echolock.IdempotencyConfig{Store: store, Header: name}.ToMiddleware()
		if !errors.Is(err, echolock.ErrConfig) {
			t.Errorf("Header %q: ToMiddleware error %v, want ErrConfig", name, err)
		}
	}
	if _, err := (echolock.IdempotencyConfig{Store: store, Header: "x-request-idempotency-key"}).ToMiddleware(); err != nil {
		t.Errorf("Header x-request-idempotency-key: %v", err)
	}
}
