package grpclock_test

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestIdempotencyStatusMessageNotUTF8: a final status whose message is not
// valid UTF-8 (a handler quoting a client's bytes back) is sent by gRPC with
// each bad byte as U+FFFD. That answer is stored and replayed as the client
// got it, with the replay marker (and without details, which gRPC drops
// with such a message); it was left unstored (a status that is not
// UTF-8 does not marshal), and the retry got AlreadyExists instead.
func TestIdempotencyStatusMessageNotUTF8(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		st, err := status.New(codes.InvalidArgument, "bad name \xff\xfe \xe2\x82 ok \u00e9").WithDetails(&errdetails.BadRequest{})
		if err != nil {
			return nil, err
		}
		return nil, st.Err()
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	_, err := call(withKey("k"), conn, "Pay", order("1", "", 0, ""))
	first := status.Convert(err)
	if first.Code() != codes.InvalidArgument {
		t.Fatalf("first call: %v, want InvalidArgument", err)
	}
	var hdr metadata.MD
	_, err = call(withKey("k"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr))
	again := status.Convert(err)
	if again.Code() != first.Code() || again.Message() != first.Message() || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) == 0 {
		t.Fatalf("retry: %v %q (header %v), want the first answer %v %q replayed", again.Code(), again.Message(), hdr, first.Code(), first.Message())
	}
	if len(again.Details()) != len(first.Details()) {
		t.Fatalf("retry with %d details, the first answer had %d", len(again.Details()), len(first.Details()))
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1", n)
	}
}

// TestIdempotencyStatusDetailsNotUTF8: a final status whose message is
// valid but whose details do not marshal (an Any whose type URL is not
// valid UTF-8, built by hand) is sent by gRPC without its details. That
// answer is stored and replayed as the client got it; it was left
// unstored, and the retry got AlreadyExists instead.
func TestIdempotencyStatusDetailsNotUTF8(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return nil, status.ErrorProto(&spb.Status{Code: int32(codes.InvalidArgument), Message: "bad name",
			Details: []*anypb.Any{{TypeUrl: "type.googleapis.com/\xffbad"}}})
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	_, err := call(withKey("k"), conn, "Pay", order("1", "", 0, ""))
	first := status.Convert(err)
	if first.Code() != codes.InvalidArgument || first.Message() != "bad name" || len(first.Proto().GetDetails()) != 0 {
		t.Fatalf("first call: %v with %d details, want InvalidArgument %q without details, as gRPC sends it", err, len(first.Proto().GetDetails()), "bad name")
	}
	var hdr metadata.MD
	_, err = call(withKey("k"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr))
	again := status.Convert(err)
	if again.Code() != first.Code() || again.Message() != first.Message() || len(again.Proto().GetDetails()) != 0 || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) == 0 {
		t.Fatalf("retry: %v %q with %d details (header %v), want the first answer %v %q replayed", again.Code(), again.Message(), len(again.Proto().GetDetails()), hdr, first.Code(), first.Message())
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1", n)
	}
}
