package grpclock_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

func retryDelay(err error) time.Duration {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration()
		}
	}
	return 0
}

// TestLostCarriesRetryInfo: a call whose lock, or idempotency claim, was
// lost while its handler ran and failed is answered Aborted with a
// RetryInfo (the lock's WithRetryAfter, the claim's 1 s), as echolock's 503
// for a lost lock or claim carries Retry-After. It carried none.
func TestLostCarriesRetryInfo(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	store := env.Store(t, idempotency.WithClaimTTL(600*time.Millisecond))
	s := &server{unary: func(ctx context.Context, method string, r *dynamicpb.Message) (proto.Message, error) {
		if method == svc+"Pay" {
			env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+field(r, "order_id").String()).Key())
		} else {
			env.Node.Do(t, "DEL", store.RecordKey(idempotency.AnonymousScope, "K"))
		}
		select {
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-time.After(5 * time.Second):
			return order("", "", 0, "done"), nil
		}
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(svc+"Ping")),
		grpclock.UnaryServerInterceptor(locks, lockOpts(env, grpclock.WithRetryAfter(2*time.Second))...))})
	if _, err := call(context.Background(), conn, "Pay", order("lost", "", 0, "")); status.Code(err) != codes.Aborted || retryDelay(err) != 2*time.Second {
		t.Errorf("lock lost: %v with RetryInfo delay %s; want Aborted with a RetryInfo of 2s", err, retryDelay(err))
	}
	if _, err := call(withKey("K"), conn, "Ping", order("1", "", 0, "")); status.Code(err) != codes.Aborted || retryDelay(err) != time.Second {
		t.Errorf("claim lost: %v with RetryInfo delay %s; want Aborted with a RetryInfo of 1s", err, retryDelay(err))
	}
}
