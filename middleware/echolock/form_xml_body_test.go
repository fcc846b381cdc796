package echolock_test

import (
	"encoding/xml"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestFormKeyXMLBody: a form: key taken from the query string of a request
// whose body is declared XML is refused only when the body could fill the
// key's field with another key, as for a body declared JSON: an element
// named like the key (Bind fills a field ID from <ID>) holding another
// value. An XML body about something else (an amount) keeps the query's key,
// as a JSON body without the key does; the handler binding it works on the
// order the request locked.
func TestFormKeyXMLBody(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	keys := &keyLog{}
	lock := keys.lockFunc(env)
	var mu sync.Mutex
	var bound []string
	e := echo.New()
	e.POST("/pay", func(c echo.Context) error {
		var req struct {
			XMLName xml.Name `xml:"payment"`
			ID      string   `form:"id"`
			Amount  int      `xml:"amount"`
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

	for _, c := range []struct {
		name, ctype, body string
		code              int
		key               string
	}{
		{"without the key", "application/xml", `<payment><amount>5</amount></payment>`, http.StatusOK, "1"},
		{"without the key, text/xml", "text/xml; charset=utf-8", `<?xml version="1.0"?><payment><amount>5</amount></payment>`, http.StatusOK, "1"},
		{"naming the same key", "application/xml", `<payment><ID>1</ID><amount>5</amount></payment>`, http.StatusOK, "1"},
		{"naming the same key, other spelling", "application/xml", `<payment><ID> 01 </ID></payment>`, http.StatusOK, "1"},
		{"an id deeper down", "application/xml", `<payment><line><ID>7</ID></line></payment>`, http.StatusOK, "1"},
		{"naming another key", "application/xml", `<payment><ID>2</ID></payment>`, http.StatusBadRequest, ""},
		{"naming another key, other case", "application/xml", `<payment><Id>2</Id></payment>`, http.StatusBadRequest, ""},
		{"naming another key after the same", "application/xml", `<payment><ID>1</ID><ID>2</ID></payment>`, http.StatusBadRequest, ""},
		{"naming another key in pieces", "application/xml", `<payment><ID>1<!-- -->2</ID></payment>`, http.StatusBadRequest, ""},
		{"naming another key before a syntax error", "application/xml", `<payment><ID>2</ID><amount>`, http.StatusBadRequest, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			keys.reset()
			mu.Lock()
			bound = nil
			mu.Unlock()
			r := do(t, srv, "POST", "/pay?id=1", c.body, "Content-Type", c.ctype)
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
