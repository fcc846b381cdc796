package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A PermitSemaphore Extend whose connection breaks under it once the lease
// it asks for has passed is not sent again, with rueidis's retries on as
// with them off, and under the failover guard: it is made again within its
// context and that lease, at most three times in all. rueidis made it again
// itself (the script was retryable) for as long as its context lasted, and
// so did the guard's repeats.
func TestPermitExtendNoRepeatPastLease(t *testing.T) {
	t.Parallel()
	const lease = 1234 * time.Millisecond
	for _, guarded := range []bool{false, true} {
		name := "Unguarded"
		if guarded {
			name = "Guarded"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var node *redistest.Node
			var opts []Option
			if guarded {
				node, _ = redistest.Replicated(t)
				opts = append(opts, WithFailoverGuard(true, 2*time.Second))
			} else {
				node = redistest.Server(t)
			}
			px := netproxy.New(t, node.Addr)
			c := newTestClient(t, px.Client(t), opts...)
			if guarded {
				c.guardStall = 5 * time.Second
			}
			ctx := testCtx(t, 60*time.Second)
			s, err := c.PermitSemaphore("p")
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
			if err := s.Extend(ctx, id, time.Minute); err != nil { // script loaded
				t.Fatal(err)
			}
			px.HoldOn("\r\n1234\r\n")
			extended := make(chan error, 1)
			go func() { extended <- s.Extend(ctx, id, lease) }()
			for deadline := time.Now().Add(5 * time.Second); !px.HeldOn(); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the Extend never reached the proxy")
				}
			}
			time.Sleep(lease + 200*time.Millisecond)
			before := evalshaCalls(t, node)
			px.CutHeld()
			err = <-extended
			if after := evalshaCalls(t, node); after != before {
				t.Fatalf("Extend (%v) sent its script again %d time(s) after the lease it asked for had passed", err, after-before)
			}
			if err == nil {
				t.Fatal("Extend whose connection broke after its lease had passed succeeded")
			}
		})
	}
}
