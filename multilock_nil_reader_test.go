package scriptlock

import (
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The read side of a nil *RWMutex (its constructor failed, its error
// dropped) is a nil handle too: NewMultiLock refuses it with
// ErrInvalidArgument. It panicked reading the member's name.
func TestMultiLockNilReadSide(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	var nilRW *RWMutex
	for _, locks := range [][]Locker{{nilRW.RLocker()}, {mustMutex(t, c, "a"), nilRW.RLocker()}} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("NewMultiLock with a nil RWMutex's read side among %d members panicked: %v", len(locks), v)
				}
			}()
			if _, err := NewMultiLock(locks); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("NewMultiLock with a nil RWMutex's read side: %v, want ErrInvalidArgument", err)
			}
		}()
	}
}
