package scriptlock

import (
	"testing"
	"time"
)

// Permits released while the waiters' pub/sub connection is broken are
// announced to nobody on this Client. Once rueidis has subscribed again on a
// new connection every waiter calls again, and as many as the permits
// released acquire, well before their fallback poll.
func TestSemaphoreWaitersRecheckAfterPubSubReconnect(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	h := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)
	s, hs := mustSem(t, p.c, "reconnect"), mustSem(t, h, "reconnect")
	got := make(chan int64, 3)
	for range 3 {
		go func() {
			if err := s.Acquire(ctx, 1); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			got <- 1
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); waitersOn(p.c, s.channel) < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 waiters registered", waitersOn(p.c, s.channel))
		}
	}
	time.Sleep(300 * time.Millisecond) // subscribed, asleep
	p.px.Freeze()
	p.px.DropAll()
	if err := hs.Release(ctx, 2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	p.px.Thaw()
	thawed := time.Now()
	for i := range 2 {
		select {
		case <-got:
		case <-time.After(time.Until(thawed.Add(notifyFallback / 2))):
			t.Fatalf("2 permits released while the pub/sub connection was down: %d of 3 waiters acquired within %s of its coming back", i, notifyFallback/2)
		}
	}
	t.Logf("2 waiters through %s after the connection came back", time.Since(thawed).Round(time.Millisecond))
	select {
	case <-got:
		t.Fatal("a third waiter acquired with 2 permits")
	case <-time.After(50 * time.Millisecond):
	}
}
