package grpclock_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestUnavailableCarriesRetryInfo: with Redis down, the lock interceptor's
// and the idempotency interceptor's Unavailable carry a RetryInfo (the lock's
// WithRetryAfter, the store's 1 s), as echolock's 503s carry Retry-After
// and grpclock's own Aborted for a contended lock or a call in flight
// carries RetryInfo. They carried none: a client honouring RetryInfo had no
// hint when to come back.
func TestUnavailableCarriesRetryInfo(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store, err := idempotency.NewStore(env.Node.Client(t), idempotency.WithPrefix(env.Prefix), idempotency.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	quiet := slog.New(slog.DiscardHandler)
	s := &server{unary: fenceReply}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(svc+"Refund"), grpclock.WithIdempotencyLogger(quiet)),
		grpclock.UnaryServerInterceptor(env.LockFunc(), grpclock.WithKeyPrefix(env.Prefix), grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id")),
			grpclock.WithRetryAfter(2*time.Second), grpclock.WithLogger(quiet)))})
	env.Node.Kill()
	for _, c := range []struct {
		ctx    context.Context
		method string
		delay  time.Duration
	}{
		{context.Background(), "Pay", 2 * time.Second},
		{withKey("K1"), "Refund", time.Second},
	} {
		_, err := call(c.ctx, conn, c.method, order("1", "", 0, ""))
		st := status.Convert(err)
		var delay time.Duration
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				delay = ri.GetRetryDelay().AsDuration()
			}
		}
		if st.Code() != codes.Unavailable || delay != c.delay {
			t.Errorf("%s with Redis down: %v with RetryInfo delay %s; want Unavailable with a RetryInfo of %s", c.method, err, delay, c.delay)
		}
	}
}
