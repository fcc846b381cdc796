package scriptlock

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/internal/exampleredis"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Every Client a test creates is closed at its end, and Close must stop every
// goroutine the Client started: watchdog, subscriptions, guard refreshes.
// The Example functions run against three redis-servers started here (the
// RedLock example needs three independent ones).
func TestMain(m *testing.M) {
	exampleredis.Main(m, 3, append(redistest.LeakOptions(),
		// The harness reaps restarted servers from a goroutine of its own.
		goleak.IgnoreAnyFunction("github.com/scriptlock/scriptlock/internal/redistest.(*Node).startOnce.func1"),
	)...)
}
