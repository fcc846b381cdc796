package grpclock_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyReplayUnderLock: header and trailer metadata set under the
// lock are stored and replayed whichever of the two interceptors comes
// first in the chain, and the replay runs the handler no second time.
func TestIdempotencyReplayUnderLock(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		f, _ := scriptlock.Fence(ctx)
		_ = grpc.SetHeader(ctx, metadata.Pairs("x-h", "h"))
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-t", "t1", "x-t", "t2"))
		return order("", "", f, "ok"), nil
	}}
	idem := grpclock.IdempotencyUnaryServerInterceptor(store)
	lock := grpclock.UnaryServerInterceptor(env.LockFunc(), lockOpts(env)...)
	for name, chain := range map[string][]grpc.UnaryServerInterceptor{"idempotency first": {idem, lock}, "lock first": {lock, idem}} {
		runs.Store(0)
		conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(chain...)})
		var h1, t1, h2, t2 metadata.MD
		r1, err1 := call(withKey(name), conn, "Pay", order("o-"+name, "", 0, ""), grpc.Header(&h1), grpc.Trailer(&t1))
		r2, err2 := call(withKey(name), conn, "Pay", order("o-"+name, "", 0, ""), grpc.Header(&h2), grpc.Trailer(&t2))
		if err1 != nil || err2 != nil || !proto.Equal(r1, r2) {
			t.Errorf("%s: %v %v, replay %v %v", name, r1, err1, r2, err2)
		}
		if !slices.Equal(h2.Get("x-h"), []string{"h"}) || !slices.Equal(t2.Get("x-t"), []string{"t1", "t2"}) || !slices.Equal(t1.Get("x-t"), t2.Get("x-t")) {
			t.Errorf("%s: replayed %v %v, first %v %v", name, h2, t2, h1, t1)
		}
		if n := runs.Load(); n != 1 {
			t.Errorf("%s: handler ran %d times", name, n)
		}
	}
}
