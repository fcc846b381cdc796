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

// watchAll opens the stream desc names, sends msgs, and reads until the stream ends:
// the messages received and the final error (nil for OK).
func watchAll(t *testing.T, conn *grpc.ClientConn, desc *grpc.StreamDesc, msgs ...*dynamicpb.Message) (int, error) {
	t.Helper()
	cs, err := conn.NewStream(context.Background(), desc, svc+desc.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := cs.SendMsg(m); err != nil {
			if errors.Is(err, io.EOF) {
				// The server ended the stream (a refusal can come before the
				// client's last message); RecvMsg answers its status.
				break
			}
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

// TestStreamLaterMessageOtherKey: in a client stream locked by its first
// message's key, a later message naming another key is refused with
// InvalidArgument (it would be handled under the first key's lock, not its
// own); later messages with the same key or none are received.
func TestStreamLaterMessageOtherKey(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	s := &server{stream: func(st grpc.ServerStream) error {
		for {
			req := dynamicpb.NewMessage(orderDesc)
			if err := st.RecvMsg(req); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			if err := st.SendMsg(order(field(req, "order_id").String(), "", 0, "handled")); err != nil {
				return err
			}
		}
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(env.LockFunc(),
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...))})
	bidi := &serviceDesc.Streams[1]
	if n, err := watchAll(t, conn, bidi, order("1", "", 0, ""), order("1", "", 0, "again"), order("", "", 0, "data")); n != 3 || err != nil {
		t.Errorf("same key, then none: %d messages, %v; want 3, OK", n, err)
	}
	n, err := watchAll(t, conn, bidi, order("1", "", 0, ""), order("2", "", 0, ""), order("2", "", 0, ""))
	if n != 1 || status.Code(err) != codes.InvalidArgument {
		t.Errorf("another key in a later message: %d messages handled, %v; want 1, InvalidArgument", n, err)
	}
}
