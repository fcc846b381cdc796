package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// breakBeside sends, on a link slowed to oneWay each way, a call alone on
// rc's connection whose deadline is shorter than its round trip: when the
// deadline passes rueidis breaks the connection, failing every call queued
// behind it with context.DeadlineExceeded. It returns once the call is on
// its way; the channel closes when it failed.
func breakBeside(px *netproxy.Proxy, rc rueidis.Client, oneWay time.Duration) <-chan struct{} {
	px.Delay(oneWay)
	done := make(chan struct{})
	go func() {
		defer close(done)
		short, cancel := context.WithTimeout(context.Background(), oneWay)
		defer cancel()
		rc.Do(short, rc.B().Ping().Build())
	}()
	time.Sleep(oneWay / 4)
	return done
}

// The counted calls (a semaphore's Release, a permit's Release and Extend, a
// latch's CountDown) beside another call's deadline on a slow link, also on
// a rueidis client with its retries off: each is made again within its
// bound, and counts once. A permit's Extend on such a client failed with
// "context deadline exceeded" (so it did on any broken connection) while
// its context and the lease it asked for had long to run.
func TestCountedBesideForeignDeadline(t *testing.T) {
	t.Parallel()
	const oneWay = 200 * time.Millisecond
	for _, kind := range []string{"SemaphoreRelease", "PermitRelease", "PermitExtend", "CountDown"} {
		for _, noRetry := range []bool{false, true} {
			name := kind
			if noRetry {
				name += "/DisableRetry"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				node := redistest.Server(t)
				px := netproxy.New(t, node.Addr)
				rc := px.Client(t)
				if noRetry {
					var err error
					rc, err = rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{px.Addr}, DisableCache: true, DisableRetry: true, PipelineMultiplex: -1})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(rc.Close)
				}
				c := newTestClient(t, rc)
				ctx := testCtx(t, 20*time.Second)
				var call func() error
				var check func() error
				switch kind {
				case "SemaphoreRelease":
					s, err := c.Semaphore("s")
					if err != nil {
						t.Fatal(err)
					}
					if _, err := s.TrySetPermits(ctx, 1); err != nil {
						t.Fatal(err)
					}
					if err := s.Acquire(ctx, 1); err != nil {
						t.Fatal(err)
					}
					if err := s.Release(ctx, 1); err != nil {
						t.Fatal(err)
					}
					if err := s.Acquire(ctx, 1); err != nil {
						t.Fatal(err)
					}
					call = func() error { return s.Release(ctx, 1) }
					check = func() error {
						n, err := s.AvailablePermits(ctx)
						if err == nil && n != 1 {
							t.Errorf("%d permits available, want 1", n)
						}
						return err
					}
				case "PermitRelease", "PermitExtend":
					s, err := c.PermitSemaphore("s")
					if err != nil {
						t.Fatal(err)
					}
					if _, err := s.TrySetPermits(ctx, 1); err != nil {
						t.Fatal(err)
					}
					id, err := s.Acquire(ctx, time.Minute)
					if err != nil {
						t.Fatal(err)
					}
					if err := s.Extend(ctx, id, time.Minute); err != nil {
						t.Fatal(err)
					}
					if err := s.Release(ctx, id); err != nil {
						t.Fatal(err)
					}
					if id, err = s.Acquire(ctx, time.Minute); err != nil {
						t.Fatal(err)
					}
					if kind == "PermitRelease" {
						call = func() error { return s.Release(ctx, id) }
					} else {
						call = func() error { return s.Extend(ctx, id, time.Minute) }
					}
					check = func() error {
						st, err := s.State(ctx)
						want := PermitState{Available: 1}
						if kind == "PermitExtend" {
							want = PermitState{Held: 1}
						}
						if err == nil && st != want {
							t.Errorf("state %+v, want %+v", st, want)
						}
						return err
					}
				case "CountDown":
					l, err := c.CountDownLatch("l")
					if err != nil {
						t.Fatal(err)
					}
					if _, err := l.TrySetCount(ctx, 3); err != nil {
						t.Fatal(err)
					}
					if err := l.CountDown(ctx); err != nil {
						t.Fatal(err)
					}
					call = func() error { return l.CountDown(ctx) }
					check = func() error {
						n, err := l.Count(ctx)
						if err == nil && n != 1 {
							t.Errorf("count %d, want 1", n)
						}
						return err
					}
				}
				done := breakBeside(px, rc, oneWay)
				start := time.Now()
				err := call()
				<-done
				if err != nil {
					t.Fatalf("%s failed after %v: %v", kind, time.Since(start).Round(time.Millisecond), err)
				}
				px.Delay(0)
				if err := check(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
