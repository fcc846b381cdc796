package redistest

import "go.uber.org/goleak"

// LeakOptions returns the goleak options that tests using this package's
// clients need: rueidis's cluster client closes connections it replaced
// during a topology refresh from a goroutine that sleeps 5 s first, and that
// goroutine may outlive a closed client. Use it as
//
//	goleak.VerifyTestMain(m, redistest.LeakOptions()...)
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2"),
	}
}
