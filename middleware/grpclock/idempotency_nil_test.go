package grpclock_test

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestIdempotencyNilResponse: a handler returning a nil response and a nil
// error answers OK with an empty message (gRPC sends no bytes for a nil
// response, whatever the codec). That answer is stored like any other: a
// retry with the same key gets it replayed, also from a server that never
// saw a response of the method, and the handler runs once.
func TestIdempotencyNilResponse(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(context.Context, string, *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return nil, nil
	}}
	opts := func() []grpc.ServerOption {
		return []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))}
	}
	a, b := start(t, s, opts()), start(t, s, opts())
	empty := dynamicpb.NewMessage(orderDesc)

	var hdr metadata.MD
	first, err := call(withKey("k"), a, "Pay", order("1", "", 0, ""), grpc.Header(&hdr))
	if err != nil || !proto.Equal(first, empty) || hdr.Get(grpclock.MetadataIdempotentReplayed) != nil {
		t.Fatalf("first: %v %v %v; want an empty message", first, err, hdr)
	}
	for _, c := range []struct {
		name string
		conn *grpc.ClientConn
	}{{"same server", a}, {"other server", b}} {
		name, conn := c.name, c.conn
		hdr = nil
		again, err := call(withKey("k"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr))
		if err != nil || !proto.Equal(again, empty) {
			t.Errorf("retry on the %s: %v %v; want the empty answer replayed", name, again, err)
		}
		if got := hdr.Get(grpclock.MetadataIdempotentReplayed); len(got) != 1 || got[0] != "true" {
			t.Errorf("retry on the %s: replay header %v", name, hdr)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}
