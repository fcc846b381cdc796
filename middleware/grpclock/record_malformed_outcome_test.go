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

// TestIdempotencyRecordMalformedOutcome: a stored response this version
// cannot decode (no version byte, a truncated record, a stored status that
// is no status) answers Internal and is reported as a store failure
// (redis_down), never as a replay, which the client did not get; the call
// does not run again.
func TestIdempotencyRecordMalformedOutcome(t *testing.T) {
	t.Parallel()
	store, node := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
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
	if _, err := call(withKey("bad"), conn, "Pay", order("1", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	key, rec := storedRecord(t, node)
	for _, c := range []struct {
		name   string
		record []byte
	}{
		{"no version", []byte{0}},
		{"truncated", rec[:len(rec)-1]},
		// version 1, no flags, NotFound, no header, a body that is no Status
		{"stored status", []byte{1, 0, byte(codes.NotFound), 0, 1, 0xff}},
	} {
		node.Do(t, "HSET", key, "resp", string(c.record))
		var hdr metadata.MD
		_, err := call(withKey("bad"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr))
		if status.Code(err) != codes.Internal || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 0 {
			t.Errorf("%s: %v %v, want Internal without a replay", c.name, err, hdr)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted, scriptlock.RequestRedisDown, scriptlock.RequestRedisDown, scriptlock.RequestRedisDown}
	if !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
