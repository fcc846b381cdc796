package grpclock_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// A call whose client has gone (its context ended) before the key is
// reserved is reported as canceled and answered with the context's code,
// not as a Redis outage logged at ERROR: Redis is fine.
func TestIdempotencyClientGoneNotRedisDown(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var got []scriptlock.RequestOutcome
	icpt := grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithIdempotencyOutcome(func(_ context.Context, o scriptlock.RequestOutcome) { got = append(got, o) }))
	ctx, cancel := context.WithCancel(metadata.NewIncomingContext(context.Background(),
		metadata.Pairs(grpclock.MetadataIdempotencyKey, "K")))
	cancel()
	ran := false
	_, err := icpt(ctx, &emptypb.Empty{}, &grpc.UnaryServerInfo{FullMethod: "/svc/Pay"}, func(context.Context, any) (any, error) {
		ran = true
		return &emptypb.Empty{}, nil
	})
	if ran {
		t.Fatal("the handler ran for a client that had gone")
	}
	if status.Code(err) != codes.Canceled {
		t.Errorf("error %v, want code Canceled", err)
	}
	if len(got) != 1 || got[0] != scriptlock.RequestCanceled {
		t.Errorf("outcomes %v, want [%v]", got, scriptlock.RequestCanceled)
	}
}
