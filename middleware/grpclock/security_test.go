package grpclock_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

func authCtx(key, token string) context.Context {
	ctx := withKey(key)
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	return ctx
}

// TestIdempotencyScopedToCallerGRPC: a stored outcome replays only to the
// caller who made it; calls without credentials share an anonymous scope.
func TestIdempotencyScopedToCallerGRPC(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		return order("", "", runs.Add(1), strings.Join(md.Get("authorization"), ",")), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	pay := func(token string) (*dynamicpb.Message, bool) {
		t.Helper()
		var hdr metadata.MD
		r, err := call(authCtx("K1", token), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr))
		if err != nil {
			t.Fatalf("Pay as %q: %v", token, err)
		}
		return r, len(hdr.Get(grpclock.MetadataIdempotentReplayed)) > 0
	}
	alice, _ := pay("alice")
	for _, who := range []string{"bob", ""} {
		r, replayed := pay(who)
		if replayed || field(r, "note").String() == "Bearer alice" {
			t.Errorf("caller %q got alice's response (%v, replayed %v)", who, r, replayed)
		}
	}
	if r, replayed := pay("alice"); !replayed || field(r, "num").Int() != field(alice, "num").Int() {
		t.Errorf("alice's retry: %v replayed=%v, want her stored response", r, replayed)
	}
	if _, replayed := pay(""); !replayed {
		t.Errorf("anonymous retry not replayed from the anonymous scope")
	}
	if runs.Load() != 3 {
		t.Errorf("handler ran %d times, want 3 (alice, bob, anonymous)", runs.Load())
	}
}

// TestIdempotencyFinalOutcomesOnlyGRPC runs the recommended chain
// (idempotency, then lock): a call that met a held lock is not stored, even
// with a predicate storing every code, and its hint is the default delay, not
// the holder's watchdog lease.
func TestIdempotencyFinalOutcomesOnlyGRPC(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store, err := idempotency.NewStore(env.Redis, idempotency.WithPrefix(env.Prefix+"idem:"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
		return order("", "", runs.Add(1), ""), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithStoredCodes(func(codes.Code) bool { return true })),
		grpclock.UnaryServerInterceptor(env.LockFunc(), grpclock.WithKeyPrefix(env.Prefix), grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id"))))})

	m := env.Mutex(t, env.Prefix+core.EscapeKey("7"))
	held, err := m.TryLock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(withKey("K1"), conn, "Pay", order("7", "", 0, ""))
	if status.Code(err) != codes.Aborted {
		t.Fatalf("while locked: %v, want Aborted", err)
	}
	var delay time.Duration
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			delay = ri.GetRetryDelay().AsDuration()
		}
	}
	if delay <= 0 || delay > time.Second {
		t.Errorf("RetryInfo delay %s, want the 1 s default (the holder is renewed by the watchdog)", delay)
	}
	if err := m.Unlock(held); err != nil {
		t.Fatal(err)
	}
	var hdr metadata.MD
	if _, err := call(withKey("K1"), conn, "Pay", order("7", "", 0, ""), grpc.Header(&hdr)); err != nil || runs.Load() != 1 || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) > 0 {
		t.Errorf("retry after the lock freed: %v (runs %d, header %v), want the handler to run", err, runs.Load(), hdr)
	}
}

// TestIdempotencyStalledReserveGRPC: a reservation whose reply does not come
// back within the store timeout fails with Unavailable and is undone, so the
// retry once Redis answers again runs instead of getting Aborted for the
// claim TTL.
func TestIdempotencyStalledReserveGRPC(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	const timeout = 300 * time.Millisecond
	store, err := idempotency.NewStore(env.Node.Client(t), idempotency.WithPrefix(env.Prefix), idempotency.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
		return order("", "", runs.Add(1), ""), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithIdempotencyLogger(slog.New(slog.DiscardHandler))))})
	// Connected, the scripts loaded. A first call on a loaded machine may
	// miss the 300 ms store timeout (Unavailable, its key then held by the
	// undo): asked again under a fresh key.
	for i := 0; ; i++ {
		_, err := call(withKey(fmt.Sprint("warm-", i)), conn, "Pay", order("1", "", 0, ""))
		if err == nil {
			break
		}
		if status.Code(err) != codes.Unavailable || i == 20 {
			t.Fatal(err)
		}
	}
	runs.Store(0)
	env.Node.Pause()
	start := time.Now()
	_, err = call(withKey("K1"), conn, "Pay", order("1", "", 0, ""))
	took := time.Since(start)
	env.Node.Resume()
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("stalled Redis: %v, want Unavailable", err)
	}
	if bound := timeout + 2*time.Second; took > bound {
		t.Errorf("stalled call took %s, want under %s", took, bound)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := call(withKey("K1"), conn, "Pay", order("1", "", 0, ""))
		if err == nil && runs.Load() == 1 {
			break
		}
		// Aborted while the reservation stands; Unavailable if a retry
		// itself outlasts the 300 ms store timeout: a client retries both.
		if c := status.Code(err); (c != codes.Aborted && c != codes.Unavailable) || time.Now().After(deadline) {
			t.Fatalf("retry after the stall: %v (runs %d), want the handler to run within 5 s", err, runs.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncBuffer is a log sink written by server goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestErrorsCarryNoInternals: with Redis down, clients learn that the lock or
// store is unavailable, not where Redis lives or why; the server log has the
// detail.
func TestErrorsCarryNoInternals(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store, err := idempotency.NewStore(env.Node.Client(t), idempotency.WithPrefix(env.Prefix), idempotency.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s := &server{unary: fenceReply}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(svc+"Refund"), grpclock.WithIdempotencyLogger(log)),
		grpclock.UnaryServerInterceptor(env.LockFunc(), grpclock.WithKeyPrefix(env.Prefix), grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id")), grpclock.WithLogger(log)))})
	env.Node.Kill()
	for _, c := range []struct {
		ctx    context.Context
		method string
		want   string
	}{
		{context.Background(), "Pay", "lock service unavailable"},
		{withKey("K1"), "Refund", "idempotency store unavailable"},
	} {
		_, err := call(c.ctx, conn, c.method, order("1", "", 0, ""))
		if st := status.Convert(err); st.Code() != codes.Unavailable || st.Message() != c.want {
			t.Errorf("%s with Redis down: %v, want Unavailable %q and nothing more", c.method, err, c.want)
		}
	}
	if out := logs.String(); !strings.Contains(out, "lock service unavailable") || !strings.Contains(out, "idempotency store unavailable") || !strings.Contains(out, "err=") {
		t.Errorf("server log lacks the details:\n%s", out)
	}
}

// TestIdempotencyBudgetPerCallerGRPC: one caller sending fresh keys cannot
// make Redis keep more than its scope's budget; other callers are unaffected.
func TestIdempotencyBudgetPerCallerGRPC(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	const budget, note = 8 << 10, 1 << 10
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)), idempotency.WithMaxBytesPerScope(budget))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	s := &server{unary: func(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
		return order("", "", 1, strings.Repeat("x", note)), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	stored := 0
	for i := range 20 {
		_, err := call(authCtx(fmt.Sprint("a", i), "alice"), conn, "Pay", order("1", "", 0, ""))
		if status.Code(err) == codes.ResourceExhausted {
			break
		}
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		stored++
	}
	if max := budget / (note + 256); stored < max-1 || stored > max+1 {
		t.Errorf("alice stored %d responses of about %d bytes before ResourceExhausted, want about %d", stored, note, max)
	}
	if _, err := call(authCtx("b0", "bob"), conn, "Pay", order("1", "", 0, "")); err != nil {
		t.Errorf("bob while alice is over budget: %v", err)
	}
}
