package grpclock_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestNestedInterceptors: two lock interceptors in a chain (one locking the
// account from metadata, one the order from the message) run the handler
// with both locks held, and code under it re-enters either with its
// context; it blocked on the account lock its own call held.
func TestNestedInterceptors(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	s := &server{unary: func(ctx context.Context, _ string, req *dynamicpb.Message) (proto.Message, error) {
		for _, name := range []string{env.Prefix + "acct:a1", env.Prefix + "order:" + field(req, "order_id").String()} {
			l := env.Lock(t, locks, name)
			if _, err := l.TryLock(ctx, 0); err != nil {
				return nil, err
			}
			if err := l.Unlock(ctx); err != nil {
				return nil, err
			}
		}
		return order("", "", 0, "ok"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.UnaryServerInterceptor(locks, grpclock.WithKeyPrefix(env.Prefix+"acct:"), grpclock.WithMethod(svc+"Pay", grpclock.Metadata("x-account"))),
		grpclock.UnaryServerInterceptor(locks, grpclock.WithKeyPrefix(env.Prefix+"order:"), grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id"))),
	)})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-account", "a1")
	if r, err := call(ctx, conn, "Pay", order("o1", "", 0, "")); err != nil || field(r, "note").String() != "ok" {
		t.Errorf("nested locks, relocking both under the handler: %v %v", r, err)
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}
