package grpclock_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestNilClient: Mutexes and FairMutexes given a nil client panic at
// startup with a message that names the mistake, as the interceptors do on
// other invalid options, not with a nil pointer dereference from inside
// scriptlock.
func TestNilClient(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"Mutexes":     func() { grpclock.Mutexes(nil) },
		"FairMutexes": func() { grpclock.FairMutexes(nil) },
	} {
		p := panics(f)
		if msg := fmt.Sprint(p); !strings.HasPrefix(msg, "grpclock: ") || !strings.Contains(msg, "nil") {
			t.Errorf("%s(nil) panicked with %q, want a grpclock error naming the nil client", name, msg)
		}
	}
}
