package grpclock_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// rebuildErrors stands for an interceptor (error mapping, logging) that
// returns a fresh status error in place of the one it got.
func rebuildErrors(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil {
		return nil, status.Convert(err).Err()
	}
	return resp, nil
}

// The lock interceptor's own answers are recognised by the idempotency
// interceptor also when an interceptor between them rebuilds the error:
// an InvalidArgument for the lock key (a code stored by default) and a
// contended Aborted (stored by a predicate that stores every code) are
// neither stored nor replayed, so the client's retry runs.
func TestIdempotencyLockAnswerThroughRebuiltError(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	s := &server{unary: func(context.Context, string, *dynamicpb.Message) (proto.Message, error) {
		return order("", "", runs.Add(1), ""), nil
	}}
	held, err := env.Mutex(t, env.Prefix+"held").Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Mutex(t, env.Prefix+"held").Unlock(held) }()
	for _, tc := range []struct {
		name string
		opts []grpclock.IdempotencyOption
	}{
		{"default codes", nil},
		{"every code", []grpclock.IdempotencyOption{grpclock.WithStoredCodes(func(codes.Code) bool { return true })}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
				grpclock.IdempotencyUnaryServerInterceptor(store, append(tc.opts, grpclock.WithIdempotentMethods(svc+"Pay"))...),
				rebuildErrors,
				grpclock.UnaryServerInterceptor(env.LockFunc(), lockOpts(env)...))})
			for _, c := range []struct {
				id   string
				want codes.Code
			}{{"", codes.InvalidArgument}, {"a\x00b", codes.InvalidArgument}, {"held", codes.Aborted}} {
				key := fmt.Sprintf("%s/%q", tc.name, c.id)
				for try := range 2 {
					var hdr metadata.MD
					_, err := call(withKey(key), conn, "Pay", order(c.id, "", 0, ""), grpc.Header(&hdr))
					if status.Code(err) != c.want || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 0 {
						t.Errorf("order id %q (try %d): %v, replayed %v; want %s, not replayed", c.id, try, err, hdr.Get(grpclock.MetadataIdempotentReplayed), c.want)
					}
				}
			}
			if keys := env.Keys(t, env.Prefix+"idem:*"); len(keys) != 0 {
				t.Errorf("the lock interceptor's answers left records in Redis: %v", keys)
			}
			if runs.Load() != 0 {
				t.Errorf("handler ran %d times", runs.Load())
			}
		})
	}
}
