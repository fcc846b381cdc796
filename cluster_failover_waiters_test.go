package scriptlock

import (
	"slices"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestClusterFailoverWaitersEveryKind is TestClusterFailoverWhileHeld for
// the other kinds: a FairMutex, both sides of an RWMutex, a Semaphore and a
// PermitSemaphore held on one Client and waited for on another, when every
// primary serving them hands over to its replica (CLUSTER FAILOVER). Each
// waiter, subscribed on the demoted primary, takes what the holder gives
// back on the promoted replica soon after, not at its fallback timer (two
// minutes), and a lock's fencing token there is above the holder's.
func TestClusterFailoverWaitersEveryKind(t *testing.T) {
	t.Parallel()
	holderAndWaiterOnCluster(t, func(t *testing.T, cl *redistest.ClusterT, h, w *Client, _ bool) {
		ctx := testCtx(t, 100*time.Second)

		type pair struct {
			name   string
			key    string
			hold   func() (release func() error, token int64, err error)
			wait   func() (token int64, err error)
			isLock bool
		}
		lockPair := func(name string, hl, wl Locker, key string) pair {
			return pair{name: name, key: key, isLock: true,
				hold: func() (func() error, int64, error) {
					l, err := hl.Lock(ctx)
					if err != nil {
						return nil, 0, err
					}
					tok, _ := Fence(l)
					return func() error { return hl.Unlock(l) }, tok, nil
				},
				wait: func() (int64, error) {
					l, err := wl.Lock(ctx)
					if err != nil {
						return 0, err
					}
					tok, _ := Fence(l)
					return tok, wl.Unlock(l)
				}}
		}
		var pairs []pair
		hf, wf := mustFair(t, h, "fo-fair"), mustFair(t, w, "fo-fair")
		pairs = append(pairs, lockPair("FairMutex", hf, wf, hf.Key()))
		hrw, err := h.RWMutex("fo-rw-w")
		if err != nil {
			t.Fatal(err)
		}
		wrw, err := w.RWMutex("fo-rw-w")
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, lockPair("RWMutex write", hrw, wrw, hrw.Key()))
		hrr, err := h.RWMutex("fo-rw-r")
		if err != nil {
			t.Fatal(err)
		}
		wrr, err := w.RWMutex("fo-rw-r")
		if err != nil {
			t.Fatal(err)
		}
		read := lockPair("RWMutex read after write", hrr, wrr.RLocker(), hrr.Key())
		read.isLock = false // read holds carry no fencing token
		pairs = append(pairs, read)
		hs, err := h.Semaphore("fo-sem")
		if err != nil {
			t.Fatal(err)
		}
		ws, err := w.Semaphore("fo-sem")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hs.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, pair{name: "Semaphore", key: hs.Key(),
			hold: func() (func() error, int64, error) {
				if err := hs.Acquire(ctx, 1); err != nil {
					return nil, 0, err
				}
				return func() error { return hs.Release(ctx, 1) }, 0, nil
			},
			wait: func() (int64, error) {
				if err := ws.Acquire(ctx, 1); err != nil {
					return 0, err
				}
				return 0, ws.Release(ctx, 1)
			}})
		hp, err := h.PermitSemaphore("fo-permit")
		if err != nil {
			t.Fatal(err)
		}
		wp, err := w.PermitSemaphore("fo-permit")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hp.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, pair{name: "PermitSemaphore", key: hp.Key(),
			hold: func() (func() error, int64, error) {
				id, err := hp.Acquire(ctx, 2*time.Minute)
				if err != nil {
					return nil, 0, err
				}
				return func() error { return hp.Release(ctx, id) }, 0, nil
			},
			wait: func() (int64, error) {
				id, err := wp.Acquire(ctx, 2*time.Minute)
				if err != nil {
					return 0, err
				}
				return 0, wp.Release(ctx, id)
			}})

		releases := make([]func() error, len(pairs))
		tokens := make([]int64, len(pairs))
		for i, p := range pairs {
			rel, tok, err := p.hold()
			if err != nil {
				t.Fatalf("%s: holder: %v", p.name, err)
			}
			releases[i], tokens[i] = rel, tok
		}
		type woke struct {
			at    time.Time
			token int64
			err   error
		}
		woken := make([]chan woke, len(pairs))
		for i, p := range pairs {
			woken[i] = make(chan woke, 1)
			go func() {
				tok, err := p.wait()
				woken[i] <- woke{time.Now(), tok, err}
			}()
		}
		// The waiters are asleep on their subscriptions.
		time.Sleep(2 * time.Second)
		var from []*redistest.Node
		for _, p := range pairs {
			if n := cl.NodeFor(t, p.key); !slices.Contains(from, n) {
				from = append(from, n)
			}
		}
		for _, p := range from {
			failOver(t, cl, p)
		}
		time.Sleep(3 * time.Second)
		for i, p := range pairs {
			select {
			case r := <-woken[i]:
				t.Fatalf("%s: the waiter returned before the release: %v", p.name, r.err)
			default:
			}
			released := time.Now()
			if err := releases[i](); err != nil {
				t.Fatalf("%s: release after the failover: %v", p.name, err)
			}
			select {
			case r := <-woken[i]:
				if r.err != nil {
					t.Errorf("%s: the waiter: %v", p.name, r.err)
				} else if d := r.at.Sub(released); d > 5*time.Second {
					t.Errorf("%s: the waiter took it %v after its release: not woken by the release message", p.name, d.Round(time.Millisecond))
				}
				if p.isLock && r.err == nil && r.token <= tokens[i] {
					t.Errorf("%s: the waiter's token %d not above the holder's %d", p.name, r.token, tokens[i])
				}
			case <-time.After(20 * time.Second):
				t.Errorf("%s: the waiter has not taken it 20 s after its release (%s)", p.name, released.Format(time.StampMilli))
			}
		}
	})
}
