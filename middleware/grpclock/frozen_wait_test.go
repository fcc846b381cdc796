package grpclock_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestFrozenRedisWaitUnavailable: a Redis that stops answering while a call
// waits for its free lock is Redis unavailable (Unavailable, or the handler
// runs with WithFailOpen), not Aborted, which would tell the client that
// another call holds the lock.
func TestFrozenRedisWaitUnavailable(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	lc, err := scriptlock.New(px.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	opts := []grpclock.Option{
		grpclock.WithKeyPrefix(redistest.Prefix(t)),
		grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id")),
		grpclock.WithWait(time.Second),
	}
	closed := start(t, &server{unary: fenceReply}, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(grpclock.Mutexes(lc), opts...))})
	open := start(t, &server{unary: fenceReply}, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(grpclock.Mutexes(lc), append(opts, grpclock.WithFailOpen(true))...))})
	px.Freeze()
	t.Cleanup(px.Thaw)
	if _, err := call(context.Background(), closed, "Pay", order("1", "", 0, "")); status.Code(err) != codes.Unavailable {
		t.Errorf("waiting call, Redis frozen: %v, want Unavailable", err)
	}
	if r, err := call(context.Background(), open, "Pay", order("2", "", 0, "")); err != nil || field(r, "note").String() != "unlocked" {
		t.Errorf("waiting call, Redis frozen, WithFailOpen: %v %v, want the handler's answer without the lock", r, err)
	}
}
