package grpclock_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// watchAll opens Watch with desc, sends msgs, and reads until the stream ends:
// the messages received and the final error (nil for OK).
func watchAll(t *testing.T, conn *grpc.ClientConn, desc *grpc.StreamDesc, msgs ...*dynamicpb.Message) (int, error) {
	t.Helper()
	cs, err := conn.NewStream(context.Background(), desc, svc+"Watch")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := cs.SendMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	_ = cs.CloseSend()
	n := 0
	for {
		if err = cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return n, err
		}
		n++
	}
}

// TestStreamRefusedLockEnds: a stream whose lock (keyed by its first
// message) is refused ends with the refusal, also when the handler ignores
// RecvMsg's error: its SendMsg fails, so nothing is sent without the lock,
// and the call does not end OK.
func TestStreamRefusedLockEnds(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	sendErr := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		_ = st.RecvMsg(dynamicpb.NewMessage(orderDesc)) // error ignored
		err := st.SendMsg(order("", "", 0, "sent without the lock"))
		sendErr <- err
		return nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks, lockOpts(env)...))})
	if _, err := env.Mutex(t, env.Prefix+"busy").Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	n, err := watchAll(t, conn, &serviceDesc.Streams[0], order("busy", "", 0, ""))
	if serr := <-sendErr; status.Code(serr) != codes.Aborted {
		t.Errorf("SendMsg after the lock was refused: %v, want Aborted", serr)
	}
	if n != 0 || status.Code(err) != codes.Aborted {
		t.Errorf("stream whose lock was refused: %d messages, %v; want none and Aborted", n, err)
	}
}
