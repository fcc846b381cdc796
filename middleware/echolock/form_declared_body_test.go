package echolock_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestFormKeyBodyDeclaredOtherwise: a form: key comes from the request's
// form, the query string included. A body declared JSON or XML is no form:
// Echo's Bind reads it as JSON or XML, and a struct field tagged form:"id"
// is named ID, which encoding/json fills from "id". Such a body naming
// another key than the query string's is refused (400, nothing locked):
// the request would lock one order while the handler worked on another.
func TestFormKeyBodyDeclaredOtherwise(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	keys := &keyLog{}
	lock := keys.lockFunc(env)
	var mu sync.Mutex
	var bound []string
	e := echo.New()
	e.POST("/pay", func(c echo.Context) error {
		var req struct {
			ID string `form:"id"`
		}
		if err := c.Bind(&req); err != nil {
			return err
		}
		mu.Lock()
		bound = append(bound, req.ID)
		mu.Unlock()
		return c.NoContent(http.StatusOK)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "form:id", KeyPrefix: env.Prefix, Lock: lock}))
	srv := serve(t, e)

	const form, jsonType, xmlType = "application/x-www-form-urlencoded", "application/json", "application/xml"
	for _, c := range []struct {
		name, query, ctype, body string
		code                     int
		key                      string
	}{
		{"form body", "", form, "id=1", http.StatusOK, "1"},
		{"form body and query agree", "?id=1", form, "id=1", http.StatusOK, "1"},
		{"JSON body without the key", "?id=1", jsonType, `{"amount":5}`, http.StatusOK, "1"},
		{"JSON body naming the same key", "?id=1", jsonType, `{"id":"1"}`, http.StatusOK, "1"},
		{"JSON body naming another key", "?id=1", jsonType, `{"id":"2"}`, http.StatusBadRequest, ""},
		{"JSON body naming another key, other case", "?id=1", jsonType, `{"ID":"2"}`, http.StatusBadRequest, ""},
		{"XML body with elements", "?id=1", xmlType, `<r><ID>2</ID></r>`, http.StatusBadRequest, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			keys.reset()
			mu.Lock()
			bound = nil
			mu.Unlock()
			r := do(t, srv, "POST", "/pay"+c.query, c.body, "Content-Type", c.ctype)
			got := keys.joined()
			mu.Lock()
			ran := strings.Join(bound, ",")
			mu.Unlock()
			if r.code != c.code || got != c.key {
				t.Errorf("%s %q: %d %q, locked %q (handler bound %q); want %d, locked %q",
					c.ctype, c.body, r.code, strings.TrimSpace(r.body), got, ran, c.code, c.key)
			}
		})
	}
}
