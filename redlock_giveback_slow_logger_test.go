package scriptlock

import (
	"testing"
	"time"
)

// TestRedLockGiveBackNotHeldUpByLogger: a RedLock that loses its quorum
// gives back the nodes that still hold it however long the logger takes to
// write the loss: they were given back only once the record was written, so
// with a log sink that stalled their watchdogs renewed them for as long as
// it stalled, a lock nobody owned any more keeping those nodes from others.
func TestRedLockGiveBackNotHeldUpByLogger(t *testing.T) {
	t.Parallel()
	nodes, r := loseRedLockQuorumLoggerStuck(t, "job-stuck-log-giveback")
	key := r.nodes[0].Key()
	limit := time.Now().Add(2 * stuckLogLease)
	for {
		n, err := nodes[0].Do(t, "EXISTS", key).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(limit) {
			t.Fatalf("the node still holding the lost RedLock kept it %s after the loss (renewed by its watchdog), the logger's write of the loss stuck", 2*stuckLogLease)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
