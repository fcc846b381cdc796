package echolock_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIntegerKeyThatIsAlsoUUID: 32 decimal digits spell a UUID (uuid.Parse
// and PostgreSQL's uuid type read them as one) and an integer (strconv.Atoi,
// PostgreSQL's bigint) alike. A handler passing
// "00000000000000000000000000000042" to an integer column works on order
// 42, so the request must wait for order 42's lock; one passing it to a
// uuid column works on the UUID whose dashed spelling must take the same
// lock too.
func TestIntegerKeyThatIsAlsoUUID(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	ran := make(chan string, 16)
	e.POST("/orders/:id", func(c echo.Context) error {
		ran <- c.Param("id")
		return c.NoContent(http.StatusOK)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	srv := serve(t, e)
	ctx := context.Background()
	m := env.Mutex(t, env.Prefix+strconv.Itoa(42))
	if _, err := m.TryLock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Unlock(context.WithoutCancel(ctx)) })
	for _, id := range []string{
		"00000000000000000000000000000042",     // an integer, and a UUID
		"00000000-0000-0000-0000-000000000042", // that UUID
		"{00000000000000000000000000000042}",
	} {
		if r := do(t, srv, "POST", "/orders/"+id, ""); r.code != http.StatusConflict {
			t.Errorf("/orders/%s while order 42 is locked: %d %s, want 409", id, r.code, r.body)
		}
	}
	select {
	case id := <-ran:
		t.Errorf("handler ran for %q beside the lock of its order", id)
	default:
	}
	// A UUID with a hex letter is no integer and keeps a lock of its own.
	if r := do(t, srv, "POST", "/orders/0000000000000000000000000000004a", ""); r.code != http.StatusOK {
		t.Errorf("a UUID no integer spells: %d %s, want 200", r.code, r.body)
	}
}
