package grpclock_test

import (
	"context"
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

// TestIdempotencyCompleteAfterRedisRestartGRPC: Redis goes down after the
// call was claimed and comes back (from its append-only file) after the
// handler returned. The response is stored once Redis is back, so a duplicate
// gets it replayed and the charge never runs a second time; until then a
// duplicate fails with Unavailable or Aborted.
func TestIdempotencyCompleteAfterRedisRestartGRPC(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithAOF())
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithTimeout(2*time.Second)) // a loaded machine's first call and a call after the restart fit in
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
		n := runs.Add(1)
		if n == 1 {
			node.Kill() // after the claim, before the response is stored
		}
		return order("", "", n, "charged"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})

	first, err := call(withKey("K"), conn, "Pay", order("1", "", 0, ""))
	if err != nil || field(first, "num").Int() != 1 {
		t.Fatalf("first: %v %v, want the handler's response", first, err)
	}
	if _, err := call(withKey("K"), conn, "Pay", order("1", "", 0, "")); status.Code(err) != codes.Unavailable {
		t.Errorf("duplicate while Redis is down: %v, want Unavailable", err)
	}
	node.Restart(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var hdr metadata.MD
		r, err := call(withKey("K"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr))
		if runs.Load() != 1 {
			t.Fatalf("the charge ran %d times for one key (duplicate got %v %v)", runs.Load(), r, err)
		}
		if err == nil && len(hdr.Get(grpclock.MetadataIdempotentReplayed)) > 0 && field(r, "num").Int() == 1 {
			break
		}
		if status.Code(err) != codes.Aborted || time.Now().After(deadline) {
			t.Fatalf("duplicate after the restart: %v %v, want Aborted until the stored response is replayed", r, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
