package gen

import (
	"context"
	"strconv"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The checker's advice for a fraction returned as @return float64 is
// string.format('%.17g', x): the server gives back the exact double, where
// tostring keeps 14 significant digits.
func TestFloatReturnAdviceAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	eval := func(src string) float64 {
		t.Helper()
		s, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(0).Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if got := eval("return string.format('%.17g', 1 / 3)"); got != 1.0/3 {
		t.Errorf("string.format('%%.17g', 1 / 3) reads back as %v, want %v", got, 1.0/3)
	}
	if got := eval("return tostring(1 / 3)"); got == 1.0/3 {
		t.Errorf("tostring(1 / 3) reads back exactly; the advice against it is wrong")
	}
}
