package scriptlock

import (
	"context"
	"testing"
)

// Fence, FenceOf and OwnerFrom read a context the caller may not have: a nil
// one carries no token and no owner, as every other function given a nil
// context refuses it rather than panic.
func TestFenceOwnerNilContext(t *testing.T) {
	var ctx context.Context
	for _, c := range []struct {
		what string
		read func() (any, bool)
	}{
		{"Fence", func() (any, bool) { return Fence(ctx) }},
		{"FenceOf", func() (any, bool) { return FenceOf(ctx, "m") }},
		{"OwnerFrom", func() (any, bool) { return OwnerFrom(ctx) }},
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s(nil) panicked: %v", c.what, p)
				}
			}()
			if v, ok := c.read(); ok {
				t.Errorf("%s(nil) = %v, true; want none", c.what, v)
			}
		}()
	}
}
