package grpclock_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

func idemStore(t *testing.T) (*idempotency.Store, *redistest.Node) {
	t.Helper()
	node := redistest.Server(t)
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	return store, node
}

func withKey(key string) context.Context {
	return grpclock.WithIdempotencyKey(context.Background(), key)
}

func TestIdempotencyUnary(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		n := runs.Add(1)
		switch field(r, "order_id").String() {
		case "missing":
			return nil, status.Error(codes.NotFound, "no such order")
		case "flaky":
			if n%2 == 1 {
				return nil, status.Error(codes.Internal, "database down")
			}
		}
		return order("", "", n, "charged "+field(r, "note").String()), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithIdempotentMethods(svc+"Pay")))})

	var hdr metadata.MD
	first, err := call(withKey("k1"), conn, "Pay", order("1", "", 0, "a"), grpc.Header(&hdr))
	if err != nil || hdr.Get(grpclock.MetadataIdempotentReplayed) != nil {
		t.Fatalf("first: %v %v %v", first, err, hdr)
	}
	again, err := call(withKey("k1"), conn, "Pay", order("1", "", 0, "a"), grpc.Header(&hdr))
	if err != nil || !proto.Equal(first, again) {
		t.Fatalf("replay: %v %v, want %v", again, err, first)
	}
	if got := hdr.Get(grpclock.MetadataIdempotentReplayed); len(got) != 1 || got[0] != "true" {
		t.Errorf("replay header %v", hdr)
	}
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times", runs.Load())
	}
	if _, err := call(withKey("k1"), conn, "Pay", order("1", "", 0, "b")); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("other payload: %v, want FailedPrecondition", err)
	}
	if _, err := call(withKey(`"bad`), conn, "Pay", order("1", "", 0, "a")); status.Code(err) != codes.InvalidArgument {
		t.Errorf("malformed key: %v, want InvalidArgument", err)
	}

	// Stored errors replay with their code and message.
	_, err1 := call(withKey("k2"), conn, "Pay", order("missing", "", 0, ""))
	_, err2 := call(withKey("k2"), conn, "Pay", order("missing", "", 0, ""))
	if status.Code(err1) != codes.NotFound || status.Convert(err2).Message() != status.Convert(err1).Message() || status.Code(err2) != codes.NotFound {
		t.Errorf("stored error: %v then %v", err1, err2)
	}
	// Internal is not stored: the key is released and the retry runs.
	before := runs.Load()
	_, err1 = call(withKey("k3"), conn, "Pay", order("flaky", "", 0, ""))
	r2, err2 := call(withKey("k3"), conn, "Pay", order("flaky", "", 0, ""))
	if status.Code(err1) != codes.Internal || err2 != nil || runs.Load() != before+2 {
		t.Errorf("Internal then retry: %v, %v %v (runs %d)", err1, r2, err2, runs.Load()-before)
	}
	// Methods not covered, or calls without a key, run as usual.
	before = runs.Load()
	_, _ = call(withKey("k1"), conn, "Ping", order("1", "", 0, "a"))
	_, _ = call(context.Background(), conn, "Pay", order("1", "", 0, "a"))
	if runs.Load() != before+2 {
		t.Errorf("uncovered calls did not run")
	}
}

// TestIdempotencyReplayUnknownType replays from a second server process that
// has never seen a response (and whose output type is not in the registry):
// the stored bytes reach the client unchanged.
func TestIdempotencyReplayUnknownType(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		return order("x", "nested", 7, "stored"), nil
	}}
	opts := func() []grpc.ServerOption {
		return []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))}
	}
	a, b := start(t, s, opts()), start(t, s, opts())
	want, err := call(withKey("k"), a, "Pay", order("1", "", 0, ""))
	if err != nil {
		t.Fatal(err)
	}
	s.unary = func(context.Context, string, *dynamicpb.Message) (proto.Message, error) {
		t.Error("handler ran for a duplicate")
		return nil, nil
	}
	got, err := call(withKey("k"), b, "Pay", order("1", "", 0, ""))
	if err != nil || !proto.Equal(want, got) {
		t.Errorf("replay from another server: %v %v, want %v", got, err, want)
	}
}

func TestIdempotencyConcurrentUnary(t *testing.T) {
	t.Parallel()
	store, node := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		time.Sleep(20 * time.Millisecond)
		return order("", "", 1, "ok"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	var wg sync.WaitGroup
	var ok, aborted, other atomic.Int64
	startc := make(chan struct{})
	for range 50 {
		wg.Go(func() {
			<-startc
			_, err := call(withKey("same"), conn, "Pay", order("1", "", 0, ""))
			switch status.Code(err) {
			case codes.OK:
				ok.Add(1)
			case codes.Aborted:
				aborted.Add(1)
			default:
				other.Add(1)
			}
		})
	}
	close(startc)
	wg.Wait()
	if runs.Load() != 1 || other.Load() != 0 || ok.Load() < 1 || ok.Load()+aborted.Load() != 50 {
		t.Errorf("runs %d, ok %d, aborted %d, other %d", runs.Load(), ok.Load(), aborted.Load(), other.Load())
	}
	node.Kill()
	if _, err := call(withKey("k"), conn, "Pay", order("1", "", 0, "")); status.Code(err) != codes.Unavailable {
		t.Errorf("store down: %v, want Unavailable", err)
	}
}

// TestClientInterceptorReusesKey checks one key per logical call, shared by
// the attempts of a retrying interceptor placed after it.
func TestClientInterceptorReusesKey(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var mu sync.Mutex
	var keys []string
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		mu.Lock()
		keys = append(keys, md.Get(grpclock.MetadataIdempotencyKey)...)
		mu.Unlock()
		if runs.Add(1) == 1 {
			return nil, status.Error(codes.Unavailable, "try again")
		}
		return order("", "", 1, "ok"), nil
	}}
	retry := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		var err error
		for range 3 {
			if err = invoker(ctx, method, req, reply, cc, opts...); status.Code(err) != codes.Unavailable {
				return err
			}
		}
		return err
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))},
		grpc.WithChainUnaryInterceptor(grpclock.IdempotencyUnaryClientInterceptor(), retry))
	if _, err := call(context.Background(), conn, "Pay", order("1", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := call(context.Background(), conn, "Pay", order("1", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 || keys[0] != keys[1] || keys[1] == keys[2] {
		t.Errorf("keys seen %v: want the retry to reuse the first call's key and the next call to draw a new one", keys)
	}
	if _, err := idempotency.ParseKey(keys[0], 0); err != nil || len(keys[0]) != 36 {
		t.Errorf("generated key %q: %v", keys[0], err)
	}
}
