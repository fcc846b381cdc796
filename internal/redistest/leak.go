package redistest

import "go.uber.org/goleak"

// LeakOptions returns the goleak options that tests using this package's
// clients and servers need: rueidis's cluster client closes connections it
// replaced during a topology refresh from a goroutine that sleeps 5 s first,
// and a refresh it defers after a redirection sleeps up to a second in a
// goroutine of its own (singleflight's DelayDo); either may outlive a closed
// client; and IgnoreReaper. Use it as
//
//	goleak.VerifyTestMain(m, redistest.LeakOptions()...)
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2"),
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1"),
		IgnoreReaper(),
	}
}

// IgnoreReaper ignores the goroutine that reaps a restarted server's process:
// it belongs to the harness and lives as long as the server.
func IgnoreReaper() goleak.Option {
	return goleak.IgnoreAnyFunction("github.com/scriptlock/scriptlock/internal/redistest.(*Node).startOnce.func1")
}
