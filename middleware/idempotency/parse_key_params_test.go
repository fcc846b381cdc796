package idempotency_test

import (
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestParseKeyParameters: the draft's Idempotency-Key is an sf-string Item,
// which RFC 8941 lets carry parameters; unknown parameters are ignored, so
// the key is the string alone. Parameters that RFC 8941 would not parse
// make the value malformed, as does anything else after the string.
func TestParseKeyParameters(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`"k1";p=1`, `"k1";p`, `"k1";p=?0`, `"k1"; p=1;q="x;y\""`, `"k1";a=tok/en:x;b=-1.5;c=:aGk=:`,
		`"k1";*x.y_z-1=2`, ` "k1";p=1 `, `"k1";p=@1700000000`, `"k1";d=%"caf%c3%a9"`,
	} {
		if got, err := idempotency.ParseKey(in, 0); err != nil || got != "k1" {
			t.Errorf("ParseKey(%q) = %q, %v; want k1", in, got, err)
		}
	}
	for _, in := range []string{
		`"k1";`, `"k1";P=1`, `"k1";1=1`, `"k1";p=`, `"k1";p= 1`, `"k1" ;p=1`, `"k1";p=1;`, `"k1";p="x`,
		`"k1";p=1 q`, "\"k1\";p=:aG\nk=:", `"k1";p=?2`, `"k1";p=:not base64:`, `"k1",  "k2"`, `"k1";p=(1 2)`, `"k1";p=1.2345`, `"k1";d=%"caf%C3%A9"`, `"k1";p=@1.5`,
	} {
		if got, err := idempotency.ParseKey(in, 0); !errors.Is(err, idempotency.ErrKeyInvalid) {
			t.Errorf("ParseKey(%q) = %q, %v; want ErrKeyInvalid", in, got, err)
		}
	}
	// A bare key (no string) is taken as sent, ';' and all, as before.
	if got, err := idempotency.ParseKey(`k1;p=1`, 0); err != nil || got != "k1;p=1" {
		t.Errorf("bare key with ';' = %q, %v; want it whole", got, err)
	}
}
