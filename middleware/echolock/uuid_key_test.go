package echolock_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestUUIDKeySpellings: a handler reading its id with a UUID parser
// (github.com/google/uuid's Parse, a database's uuid type) reads the upper-
// and lower-case spellings of a UUID, with or without dashes, braces or a
// urn:uuid: prefix, as one id. Each spelling took a lock of its own, so a
// request naming the UUID in capitals ran beside one holding it. Every
// spelling of a UUID now takes the lock of its lower-case dashed form.
func TestUUIDKeySpellings(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	ran := make(chan string, 16)
	e.POST("/orders/:id", func(c echo.Context) error {
		ran <- c.Param("id")
		return c.NoContent(http.StatusOK)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	srv := serve(t, e)
	const id = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	ctx := context.Background()
	m := env.Mutex(t, env.Prefix+id)
	if _, err := m.TryLock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Unlock(context.WithoutCancel(ctx)) })
	for _, p := range []string{
		"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc99-9c0b-4ef8-BB6D-6bb9bd380a11",
		"a0eebc999c0b4ef8bb6d6bb9bd380a11", "A0EEBC999C0B4EF8BB6D6BB9BD380A11",
		"urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "URN:UUID:A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
		"%7Ba0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11%7D",
	} {
		if r := do(t, srv, "POST", "/orders/"+p, ""); r.code != http.StatusConflict {
			t.Errorf("%s while its UUID is locked: %d %s, want 409", p, r.code, r.body)
		}
	}
	select {
	case p := <-ran:
		t.Errorf("handler ran for %q beside the lock of its UUID", p)
	default:
	}
	for _, p := range []string{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"} {
		if r := do(t, srv, "POST", "/orders/"+p, ""); r.code != http.StatusOK {
			t.Errorf("%s: %d %s, want 200", p, r.code, r.body)
		}
		<-ran
	}
}
