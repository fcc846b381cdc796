package grpclock_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// gatedLocker signals once the lock is taken and returns it only when gate
// closes, as a TryLock whose reply is slow to reach its caller would.
type gatedLocker struct {
	scriptlock.Locker
	taken chan<- struct{}
	gate  <-chan struct{}
}

func (l gatedLocker) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	lctx, err := l.Locker.TryLock(ctx, wait)
	if err == nil {
		l.taken <- struct{}{}
		<-l.gate
	}
	return lctx, err
}

// TestStreamLockTakenAfterHandlerReturned: a bidirectional handler receives
// on another goroutine and returns while that goroutine's first message is
// having its lock taken. The lock, granted after the call ended, is released
// at once; nothing else would release it, and the watchdog renewed it for as
// long as the process ran.
func TestStreamLockTakenAfterHandlerReturned(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	inner := env.LockFunc()
	taken, gate := make(chan struct{}, 1), make(chan struct{})
	locks := func(key string) (scriptlock.Locker, error) {
		l, err := inner(key)
		if err != nil {
			return nil, err
		}
		return gatedLocker{l, taken, gate}, nil
	}
	recvDone := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		go func() { recvDone <- st.RecvMsg(dynamicpb.NewMessage(orderDesc)) }()
		<-taken
		return nil // done before the receiving goroutine got its lock
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks,
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...))})
	if n, err := watchAll(t, conn, &serviceDesc.Streams[1], order("late", "", 0, "")); n != 0 || err != nil {
		t.Fatalf("call: %d messages, %v; want none, OK", n, err)
	}
	close(gate)
	if err := <-recvDone; err == nil {
		t.Error("RecvMsg whose lock was taken after the call ended succeeded")
	}
	key := env.Mutex(t, env.Prefix+"late").Key()
	deadline := time.Now().Add(3 * time.Second)
	for {
		n, err := env.Node.Do(t, "EXISTS", key).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lock %s taken after the call ended is still held 3 s later", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
