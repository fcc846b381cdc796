package grpclock_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestAuthorityKeyInvalidUTF8: an :authority that is not valid UTF-8 is an
// invalid key, as any other metadata key is; lower-casing it must not turn
// its bad bytes into U+FFFD, a key that two different hosts share.
func TestAuthorityKeyInvalidUTF8(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	ctx := context.Background()
	opts := []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(locks,
		grpclock.WithKeyPrefix(env.Prefix), grpclock.WithMethod(svc+"Pay", grpclock.Metadata(":authority"))))}
	conn := start(t, &server{unary: fenceReply}, opts, grpc.WithAuthority("shop-a\xff.example"))
	if _, err := call(ctx, conn, "Pay", order("", "", 0, "")); status.Code(err) != codes.InvalidArgument {
		t.Fatalf(":authority shop-a\\xff.example: %v, want InvalidArgument", err)
	}
}
