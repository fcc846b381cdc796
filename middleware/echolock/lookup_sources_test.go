package echolock_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestLookupListNonJSONBody: in a key lookup list the first source that
// yields a key wins. A json: source meeting a body that is not JSON (a form)
// yields nothing, so a source after it is tried; a body declared JSON that
// does not parse, and a request where no source yields a key, answer 400. A
// body that is JSON is read whatever its Content-Type, as a handler decoding
// it would.
func TestLookupListNonJSONBody(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	keys := &keyLog{}
	lock := keys.lockFunc(env)
	e := echo.New()
	ok := func(c echo.Context) error { return c.NoContent(http.StatusOK) }
	e.POST("/form", ok, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "json:id,form:id", KeyPrefix: env.Prefix, Lock: lock}))
	e.POST("/header", ok, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "json:id,header:X-Id", KeyPrefix: env.Prefix, Lock: lock}))
	e.POST("/small", ok, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "json:id,form:id", KeyPrefix: env.Prefix, Lock: lock, MaxBodyBytes: 64}))
	e.POST("/json", ok, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "json:id", KeyPrefix: env.Prefix, Lock: lock}))
	srv := serve(t, e)

	const form, jsonType, text = "application/x-www-form-urlencoded", "application/json", "text/plain"
	for _, c := range []struct {
		name, path, ctype, body, header string
		code                            int
		key                             string
	}{
		{"form body, form source", "/form", form, "id=F1", "", http.StatusOK, "F1"},
		{"JSON body, json source", "/form", jsonType, `{"id":"J1"}`, "", http.StatusOK, "J1"},
		{"JSON body labelled form", "/form", form, `{"id":"J2"}`, "", http.StatusOK, "J2"},
		{"form body without the field", "/form", form, "other=1", "", http.StatusBadRequest, ""},
		{"declared JSON, malformed", "/form", jsonType, "id=F2", "", http.StatusBadRequest, ""},
		{"text body, header source", "/header", text, "not json", "H1", http.StatusOK, "H1"},
		{"JSON read whatever its type", "/header", text, `{"id":"J3"}`, "H2", http.StatusOK, "J3"},
		{"JSON prefix then data", "/header", text, `{"id":"J4"} x`, "H3", http.StatusBadRequest, ""},
		{"form body over the JSON limit", "/small", form, "id=F4&pad=" + strings.Repeat("x", 100), "", http.StatusOK, "F4"},
		{"JSON body over the limit", "/small", form, `{"id":"J5","pad":"` + strings.Repeat("x", 100) + `"}`, "", http.StatusRequestEntityTooLarge, ""},
		{"only json source, form body", "/json", form, "id=F3", "", http.StatusBadRequest, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			keys.reset()
			hdr := []string{"Content-Type", c.ctype}
			if c.header != "" {
				hdr = append(hdr, "X-Id", c.header)
			}
			r := do(t, srv, "POST", c.path, c.body, hdr...)
			got := keys.joined()
			if r.code != c.code || got != c.key {
				t.Errorf("%s %q: %d %q, locked %q; want %d, locked %q", c.ctype, c.body, r.code, strings.TrimSpace(r.body), got, c.code, c.key)
			}
		})
	}
}
