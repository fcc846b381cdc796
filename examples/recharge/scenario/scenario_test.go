package scenario_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/scenario"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

func newLocks(t *testing.T, node *redistest.Node) *scriptlock.Client {
	t.Helper()
	locks, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locks.Close() })
	return locks
}

// The demo's scenario on a real redis-server: every burst of concurrent
// duplicates credits its order exactly once, over HTTP, over gRPC, and with
// each order's duplicates split between the two front ends.
func TestDuplicatesCreditedExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testDuplicatesCreditedExactlyOnce(t, b) })
	}
}

func testDuplicatesCreditedExactlyOnce(t *testing.T, b backend) {
	node := redistest.Server(t)
	locks := newLocks(t, node)
	for _, tr := range []scenario.Transport{scenario.HTTP, scenario.GRPC, scenario.Both} {
		t.Run(strings.ReplaceAll(string(tr), "+", "_"), func(t *testing.T) {
			rep, err := scenario.Run(t.Context(), scenario.Config{
				Transport: tr, Locks: locks, Dir: t.TempDir(), OpenStore: b.open(t), Orders: 30, Duplicates: 10,
				// A burst's duplicates take the lock one after the other;
				// on a loaded machine ten of them outlast the default 5 s
				// wait. A wait that runs out makes its last attempt as it
				// ends, and one the server does not answer within 100 ms
				// more is answered 503 (the lock service did not answer),
				// which is final, not 409. Waits that do not run out keep
				// every answer 200 without changing what is checked.
				Wait: 20 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.ExactlyOnce() {
				t.Fatalf("not exactly once: %d credits for %d orders (per order %v), balance %d, expected %d, %d paid",
					rep.Credits, rep.Orders, rep.CreditsPerOrder, rep.Actual, rep.Expected, rep.PaidOrders)
			}
			if rep.Requests != 300 || rep.Credits+rep.Already != 300 {
				t.Fatalf("%d requests, %d credited + %d already processed; answers %v", rep.Requests, rep.Credits, rep.Already, rep.Codes)
			}
			if rep.Lock.Acquired < 300 || rep.Lock.Waited == 0 {
				t.Fatalf("lock stats %+v: every request should take the lock, and duplicates wait for it", rep.Lock)
			}
			if rep.Stale != 0 {
				t.Fatalf("%d stale writes without any lease running out", rep.Stale)
			}
		})
	}
}

// Without the lock the same bursts credit orders more than once; this is
// what the demo's unsafe rows show. Only the direction is asserted: how many
// duplicates overlap depends on scheduling.
func TestUnsafeDoubleCredits(t *testing.T) {
	rep, err := scenario.Run(t.Context(), scenario.Config{
		Transport: scenario.HTTP, Unsafe: true, Dir: t.TempDir(), Orders: 20, Duplicates: 10,
		Work: recharge.RandomWork(20*time.Millisecond, 30*time.Millisecond),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Credits <= int64(rep.Orders) || rep.Actual <= rep.Expected {
		t.Fatalf("unsafe run credited %d times for %d orders (balance %d, expected %d): no double credit shown",
			rep.Credits, rep.Orders, rep.Actual, rep.Expected)
	}
	if rep.Actual != sumCredited(rep) {
		t.Fatalf("balance %d does not match the credits answered (%d)", rep.Actual, sumCredited(rep))
	}
}

func sumCredited(rep *scenario.Report) int64 {
	var sum int64
	for id, n := range rep.CreditsPerOrder {
		sum += int64(n) * scenario.Amount(int(id))
	}
	return sum
}

// Redis dies in the middle of the bursts: requests that held their lock
// finish, the others answer 503 / Unavailable promptly, and no order is
// credited twice.
func TestRedisDownMidRun(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testRedisDownMidRun(t, b) })
	}
}

func testRedisDownMidRun(t *testing.T, b backend) {
	for _, tr := range []scenario.Transport{scenario.HTTP, scenario.GRPC} {
		t.Run(string(tr), func(t *testing.T) {
			node := redistest.Server(t)
			locks := newLocks(t, node)
			var (
				answered atomic.Int64
				kill     sync.Once
				killedAt atomic.Int64
			)
			const orders, dups = 40, 5
			start := time.Now()
			rep, err := scenario.Run(t.Context(), scenario.Config{
				Transport: tr, Locks: locks, Dir: t.TempDir(), OpenStore: b.open(t), Orders: orders, Duplicates: dups,
				Parallel: 8, Wait: time.Second,
				OnRequest: func(int64, scenario.Answer) {
					if answered.Add(1) == orders*dups/3 {
						kill.Do(func() {
							node.Kill()
							killedAt.Store(int64(time.Since(start)))
						})
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if killedAt.Load() == 0 {
				t.Fatal("Redis was never killed")
			}
			for id, n := range rep.CreditsPerOrder {
				if n > 1 {
					t.Errorf("order %d credited %d times", id, n)
				}
			}
			if rep.Actual != rep.PaidAmount || rep.Credits != rep.PaidOrders {
				t.Errorf("balance %d for paid orders worth %d; %d credits answered for %d paid orders",
					rep.Actual, rep.PaidAmount, rep.Credits, rep.PaidOrders)
			}
			ok, unavailable := "200", "503"
			if tr == scenario.GRPC {
				ok, unavailable = "OK", "Unavailable"
			}
			for code, n := range rep.Codes {
				if code != ok && code != unavailable {
					t.Errorf("%d answers %s; want only %s and %s (all answers %v)", n, code, ok, unavailable, rep.Codes)
				}
			}
			if rep.Codes[unavailable] == 0 || rep.PaidOrders == 0 || rep.PaidOrders == orders {
				t.Errorf("answers %v, %d of %d orders paid: Redis did not go down mid-run", rep.Codes, rep.PaidOrders, orders)
			}
			// Failing fast: after the kill, the rest of the run took at most
			// about one lock wait per wave of bursts, not a lease.
			if after := rep.Elapsed - time.Duration(killedAt.Load()); after > 15*time.Second {
				t.Errorf("run went on %s after Redis died", after)
			}
			t.Logf("%s: %d paid of %d, answers %v, %s after the kill", tr, rep.PaidOrders, orders, rep.Codes,
				(rep.Elapsed - time.Duration(killedAt.Load())).Round(time.Millisecond))
		})
	}
}
