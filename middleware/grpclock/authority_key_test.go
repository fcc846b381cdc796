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

// TestAuthorityKeySpellings: a Metadata(":authority") key is locked in one
// spelling per host, as echolock's "header:Host" is: in lower case, without
// an empty port or port 80 or 443. A call to "SHOP-A.example:443" works on
// the site shop-a.example and waits for its lock; another port or host is
// another key.
func TestAuthorityKeySpellings(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	ctx := context.Background()
	m := env.Mutex(t, env.Prefix+"shop-a.example")
	if _, err := m.TryLock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Unlock(context.WithoutCancel(ctx)) })
	opts := []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(locks,
		grpclock.WithKeyPrefix(env.Prefix), grpclock.WithMethod(svc+"Pay", grpclock.Metadata(":authority"))))}
	for authority, want := range map[string]codes.Code{
		"shop-a.example": codes.Aborted, "SHOP-A.example": codes.Aborted, "Shop-A.Example:443": codes.Aborted,
		"shop-a.example:80": codes.Aborted, "shop-a.example:8443": codes.OK, "shop-b.example": codes.OK,
	} {
		conn := start(t, &server{unary: fenceReply}, opts, grpc.WithAuthority(authority))
		if _, err := call(ctx, conn, "Pay", order("", "", 0, "")); status.Code(err) != want {
			t.Errorf(":authority %s while shop-a.example is locked: %v, want %v", authority, err, want)
		}
	}
}
