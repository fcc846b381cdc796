package echolock

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

func TestJSONLookup(t *testing.T) {
	t.Parallel()
	path := []string{"order", "id"}
	cases := []struct {
		body, want string
		err        bool
	}{
		{`{"order":{"id":"A1"}}`, "A1", false},
		{`{"ORDER":{"Id":"A1"}}`, "A1", false},
		{`{"order":{"id":"decoy"},"ORDER":{"ID":"victim"}}`, "", true},
		{`{"order":{"id":"a","id":"b"}}`, "", true},
		{`{"order":{"id":42}}`, "42", false},
		{`{"order":{"id":4.2e1}}`, "42", false},
		{`{"order":{"id":42.000}}`, "42", false},
		{`{"order":{"id":420e-1}}`, "42", false},
		{`{"order":{"id":-0}}`, "0", false},
		{`{"order":{"id":0.0e7}}`, "0", false},
		{`{"order":{"id":-12}}`, "-12", false},
		{`{"order":{"id":1.5}}`, "1.5", false},
		{`{"order":{"id":15e-1}}`, "1.5", false},
		{`{"order":{"id":1e999999999999}}`, "", true},
		{`{"order":{"id":null}}`, "", false},
		{`{"order":null}`, "", false},
		{`{"order":[1]}`, "", false},
		{`{"order":{"id":true}}`, "", true},
		{`{"order":{"id":"x"}} {"order":{"id":"y"}}`, "", true},
		{`{"order":{"id":"x"}`, "", true},
	}
	for _, c := range cases {
		got, err := jsonLookup([]byte(c.body), path)
		if c.err != (err != nil) || got != c.want {
			t.Errorf("jsonLookup(%s) = %q, %v; want %q, error %v", c.body, got, err, c.want, c.err)
		}
		if err != nil && !errors.Is(err, core.ErrKeyInvalid) {
			t.Errorf("jsonLookup(%s) error %v does not wrap ErrKeyInvalid", c.body, err)
		}
	}
}

// FuzzJSONLookup checks that whatever a handler decoding the body with
// encoding/json reads is what the middleware locks: when the lookup yields a
// key and a handler decodes the same body into an integer or string field,
// the handler's value spells the key.
func FuzzJSONLookup(f *testing.F) {
	for _, s := range []string{
		`{"order":{"id":"A1"}}`, `{"ORDER":{"ID":"victim"}}`, `{"order":{"id":"decoy"},"ORDER":{"ID":"victim"}}`,
		`{"order":{"id":-0}}`, `{"order":{"id":4.2e1}}`, `{"order":{"id":9223372036854775807}}`,
		`{"order":{"id":1E2}}`, `{"oRdEr":{"iD":"\u017f"}}`, `{"order":{"id":"x","\u212a":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		key, err := jsonLookup(body, []string{"order", "id"})
		if err != nil || key == "" {
			return
		}
		var asInt struct {
			Order struct {
				ID int64 `json:"id"`
			} `json:"order"`
		}
		if json.Unmarshal(body, &asInt) == nil {
			if got := strconv.FormatInt(asInt.Order.ID, 10); got != key {
				t.Fatalf("body %s: handler reads int %s, middleware locks %q", body, got, key)
			}
		}
		var asString struct {
			Order struct {
				ID string `json:"id"`
			} `json:"order"`
		}
		if json.Unmarshal(body, &asString) == nil && asString.Order.ID != key {
			t.Fatalf("body %s: handler reads string %q, middleware locks %q", body, asString.Order.ID, key)
		}
	})
}
