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

// TestIntegerKeySpellings: a handler reading its order id with
// strconv.Atoi (or a JSON ",string" int field) reads "042", "+42" and "42"
// as the same order 42, and "-0" as 0. Each such spelling took a lock of
// its own, so a request on "/orders/042" ran beside one holding order 42.
// Every spelling of an integer now takes the lock of its plain decimal.
func TestIntegerKeySpellings(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	ran := make(chan string, 16)
	h := func(c echo.Context) error {
		ran <- c.Param("id") + c.QueryParam("id") + c.Request().Header.Get("X-Id")
		return c.NoContent(http.StatusOK)
	}
	e.POST("/orders/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	e.POST("/q", h, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "query:id,header:X-Id,json:id", KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	srv := serve(t, e)
	for _, n := range []int{42, 0, -7} {
		ctx := context.Background()
		m := env.Mutex(t, env.Prefix+strconv.Itoa(n))
		if _, err := m.TryLock(ctx, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Unlock(context.WithoutCancel(ctx)) })
	}
	for _, c := range []struct{ path, body string }{
		{"/orders/042", ""}, {"/orders/+42", ""}, {"/orders/0000042", ""}, {"/orders/%2B42", ""},
		{"/orders/-0", ""}, {"/orders/00", ""}, {"/orders/+0", ""}, {"/orders/-07", ""},
		{"/q?id=042", ""}, {"/q?id=%2B42", ""},
		{"/q", `{"id":"042"}`}, {"/q", `{"id":"-0"}`},
		// PostgreSQL's integer input reads these as 42 too.
		{"/orders/%2042", ""}, {"/q?id=42%20", ""}, {"/q", `{"id":" +042 "}`},
		// And, from PostgreSQL 16, these.
		{"/orders/0x2A", ""}, {"/orders/0b101010", ""}, {"/q?id=4_2", ""},
	} {
		hdr := []string{"Content-Type", "application/json"}
		if r := do(t, srv, "POST", c.path, c.body, hdr...); r.code != http.StatusConflict {
			t.Errorf("%s %s while its order is locked: %d %s, want 409", c.path, c.body, r.code, r.body)
		}
	}
	if r := do(t, srv, "POST", "/q", "", "X-Id", "0042"); r.code != http.StatusConflict {
		t.Errorf("header X-Id: 0042 while order 42 is locked: %d, want 409", r.code)
	}
	select {
	case id := <-ran:
		t.Errorf("handler ran for %q beside the lock of its order", id)
	default:
	}
	for _, p := range []string{"/orders/43", "/orders/4.2", "/orders/0x2G", "/orders/42a", "/orders/4__2"} {
		if r := do(t, srv, "POST", p, ""); r.code != http.StatusOK {
			t.Errorf("%s: %d %s, want 200", p, r.code, r.body)
		}
		<-ran
	}
}
