package grpclock_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// legacyReply is a message of the older github.com/golang/protobuf API,
// as its generated code declared them: no ProtoReflect method.
type legacyReply struct {
	Note string `protobuf:"bytes,4,opt,name=note,proto3" json:"note,omitempty"`
}

func (m *legacyReply) Reset()         { *m = legacyReply{} }
func (m *legacyReply) String() string { return m.Note }
func (*legacyReply) ProtoMessage()    {}

// TestIdempotencyLegacyResponse: a response of the older protobuf API, which
// gRPC's proto codec sends, is stored and replayed like any other. It was
// recorded as a response that could not be stored, and the retry got
// AlreadyExists.
func TestIdempotencyLegacyResponse(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	icpt := grpclock.IdempotencyUnaryServerInterceptor(store)
	info := &grpc.UnaryServerInfo{FullMethod: "/legacy.Svc/Pay"}
	runs := 0
	handler := func(context.Context, any) (any, error) {
		runs++
		return &legacyReply{Note: "charged"}, nil
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(grpclock.MetadataIdempotencyKey, "k"))
	if _, err := icpt(ctx, &emptypb.Empty{}, info, handler); err != nil {
		t.Fatal(err)
	}
	resp, err := icpt(ctx, &emptypb.Empty{}, info, handler)
	if err != nil || runs != 1 {
		t.Fatalf("retry: %v, handler ran %d times; want the response replayed, 1 run", err, runs)
	}
	got, ok := resp.(proto.Message)
	if !ok || !proto.Equal(got, protoadapt.MessageV2Of(&legacyReply{Note: "charged"})) {
		t.Fatalf("replayed %T %v, want the stored reply", resp, resp)
	}
}
