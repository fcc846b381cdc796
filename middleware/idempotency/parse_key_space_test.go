package idempotency_test

import (
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestParseKeyOuterNonASCII: only the blanks HTTP puts around a field value
// (spaces and tabs) are trimmed from a key. A key that ends or begins with
// another Unicode space (no-break space, next line) holds bytes outside
// printable ASCII and is refused like any other: it was trimmed into a
// valid key, the same as the one without it.
func TestParseKeyOuterNonASCII(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"k1\u00a0", "\u00a0k1", "k1\u0085", "\u2003k1", "k1\u3000"} {
		if got, err := idempotency.ParseKey(in, 0); !errors.Is(err, idempotency.ErrKeyInvalid) {
			t.Errorf("ParseKey(%q) = %q, %v; want ErrKeyInvalid", in, got, err)
		}
	}
	if got, err := idempotency.ParseKey(" \tk1\t ", 0); err != nil || got != "k1" {
		t.Errorf("ParseKey with blanks around it = %q, %v; want k1", got, err)
	}
}
