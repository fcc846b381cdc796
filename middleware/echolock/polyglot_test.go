package echolock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestJSONLookupPolyglotBody: a body declared a form or XML is what Echo's
// Bind (and FormValue) read it as, whatever else it parses as. A client
// that sent a body that is also JSON, naming another order there than in
// the form or XML, got the lock of the JSON order while the handler worked
// on the other one, without its lock: two such requests ran on the same
// order at once. Such a body, JSON naming a key and a form with values or
// XML with elements, is refused (400); the handler never runs. A JSON body
// that is no such form (sent with a form Content-Type, as curl -d does)
// keeps its JSON key.
func TestJSONLookupPolyglotBody(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	type order struct {
		ID string `json:"id" form:"id" xml:"id"`
	}
	var ran []string
	h := func(c echo.Context) error {
		var o order
		if err := c.Bind(&o); err != nil {
			return err
		}
		ran = append(ran, o.ID)
		if _, ok := scriptlock.FenceOf(c.Request().Context(), env.Prefix+o.ID); !ok {
			return c.String(http.StatusOK, "order "+o.ID+" handled without its lock")
		}
		return c.String(http.StatusOK, "order "+o.ID+" locked")
	}
	e := echo.New()
	e.POST("/both", h, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "json:id,form:id", KeyPrefix: env.Prefix, Client: env.Locks}))
	e.POST("/json", h, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "json:id", KeyPrefix: env.Prefix, Client: env.Locks}))
	e.POST("/fence", func(c echo.Context) error {
		if _, ok := scriptlock.FenceOf(c.Request().Context(), env.Prefix+"3"); ok {
			return c.String(http.StatusOK, "3 locked")
		}
		return c.String(http.StatusOK, "3 not locked")
	}, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "json:id", KeyPrefix: env.Prefix, Client: env.Locks}))
	srv := serve(t, e)
	for _, c := range []struct{ name, path, ctype, body string }{
		{"form, json:id,form:id", "/both", "application/x-www-form-urlencoded", `{"a":"&id=2&","id":"1"}`},
		{"form, json:id", "/json", "application/x-www-form-urlencoded", `{"a":"&id=2&","id":"1"}`},
		{"XML, json:id", "/json", "application/xml", `{"id":"1","a":"<order><id>2</id></order>"}`},
	} {
		ran = nil
		r := do(t, srv, "POST", c.path, c.body, "Content-Type", c.ctype)
		if r.code != http.StatusBadRequest || len(ran) != 0 {
			t.Errorf("%s: %d %q (handler ran for %v), want 400 and the handler not run", c.name, r.code, r.body, ran)
		}
	}
	// The same requests with bodies that are only what they declare.
	for _, c := range []struct{ name, path, ctype, body string }{
		{"form", "/both", "application/x-www-form-urlencoded", `id=2`},
		{"JSON", "/json", "application/json", `{"id":"2"}`},
	} {
		if r := do(t, srv, "POST", c.path, c.body, "Content-Type", c.ctype); r.code != http.StatusOK || r.body != "order 2 locked" {
			t.Errorf("%s: %d %q, want 200 %q", c.name, r.code, r.body, "order 2 locked")
		}
	}
	// JSON that reads as no form or XML keeps its key.
	for _, c := range []struct{ name, ctype, body string }{
		{"JSON labelled form", "application/x-www-form-urlencoded", `{"id":"3"}`},
		{"JSON labelled XML", "application/xml", `{"id":"3","note":"a & b"}`},
	} {
		if r := do(t, srv, "POST", "/fence", c.body, "Content-Type", c.ctype); r.code != http.StatusOK || r.body != "3 locked" {
			t.Errorf("%s: %d %q, want 200 %q", c.name, r.code, r.body, "3 locked")
		}
	}
}
