package idempotency

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// claimStore is a store on its own server, reached through a proxy that can
// freeze the network, with a short claim TTL.
func claimStore(t *testing.T, claimTTL time.Duration) (*Store, *redistest.Node, *netproxy.Proxy) {
	t.Helper()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	s, err := NewStore(px.Client(t), WithPrefix(redistest.Prefix(t)), WithClaimTTL(claimTTL), WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, node, px
}

func reserve(t *testing.T, s *Store, key string) *Claim {
	t.Helper()
	r, err := s.Reserve(context.Background(), "acct", key, "fp")
	if err != nil || r.State != Claimed {
		t.Fatalf("Reserve(%q) = %+v, %v; want Claimed", key, r, err)
	}
	return r.Claim
}

// warm makes the store's connection and loads its scripts: with a short
// store timeout the first Reserve on a loaded machine may miss it (its undo
// then holds that key), so it asks again under fresh keys.
func warm(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		r, err := s.Reserve(context.Background(), "acct", fmt.Sprint("warm-", i), "fp")
		if err == nil && r.State == Claimed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("warm-up Reserve = %+v, %v; want Claimed", r, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ended(t *testing.T, ctx context.Context, within time.Duration) time.Time {
	t.Helper()
	select {
	case <-ctx.Done():
		return time.Now()
	case <-time.After(within):
		t.Fatalf("claim context did not end within %s", within)
		return time.Time{}
	}
}

// A claim kept renewed leaves its context alone; a claim that Redis no
// longer has (deleted, or taken over after it expired) ends it at the next
// renewal (renewals every second), with cause ErrClaimLost, not at its loss
// deadline (at least 2 s after the delete).
func TestClaimLostWhenGone(t *testing.T) {
	t.Parallel()
	s, node, _ := claimStore(t, 3*time.Second)
	c := reserve(t, s, "gone")
	ctx, done := c.Context(context.Background())
	defer done()
	time.Sleep(4 * time.Second) // about four renewals, past the claim TTL
	if ctx.Err() != nil || c.Lost() {
		t.Fatalf("a renewed claim's context ended: %v", context.Cause(ctx))
	}
	node.Do(t, "DEL", s.keys("acct", "gone").record)
	start := time.Now()
	at := ended(t, ctx, 5*time.Second)
	if !errors.Is(context.Cause(ctx), ErrClaimLost) || !c.Lost() {
		t.Fatalf("cause %v (Lost %v), want ErrClaimLost", context.Cause(ctx), c.Lost())
	}
	c.mu.Lock()
	lossAt := c.lossAt
	c.mu.Unlock()
	if !at.Before(lossAt) {
		t.Fatalf("context ended %s after the record was deleted, at the loss deadline (%s after): no renewal noticed the claim gone",
			at.Sub(start), lossAt.Sub(start))
	}
	// A context asked for after the loss starts ended.
	late, done2 := c.Context(context.Background())
	defer done2()
	if !errors.Is(context.Cause(late), ErrClaimLost) {
		t.Fatalf("context after the loss: cause %v", context.Cause(late))
	}
}

// With the network frozen, no renewal is confirmed: the claim's context ends
// before the server can expire the claim (counted from the reply of a PTTL
// sent after the freeze), so a retry cannot claim the key while this
// request still believes it runs alone.
func TestClaimLossBeforeExpiry(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	s, node, px := claimStore(t, 900*time.Millisecond)
	c := reserve(t, s, "frozen")
	ctx, done := c.Context(context.Background())
	defer done()
	time.Sleep(400 * time.Millisecond) // one renewal confirmed
	px.Freeze()
	t.Cleanup(px.Thaw)
	time.Sleep(50 * time.Millisecond) // a renewal already past the proxy lands
	pttl, err := node.Do(t, "PTTL", s.keys("acct", "frozen").record).AsInt64()
	replied := time.Now()
	if err != nil || pttl <= 0 {
		t.Fatalf("PTTL of the running claim: %d, %v", pttl, err)
	}
	expiry := replied.Add(time.Duration(pttl) * time.Millisecond)
	c.mu.Lock()
	lossAt := c.lossAt
	c.mu.Unlock()
	if !lossAt.Before(expiry) {
		t.Fatalf("loss deadline %s after the server's expiry", lossAt.Sub(expiry))
	}
	at := ended(t, ctx, 5*time.Second)
	// When the timer fires is the scheduler's business on a loaded machine.
	if late := at.Sub(lossAt); late > 2*time.Second {
		t.Fatalf("context ended %s after its loss deadline", late)
	}
	if !errors.Is(context.Cause(ctx), ErrClaimLost) {
		t.Fatalf("cause %v, want ErrClaimLost", context.Cause(ctx))
	}
}

// Complete and Release end the claim's watch: its contexts are not ended
// with ErrClaimLost afterwards, though nothing renews the claim any more.
func TestClaimContextAfterComplete(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	s, _, _ := claimStore(t, 300*time.Millisecond)
	completed := reserve(t, s, "completed")
	released := reserve(t, s, "released")
	ctx1, done1 := completed.Context(context.Background())
	defer done1()
	ctx2, done2 := released.Context(context.Background())
	defer done2()
	if ok, err := completed.Complete(context.Background(), []byte("r")); !ok || err != nil {
		t.Fatalf("Complete: %v %v", ok, err)
	}
	if err := released.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(900 * time.Millisecond) // three claim TTLs
	for name, ctx := range map[string]context.Context{"completed": ctx1, "released": ctx2} {
		if ctx.Err() != nil {
			t.Errorf("%s claim's context ended: %v", name, context.Cause(ctx))
		}
	}
	done1()
	if !errors.Is(context.Cause(ctx1), context.Canceled) {
		t.Errorf("context after its done func: cause %v, want context.Canceled", context.Cause(ctx1))
	}
}

// A Complete whose request is lost with its connection returns the error and
// stores the response once Redis answers again; the key stays claimed
// meanwhile, so the request is never reserved a second time.
func TestCompleteRetriedAfterLostConnection(t *testing.T) {
	t.Parallel()
	s, _, px := claimStore(t, 10*time.Second)
	c := reserve(t, s, "K")
	px.Freeze()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if ok, err := c.Complete(ctx, []byte("charged")); err == nil || ok {
		t.Fatalf("Complete through a frozen network = %v, %v; want an error", ok, err)
	}
	px.DropAll() // the request never reaches Redis
	px.Thaw()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := s.Reserve(context.Background(), "acct", "K", "fp")
		switch {
		case err != nil:
		case r.State == Claimed:
			t.Fatalf("the request can run a second time: Reserve = Claimed after its Complete failed")
		case r.State == Done && string(r.Response) == "charged":
			return
		case r.State != InFlight:
			t.Fatalf("Reserve = %+v, want InFlight until the response is stored", r)
		}
		if time.Now().After(deadline) {
			t.Fatalf("response not stored within 5 s after the network came back (last: %+v, %v)", r, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RequestID is the same for every run of one request (same scope, key and
// fingerprint), whichever claim runs it, and differs for any other request;
// a context not from a claim has none, nor has a nil one (no panic).
func TestRequestID(t *testing.T) {
	t.Parallel()
	s, _, _ := claimStore(t, time.Second)
	ctx := context.Background()
	id := func(scope, key, fp string) string {
		t.Helper()
		r, err := s.Reserve(ctx, scope, key, fp)
		if err != nil || r.State != Claimed {
			t.Fatalf("Reserve(%q, %q, %q) = %+v, %v; want Claimed", scope, key, fp, r, err)
		}
		defer r.Claim.Release(ctx)
		hctx, done := r.Claim.Context(ctx)
		defer done()
		v, ok := RequestID(context.WithValue(hctx, derivedKey{}, 1))
		if !ok || v == "" {
			t.Fatalf("no RequestID in the claim's context")
		}
		return v
	}
	first := id("acct", "k", "fp")
	if again := id("acct", "k", "fp"); again != first {
		t.Errorf("retry of the request: RequestID %s, first run %s", again, first)
	}
	for _, other := range [][3]string{{"acct2", "k", "fp"}, {"acct", "k2", "fp"}, {"acct", "k", "fp2"}} {
		if v := id(other[0], other[1], other[2]); v == first {
			t.Errorf("request %q has the RequestID of another request", other)
		}
	}
	if v, ok := RequestID(ctx); ok {
		t.Errorf("RequestID of a context without a claim: %q", v)
	}
	var none context.Context
	if v, ok := RequestID(none); ok {
		t.Errorf("RequestID of a nil context: %q", v)
	}
}

// derivedKey marks a context derived from a claim's.
type derivedKey struct{}
