package echolock

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// TestJSONLookupWrapsCause: a body the json: lookup cannot read fails with
// an error that wraps both ErrKeyInvalid and the decoder's own error, so an
// ErrorHandler (which gets it as the HTTPError's Internal) can tell what was
// wrong with the body.
func TestJSONLookupWrapsCause(t *testing.T) {
	t.Parallel()
	path := []string{"order", "id"}
	syntax := func(err error) bool {
		var se *json.SyntaxError
		return errors.As(err, &se)
	}
	for _, c := range []struct {
		body  string
		cause func(error) bool
	}{
		{`{"order":{"id":"x"}`, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }}, // cut short
		{`{"order":{"id":tru}}`, syntax},
		{`{"order":{"id":1,}}`, syntax},
	} {
		_, err := jsonLookup([]byte(c.body), path)
		if !errors.Is(err, core.ErrKeyInvalid) || !c.cause(err) {
			t.Errorf("jsonLookup(%s): %v, want ErrKeyInvalid wrapping the decoder's error", c.body, err)
		}
	}
	// Not an integer, and beyond float64: 1.000…0001e400.
	huge := "1." + strings.Repeat("0", 420) + "1e400"
	_, err := canonicalNumber(huge)
	if !errors.Is(err, core.ErrKeyInvalid) || !errors.Is(err, strconv.ErrRange) {
		t.Errorf("canonicalNumber(%.20s…): %v, want ErrKeyInvalid wrapping strconv.ErrRange", huge, err)
	}
}
