package grpclock_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// BenchmarkUnaryInterceptor measures the per-call cost of the lock
// interceptor (uncontended: every call has its own order_id) against the same
// service without it, over bufconn, and counts Redis round trips per call
// (client side) and scripts run per call (server side).
func BenchmarkUnaryInterceptor(b *testing.B) {
	env := mwtest.New(b)
	store, err := idempotency.NewStore(env.Redis, idempotency.WithPrefix(env.Prefix+"idem:"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(store.Close)
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) { return r, nil }}
	for _, bc := range []struct {
		name string
		ic   []grpc.UnaryServerInterceptor
	}{
		{"none", nil},
		{"watchdog", []grpc.UnaryServerInterceptor{grpclock.UnaryServerInterceptor(env.LockFunc(), lockOpts(env)...)}},
		{"lease", []grpc.UnaryServerInterceptor{grpclock.UnaryServerInterceptor(env.LockFunc(scriptlock.WithLease(30*time.Second)), lockOpts(env)...)}},
		{"idempotency", []grpc.UnaryServerInterceptor{grpclock.IdempotencyUnaryServerInterceptor(store)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			conn := start(b, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(bc.ic...)},
				grpc.WithChainUnaryInterceptor(grpclock.IdempotencyUnaryClientInterceptor()))
			var n atomic.Int64
			rt0, sc0 := env.Redis.RoundTrips(), env.ScriptCalls(b)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := call(context.Background(), conn, "Pay", order(strconv.FormatInt(n.Add(1), 10), "", 0, "")); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.StopTimer()
			ops := float64(b.N)
			b.ReportMetric(float64(env.Redis.RoundTrips()-rt0)/ops, "roundtrips/op")
			b.ReportMetric(float64(env.ScriptCalls(b)-sc0)/ops, "scripts/op")
		})
	}
}
