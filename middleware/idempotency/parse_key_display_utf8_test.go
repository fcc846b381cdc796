package idempotency_test

import (
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestParseKeyDisplayStringUTF8: a display string parameter (RFC 9651) whose
// percent-encoded bytes are not UTF-8 does not parse, so the value is
// malformed, as RFC 9651 has a parser fail on it; valid UTF-8 parses.
func TestParseKeyDisplayStringUTF8(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"k1";d=%"%ff"`, `"k1";d=%"caf%c3"`, `"k1";d=%"%c3%28"`, `"k1";d=%"%ed%a0%80"`} {
		if got, err := idempotency.ParseKey(in, 0); !errors.Is(err, idempotency.ErrKeyInvalid) {
			t.Errorf("ParseKey(%q) = %q, %v; want ErrKeyInvalid", in, got, err)
		}
	}
	for _, in := range []string{`"k1";d=%"%e2%82%ac 5"`, `"k1";d=%""`} {
		if got, err := idempotency.ParseKey(in, 0); err != nil || got != "k1" {
			t.Errorf("ParseKey(%q) = %q, %v; want k1", in, got, err)
		}
	}
}
