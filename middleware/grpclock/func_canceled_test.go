package grpclock_test

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestFuncKeyClientGone: a Func key source that fails because the call's
// own context ended (the client went away while it looked the key up) ends
// the call with the context's code and is reported as canceled, not as
// InvalidArgument and key_invalid: the client sent no bad key.
func TestFuncKeyClientGone(t *testing.T) {
	t.Parallel()
	// The constructor asks the LockFunc for names under the key prefix to
	// check it; the call must ask for none.
	built := false
	lock := grpclock.LockFunc(func(string) (scriptlock.Locker, error) {
		if built {
			t.Error("lock taken")
		}
		return nil, nil
	})
	var got []scriptlock.RequestOutcome
	icpt := grpclock.UnaryServerInterceptor(lock,
		grpclock.WithAllMethods(grpclock.Func(func(ctx context.Context, _ string, _ any) (string, error) {
			<-ctx.Done() // a lookup that outlived the client
			return "", fmt.Errorf("looking up the account: %w", ctx.Err())
		})),
		grpclock.WithOutcome(func(_ context.Context, o scriptlock.RequestOutcome) { got = append(got, o) }))
	built = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := icpt(ctx, &emptypb.Empty{}, &grpc.UnaryServerInfo{FullMethod: "/svc/Pay"}, func(context.Context, any) (any, error) {
		t.Error("handler ran")
		return &emptypb.Empty{}, nil
	})
	if status.Code(err) != codes.Canceled {
		t.Errorf("error %v, want code Canceled", err)
	}
	if len(got) != 1 || got[0] != scriptlock.RequestCanceled {
		t.Errorf("outcomes %v, want [%v]", got, scriptlock.RequestCanceled)
	}
}
