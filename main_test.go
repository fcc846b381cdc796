package scriptlock

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/exampleredis"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Every Client a test creates is closed at its end, and Close must stop every
// goroutine the Client started: watchdog, subscriptions, guard refreshes.
// The Example functions run against three redis-servers started here (the
// RedLock example needs three independent ones).
func TestMain(m *testing.M) {
	exampleredis.Main(m, 3, redistest.LeakOptions()...)
}
