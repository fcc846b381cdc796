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

// TestStreamLossIgnoredByHandler: a server-streaming handler that ignores
// SendMsg's error (as code written for a client that may go away often
// does) and returns nil once the lock was lost has had messages dropped
// without being sent. The client must not get OK, which would tell it the
// stream it received was whole; it gets Aborted, as when the handler
// returns SendMsg's error.
func TestStreamLossIgnoredByHandler(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	sendErr := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		req := dynamicpb.NewMessage(orderDesc)
		if err := st.RecvMsg(req); err != nil {
			return err
		}
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+field(req, "order_id").String()).Key())
		<-st.Context().Done() // the loss is seen within about 0.1 s
		err := st.SendMsg(order("", "", 0, "after the loss"))
		sendErr <- err
		return nil // SendMsg's error ignored
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks, lockOpts(env)...))})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := conn.NewStream(ctx, &serviceDesc.Streams[0], svc+"Watch")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order("lost-ignored", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	_ = cs.CloseSend()
	n := 0
	for {
		if err = cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			break
		}
		n++
	}
	if serr := <-sendErr; !errors.Is(serr, scriptlock.ErrLockLost) {
		t.Fatalf("SendMsg after the lock was lost: %v, want the loss", serr)
	}
	if errors.Is(err, io.EOF) || status.Code(err) != codes.Aborted {
		t.Errorf("stream whose handler's message was dropped by the loss: %v after %d messages, want Aborted", err, n)
	}
}
