package failover_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Every Client a test creates is closed at its end, and Close must stop every
// goroutine the Client started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, redistest.LeakOptions()...)
}
