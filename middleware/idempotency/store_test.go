package idempotency_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

func newStore(t *testing.T, opts ...idempotency.Option) (*idempotency.Store, *redistest.Node, string) {
	t.Helper()
	node := redistest.Server(t)
	prefix := redistest.Prefix(t)
	s, err := idempotency.NewStore(node.Client(t), append([]idempotency.Option{idempotency.WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, node, prefix
}

func TestStore(t *testing.T) {
	t.Parallel()
	s, node, _ := newStore(t)
	ctx := context.Background()
	r, err := s.Reserve(ctx, "acct", "k1", "fp1")
	if err != nil || r.State != idempotency.Claimed {
		t.Fatalf("first Reserve = %+v, %v; want Claimed", r, err)
	}
	claim := r.Claim
	if r2, _ := s.Reserve(ctx, "acct", "k1", "fp1"); r2.State != idempotency.InFlight {
		t.Errorf("duplicate while running: %v, want InFlight", r2.State)
	}
	if r2, _ := s.Reserve(ctx, "acct", "k1", "fp2"); r2.State != idempotency.Mismatch {
		t.Errorf("other payload while running: %v, want Mismatch", r2.State)
	}
	if r2, _ := s.Reserve(ctx, "other", "k1", "fp2"); r2.State != idempotency.Claimed {
		t.Errorf("same key in another scope: %v, want Claimed", r2.State)
	} else {
		_ = r2.Claim.Release(ctx)
	}
	resp := []byte("\x00binary\xffresponse")
	if ok, err := claim.Complete(ctx, resp); !ok || err != nil {
		t.Fatalf("Complete = %v, %v", ok, err)
	}
	r3, err := s.Reserve(ctx, "acct", "k1", "fp1")
	if err != nil || r3.State != idempotency.Done || !bytes.Equal(r3.Response, resp) {
		t.Fatalf("after Complete: %+v, %v; want Done with the response", r3, err)
	}
	if r4, _ := s.Reserve(ctx, "acct", "k1", "fp2"); r4.State != idempotency.Mismatch {
		t.Errorf("other payload after completion: %v, want Mismatch", r4.State)
	}
	pttl, err := node.Do(t, "PTTL", s.RecordKey("acct", "k1")).AsInt64()
	if err != nil || pttl <= int64(23*time.Hour/time.Millisecond) {
		t.Errorf("record PTTL %d ms (%v), want about 24 h", pttl, err)
	}

	r5, _ := s.Reserve(ctx, "acct", "k2", "fp")
	if err := r5.Claim.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if r6, _ := s.Reserve(ctx, "acct", "k2", "fp"); r6.State != idempotency.Claimed {
		t.Errorf("after Release: %v, want Claimed", r6.State)
	} else if ok, _ := r6.Claim.Complete(ctx, nil); !ok {
		t.Error("Complete after re-claim failed")
	}
	if ok, _ := r5.Claim.Complete(ctx, []byte("late")); ok {
		t.Error("a released claim completed another request's record")
	}
}

func TestClaimRenewedWhileRunning(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	s, node, _ := newStore(t, idempotency.WithClaimTTL(300*time.Millisecond))
	ctx := context.Background()
	r, _ := s.Reserve(ctx, "", "slow", "fp")
	time.Sleep(time.Second)
	if r2, _ := s.Reserve(ctx, "", "slow", "fp"); r2.State != idempotency.InFlight {
		t.Fatalf("claim of a running request expired: %v", r2.State)
	}
	_ = r.Claim.Release(ctx)
	// A claim nobody renews (a crashed server) expires.
	r3, _ := s.Reserve(ctx, "", "crashed", "fp")
	r3.Claim.Complete(ctx, []byte("x")) // stops renewal
	node.Do(t, "HSET", s.RecordKey("", "crashed"), "state", "1")
	node.Do(t, "PEXPIRE", s.RecordKey("", "crashed"), "200")
	time.Sleep(400 * time.Millisecond)
	if r4, _ := s.Reserve(ctx, "", "crashed", "fp"); r4.State != idempotency.Claimed {
		t.Errorf("abandoned claim: %v, want Claimed after it expired", r4.State)
	} else {
		_ = r4.Claim.Release(ctx)
	}
}

// TestPrefixWithBracesRefused: a hash tag in the prefix would put every
// caller's records in one Cluster slot, and "{}" would spread one record's
// keys over several (CROSSSLOT in its scripts).
func TestPrefixWithBracesRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	for _, p := range []string{"app{1}:", "idem{}:", "a{", "a}"} {
		if _, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(p)); err == nil || !strings.Contains(err.Error(), "brace") {
			t.Errorf("NewStore with prefix %q: %v, want a refusal naming the brace", p, err)
		}
	}
	if _, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix("app:1:")); err != nil {
		t.Fatalf("NewStore with a plain prefix: %v", err)
	}
}

func TestRecordKeyEscaping(t *testing.T) {
	t.Parallel()
	if _, err := idempotency.NewStore(nil); err == nil {
		t.Fatal("nil client accepted")
	}
	s, _, prefix := newStore(t)
	a, b := s.RecordKey("a:b", "c"), s.RecordKey("a", "b:c")
	if a == b {
		t.Errorf("scopes/keys with ':' collide: %q", a)
	}
	if k := s.RecordKey("{x}", "{y}"); k != prefix+"{%7Bx%7D}:%7By%7D" {
		t.Errorf("RecordKey = %q", k)
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		`8e03978e-40d5-43e8-bc93-6894a57f9324`:   "8e03978e-40d5-43e8-bc93-6894a57f9324",
		`"8e03978e-40d5-43e8-bc93-6894a57f9324"`: "8e03978e-40d5-43e8-bc93-6894a57f9324",
		`"a\"b\\c"`:                              `a"b\c`,
		` k `:                                    "k",
	}
	for in, want := range good {
		if got, err := idempotency.ParseKey(in, 0); err != nil || got != want {
			t.Errorf("ParseKey(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{``, `""`, `"abc`, `"a"b"`, `"a\x"`, "a\x01", "é", string(bytes.Repeat([]byte("k"), 256))} {
		if _, err := idempotency.ParseKey(in, 0); !errors.Is(err, idempotency.ErrKeyInvalid) {
			t.Errorf("ParseKey(%q) err = %v, want ErrKeyInvalid", in, err)
		}
	}
}

func TestStoredResponseRoundTrip(t *testing.T) {
	t.Parallel()
	for _, r := range []idempotency.StoredResponse{
		{Status: 201, Header: []idempotency.HeaderField{{"Content-Type", "application/json"}, {"Location", "/x/1"}}, Body: []byte(`{"ok":true}`)},
		{Status: 0, Body: []byte{0, 1, 2}},
		{Status: 200, NotReplayable: true},
		{Status: 0, Header: []idempotency.HeaderField{{"x-a", "1"}}, Body: []byte("m"), Trailer: []idempotency.HeaderField{{"x-t", "2"}, {"x-t-bin", "\x00"}}},
		{Status: 5, Trailer: []idempotency.HeaderField{{"x-t", ""}}},
	} {
		got, err := idempotency.DecodeStoredResponse(r.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&r, got, cmp.Transformer("nilBytes", func(b []byte) string { return string(b) })); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func FuzzDecodeStoredResponse(f *testing.F) {
	f.Add((&idempotency.StoredResponse{Status: 200, Header: []idempotency.HeaderField{{"A", "b"}}, Body: []byte("x")}).Encode())
	f.Add((&idempotency.StoredResponse{Status: 0, Body: []byte("x"), Trailer: []idempotency.HeaderField{{"t", "v"}}}).Encode())
	f.Add([]byte{1, 0, 0xff})
	f.Add([]byte{1, 0x12, 0, 0, 1, 'x', 1, 1, 't', 1, 'v', 0xde, 0xad})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := idempotency.DecodeStoredResponse(b)
		if err != nil {
			return
		}
		enc := r.Encode()
		if b[1]&0xf0 != 0 {
			// Optional sections of a later version are dropped: what
			// this version knows re-encodes as the record's start.
			if len(enc) > len(b) || enc[1] != b[1]&0x0f || !bytes.Equal(enc[2:], b[2:len(enc)]) {
				t.Fatalf("decoded %x with optional sections but re-encodes as %x", b, enc)
			}
			return
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("decoded %x but re-encodes differently", b)
		}
	})
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	if idempotency.Fingerprint([]byte("ab"), []byte("c")) == idempotency.Fingerprint([]byte("a"), []byte("bc")) {
		t.Error("parts are not delimited")
	}
}

// TestReleaseBeforeReserve: a release that reaches Redis before the
// reservation it undoes (they may travel on different connections) marks
// its token released, so the late reservation claims nothing while another request's
// reservation takes the key.
func TestReleaseBeforeReserve(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := node.Client(t)
	ctx := context.Background()
	p := redistest.Prefix(t) + "{s}"
	key, usage, sizes := p+":k", p+"#usage", p+"#sizes"
	released := func(token string) string { return p + "#released:" + token }
	if n, err := generated.IdempotencyRelease(ctx, c, key, usage, sizes, released("late"), "late", time.Minute, false); err != nil || n != 0 {
		t.Fatalf("release of an absent record: %d, %v", n, err)
	}
	r, err := generated.IdempotencyReserve(ctx, c, key, usage, sizes, released("late"), "fp", "late", time.Minute, 0, 256)
	if err != nil || r.State != 3 {
		t.Fatalf("late reservation: %+v, %v; want state 3 (released)", r, err)
	}
	if n, err := generated.IdempotencyComplete(ctx, c, key, usage, sizes, "late", []byte("x"), time.Minute, 256); err != nil || n != 0 {
		t.Errorf("complete on a tombstone: %d, %v; want 0", n, err)
	}
	r, err = generated.IdempotencyReserve(ctx, c, key, usage, sizes, released("other"), "fp", "other", time.Minute, 0, 256)
	if err != nil || r.State != 0 {
		t.Fatalf("other request: %+v, %v; want claimed", r, err)
	}
	r, err = generated.IdempotencyReserve(ctx, c, key, usage, sizes, released("late"), "fp", "late", time.Minute, 0, 256)
	if err != nil || r.State != 1 {
		t.Errorf("late reservation after another claim: %+v, %v; want in flight", r, err)
	}
}

// TestRecordMemory checks the documented Redis memory of one completed
// request: the stored response plus a small, fixed overhead, kept for the TTL.
func TestRecordMemory(t *testing.T) {
	t.Parallel()
	const ttl = 2 * time.Hour
	s, node, _ := newStore(t, idempotency.WithTTL(ttl))
	ctx := context.Background()
	for _, size := range []int{0, 64 << 10} {
		key := fmt.Sprint("k", size)
		r, err := s.Reserve(ctx, idempotency.CredentialScope("Bearer a"), key, idempotency.Fingerprint([]byte("x")))
		if err != nil || r.State != idempotency.Claimed {
			t.Fatalf("reserve: %+v %v", r, err)
		}
		resp := (&idempotency.StoredResponse{Status: 201, Body: bytes.Repeat([]byte("x"), size)}).Encode()
		if ok, err := r.Claim.Complete(ctx, resp); !ok || err != nil {
			t.Fatalf("complete: %v %v", ok, err)
		}
		rk := s.RecordKey(idempotency.CredentialScope("Bearer a"), key)
		mem, err := node.Do(t, "MEMORY", "USAGE", rk, "SAMPLES", "0").AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		// The allocator rounds large values up to its size classes (at most
		// 25 %), plus a fixed part for the hash's other fields.
		t.Logf("record with a %d-byte response: MEMORY USAGE %d bytes", len(resp), mem)
		if bound := int64(len(resp))*5/4 + 512; mem > bound {
			t.Errorf("record with a %d-byte response uses %d bytes, documented at most %d", len(resp), mem, bound)
		}
		if pttl, _ := node.Do(t, "PTTL", rk).AsInt64(); pttl <= 0 || time.Duration(pttl)*time.Millisecond > ttl {
			t.Errorf("record PTTL %d ms, want at most the configured %s", pttl, ttl)
		}
	}
}

// TestBudgetReleased: released claims give their bytes back, so a scope
// whose requests are never stored never runs out of budget.
func TestBudgetReleased(t *testing.T) {
	t.Parallel()
	s, node, prefix := newStore(t, idempotency.WithMaxBytesPerScope(1024))
	ctx := context.Background()
	for i := range 50 {
		r, err := s.Reserve(ctx, "acct", fmt.Sprint("k", i), "fp")
		if err != nil || r.State != idempotency.Claimed {
			t.Fatalf("reservation %d: %v %v", i, r.State, err)
		}
		if err := r.Claim.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The scope's accounting goes with its last record.
	if n, err := node.Do(t, "EXISTS", prefix+"{acct}#sizes", prefix+"{acct}#usage").AsInt64(); err != nil || n != 0 {
		t.Errorf("accounting keys after releasing every claim: %d (%v), want none", n, err)
	}
	r, err := s.Reserve(ctx, "acct", "big", "fp")
	if err != nil || r.State != idempotency.Claimed {
		t.Fatal(r.State, err)
	}
	if ok, err := r.Claim.Complete(ctx, bytes.Repeat([]byte("x"), 2048)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if r, err := s.Reserve(ctx, "acct", "next", "fp"); err != nil || r.State != idempotency.OverBudget {
		t.Errorf("after a 2 KiB response on a 1 KiB budget: %v %v, want OverBudget", r.State, err)
	}
	if r, err := s.Reserve(ctx, "other", "next", "fp"); err != nil || r.State != idempotency.Claimed {
		t.Errorf("another scope: %v %v, want Claimed", r.State, err)
	}
}

// TestCluster: a record and its scope's accounting share a hash slot, so
// every script runs on Redis Cluster (a cross-slot script would fail).
func TestCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	s, err := idempotency.NewStore(cl.Client(t), idempotency.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx := context.Background()
	for _, scope := range []string{"", "acct", idempotency.CredentialScope("Bearer a")} {
		r, err := s.Reserve(ctx, scope, "k", "fp")
		if err != nil || r.State != idempotency.Claimed {
			t.Fatalf("scope %q: %v %v", scope, r.State, err)
		}
		if ok, err := r.Claim.Complete(ctx, []byte("resp")); !ok || err != nil {
			t.Fatalf("scope %q complete: %v %v", scope, ok, err)
		}
		r, err = s.Reserve(ctx, scope, "k", "fp")
		if err != nil || r.State != idempotency.Done || string(r.Response) != "resp" {
			t.Errorf("scope %q replay: %v %q %v", scope, r.State, r.Response, err)
		}
		r, err = s.Reserve(ctx, scope, "k2", "fp")
		if err != nil || r.State != idempotency.Claimed {
			t.Fatalf("scope %q: %v %v", scope, r.State, err)
		}
		if err := r.Claim.Release(ctx); err != nil {
			t.Errorf("scope %q release: %v", scope, err)
		}
	}
}

// TestOutOfMemory: a server at its maxmemory (noeviction) refuses new
// reservations, but a request already running can still store its response,
// renew and release its claim. Were the response refused, the claim would
// run out while Redis stays full and a duplicate would run the request
// again.
func TestOutOfMemory(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	s, node, _ := newStore(t, idempotency.WithClaimTTL(600*time.Millisecond))
	ctx := context.Background()
	running, err := s.Reserve(ctx, "acct", "charge", "fp")
	if err != nil || running.State != idempotency.Claimed {
		t.Fatalf("Reserve = %+v, %v; want Claimed", running, err)
	}
	abandoned, err := s.Reserve(ctx, "acct", "abandoned", "fp")
	if err != nil || abandoned.State != idempotency.Claimed {
		t.Fatalf("Reserve = %+v, %v; want Claimed", abandoned, err)
	}
	keys, err := node.Do(t, "DBSIZE").AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	restore := node.OutOfMemory(t)

	if _, err := s.Reserve(ctx, "acct", "new", "fp"); err == nil {
		t.Error("Reserve of a new key succeeded while Redis is out of memory")
	}
	time.Sleep(200 * time.Millisecond) // an undo would run in the background
	if n, _ := node.Do(t, "DBSIZE").AsInt64(); n != keys {
		t.Errorf("DBSIZE %d after the refused reservation, %d before", n, keys)
	}
	time.Sleep(time.Second) // the running claim is renewed past its TTL
	if r, _ := s.Reserve(ctx, "acct", "charge", "fp"); r.State != idempotency.InFlight {
		t.Errorf("duplicate of the running request while out of memory: %v, want InFlight", r.State)
	}
	if ok, err := running.Claim.Complete(ctx, []byte("charged")); !ok || err != nil {
		t.Errorf("Complete while out of memory = %v, %v; want the response stored", ok, err)
	}
	if err := abandoned.Claim.Release(ctx); err != nil {
		t.Errorf("Release while out of memory: %v", err)
	}
	restore()
	if n, _ := node.Do(t, "DBSIZE").AsInt64(); n > keys {
		t.Errorf("DBSIZE %d after the refused reservation, %d before", n, keys)
	}
	r, err := s.Reserve(ctx, "acct", "charge", "fp")
	if err != nil || r.State != idempotency.Done || string(r.Response) != "charged" {
		t.Fatalf("duplicate after Redis has memory again: %+v, %v; want the stored response", r, err)
	}
	if r, _ := s.Reserve(ctx, "acct", "abandoned", "fp"); r.State != idempotency.Claimed {
		t.Errorf("released key: %v, want Claimed", r.State)
	} else {
		_ = r.Claim.Release(ctx)
	}
}

// TestStoredResponseFormat: a response without trailers (every HTTP record,
// a gRPC call whose handler set no trailer metadata) is encoded as it was
// before trailers were stored, so versions from then read it. A record of a
// later version is refused with ErrStoredVersion when it changes the layout,
// and read without the sections it appended behind an optional flag.
func TestStoredResponseFormat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    idempotency.StoredResponse
		want []byte
	}{
		{idempotency.StoredResponse{Status: 0, Body: []byte("m")}, []byte{1, 0, 0, 0, 1, 'm'}},
		{idempotency.StoredResponse{Status: 201, Header: []idempotency.HeaderField{{"A", "b"}}, Body: []byte("x")},
			[]byte{1, 0, 0xc9, 0x01, 1, 1, 'A', 1, 'b', 1, 'x'}},
		{idempotency.StoredResponse{Status: 0, NotReplayable: true}, []byte{1, 1, 0, 0, 0}},
		{idempotency.StoredResponse{Status: 0, Body: []byte("m"), Trailer: []idempotency.HeaderField{{"t", "v"}}},
			[]byte{1, 2, 0, 0, 1, 'm', 1, 1, 't', 1, 'v'}},
	} {
		if got := c.r.Encode(); !bytes.Equal(got, c.want) {
			t.Errorf("%+v encodes as % x, want % x", c.r, got, c.want)
		}
	}
	for _, b := range [][]byte{{2, 0, 0, 0, 1, 'm'}, {0xff, 0}, {1, 4, 0, 0, 1, 'm'}, {1, 8, 0, 0, 1, 'm'}} {
		if _, err := idempotency.DecodeStoredResponse(b); !errors.Is(err, idempotency.ErrStoredVersion) {
			t.Errorf("% x: %v, want ErrStoredVersion", b, err)
		}
	}
	for _, b := range [][]byte{{0, 0, 0, 0, 1, 'm'}, {1, 0, 0, 0, 1, 'm', 'x'}, {1, 2, 0, 0, 1, 'm', 0}} {
		if _, err := idempotency.DecodeStoredResponse(b); err == nil || errors.Is(err, idempotency.ErrStoredVersion) {
			t.Errorf("% x: %v, want malformed", b, err)
		}
	}
	r, err := idempotency.DecodeStoredResponse([]byte{1, 0x12, 0, 0, 1, 'm', 1, 1, 't', 1, 'v', 0xde, 0xad})
	if err != nil || string(r.Body) != "m" || len(r.Trailer) != 1 || r.Trailer[0] != (idempotency.HeaderField{Name: "t", Value: "v"}) {
		t.Errorf("optional section after the trailers: %+v, %v", r, err)
	}
}

// TestHugeBudget: a budget beyond what a Lua number holds exactly
// (math.MaxInt64 for "as good as none") still lets keys through.
func TestHugeBudget(t *testing.T) {
	t.Parallel()
	s, _, _ := newStore(t, idempotency.WithMaxBytesPerScope(math.MaxInt64))
	r, err := s.Reserve(context.Background(), "acct", "k", "fp")
	if err != nil || r.State != idempotency.Claimed {
		t.Fatalf("Reserve with a budget of MaxInt64 = %v, %v; want Claimed", r.State, err)
	}
}
