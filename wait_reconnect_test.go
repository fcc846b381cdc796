package scriptlock

import (
	"testing"
	"time"
)

// A release announced while the waiter's pub/sub connection is broken is
// lost to it; rueidis subscribes again on a new connection without telling
// Receive's caller. Once that subscription is confirmed the waiter calls
// again at once rather than sleep until its fallback (here 10 s: a third of
// the waiter timeout, the holder's lease being longer).
func TestWaiterRechecksAfterPubSubReconnect(t *testing.T) {
	t.Parallel()
	kinds := []struct {
		name string
		hold func(t testing.TB, c *Client, n string) Locker
		wait func(t testing.TB, c *Client, n string) Locker
	}{
		{"Mutex", func(t testing.TB, c *Client, n string) Locker { return mustMutex(t, c, n) },
			func(t testing.TB, c *Client, n string) Locker { return mustMutex(t, c, n) }},
		{"RWMutexReader", func(t testing.TB, c *Client, n string) Locker { return mustRW(t, c, n) },
			func(t testing.TB, c *Client, n string) Locker { return mustRW(t, c, n).RLocker() }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			p := newProxied(t, WithWaiterTimeout(30*time.Second))
			h := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
			hl := k.hold(t, h, "reconnect")
			hctx, err := hl.Lock(testCtx(t, 5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			wl := k.wait(t, p.c, "reconnect")
			done := make(chan error, 1)
			go func() {
				lctx, err := wl.Lock(testCtx(t, 30*time.Second))
				if err == nil {
					err = wl.Unlock(lctx)
				}
				done <- err
			}()
			time.Sleep(300 * time.Millisecond) // subscribed, sleeping
			p.px.Freeze()
			p.px.DropAll()
			if err := hl.Unlock(hctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			p.px.Thaw()
			thawed := time.Now()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("wait: %v", err)
				}
				t.Logf("through %s after the connection came back", time.Since(thawed).Round(time.Millisecond))
			case <-time.After(2 * time.Second):
				t.Fatal("waiter not through 2s after its subscription was made again: it missed the release and slept until its fallback")
			}
		})
	}
}
