package grpclock_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestStreamRecvBlockedDuringLockLoss: a client-streaming handler waits in
// RecvMsg for the next message while its lock is lost. The message that
// arrives after the loss is not handed to it: RecvMsg fails with Aborted, so
// the handler does not act on it without the lock (the handler's RecvMsg
// returns the loss without waiting for the message at all).
func TestStreamRecvBlockedDuringLockLoss(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	ended := make(chan struct{})
	recvErr := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		first := dynamicpb.NewMessage(orderDesc)
		if err := st.RecvMsg(first); err != nil {
			recvErr <- err
			return err
		}
		go func() {
			<-st.Context().Done()
			close(ended)
		}()
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+field(first, "order_id").String()).Key())
		err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)) // blocks until the client sends again
		recvErr <- err
		return err
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks,
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...))})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order("recv-loss", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended: // the loss was seen while the handler waited in RecvMsg
	case <-ctx.Done():
		t.Fatal("the stream's context did not end after its lock was deleted")
	}
	// The handler's RecvMsg returns the loss without waiting for this
	// message, so the call may have ended already: SendMsg then reports
	// io.EOF, and the call's status is read below.
	if err := cs.SendMsg(order("recv-loss", "", 0, "after the loss")); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	select {
	case err := <-recvErr:
		if status.Code(err) != codes.Aborted {
			t.Errorf("RecvMsg of a message sent after the lock was lost: %v, want Aborted", err)
		}
	case <-ctx.Done():
		t.Fatal("the handler's RecvMsg did not return")
	}
	_ = cs.CloseSend()
	if err := cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); status.Code(err) != codes.Aborted {
		t.Errorf("stream whose lock was lost: %v, want Aborted", err)
	}
}
