package grpclock_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestIdempotencyRecordLaterVersionKept: a record of a later version is
// answered Unavailable, reported as the store's other Unavailable answers
// are (not as a replay, which the client did not get), and left as it is:
// once an instance that reads it answers, the retry gets the first call's
// response, header and trailer metadata included.
func TestIdempotencyRecordLaterVersionKept(t *testing.T) {
	t.Parallel()
	store, node := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		_ = grpc.SetHeader(ctx, metadata.Pairs("x-h", "h1"))
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-t", "t1", "x-t", "t2"))
		return order("", "", 7, "ok"), nil
	}}
	var mu sync.Mutex
	var got []scriptlock.RequestOutcome
	report := func(_ context.Context, o scriptlock.RequestOutcome) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, o)
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithIdempotencyOutcome(report)))})
	var h1, t1 metadata.MD
	first, err := call(withKey("kept"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&h1), grpc.Trailer(&t1))
	if err != nil {
		t.Fatal(err)
	}
	key, rec := storedRecord(t, node)
	if rec[1] != 2 {
		t.Fatalf("record with trailers has flags %#x, want 2", rec[1])
	}
	later := append([]byte{2}, rec[1:]...)
	node.Do(t, "HSET", key, "resp", string(later))
	ttl, _ := node.Do(t, "PTTL", key).AsInt64()
	for range 2 {
		if _, err := call(withKey("kept"), conn, "Pay", order("1", "", 0, "")); status.Code(err) != codes.Unavailable {
			t.Errorf("record of a later version: %v, want Unavailable", err)
		}
	}
	if k, v := storedRecord(t, node); k != key || string(v) != string(later) {
		t.Errorf("record of a later version changed to %q % x", k, v)
	}
	if left, _ := node.Do(t, "PTTL", key).AsInt64(); left <= 0 || left > ttl {
		t.Errorf("record of a later version: TTL %d ms, was %d ms", left, ttl)
	}
	node.Do(t, "HSET", key, "resp", string(rec))
	var h2, t2 metadata.MD
	r, err := call(withKey("kept"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&h2), grpc.Trailer(&t2))
	if err != nil || !proto.Equal(r, first) {
		t.Errorf("replay: %v, %v; want %v", r, err, first)
	}
	if !slices.Equal(h2.Get("x-h"), h1.Get("x-h")) || !slices.Equal(t2.Get("x-t"), []string{"t1", "t2"}) || !slices.Equal(t1.Get("x-t"), t2.Get("x-t")) {
		t.Errorf("replayed metadata %v %v, first call's %v %v", h2, t2, h1, t1)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted, scriptlock.RequestRedisDown, scriptlock.RequestRedisDown, scriptlock.RequestReplayed}
	if !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
