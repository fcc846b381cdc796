package grpclock_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// echoAll receives until the client closes and answers each message.
func echoAll(st grpc.ServerStream) error {
	for {
		req := dynamicpb.NewMessage(orderDesc)
		if err := st.RecvMsg(req); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if err := st.SendMsg(order("", "", 0, "handled")); err != nil {
			return err
		}
	}
}

// TestStreamSendBeforeLock: a stream locked on its first message's key has
// no lock before that message is received, so a SendMsg before it would
// answer outside the lock. It fails with Internal and sends nothing, and the
// call ends with it even when the handler ignores the error and goes on.
// Headers may still be sent first (a client may wait for them before it
// sends its first message).
func TestStreamSendBeforeLock(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	early := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		if err := st.SendHeader(metadata.Pairs("x-ready", "1")); err != nil {
			return err
		}
		early <- st.SendMsg(order("", "", 0, "before the lock"))
		return echoAll(st) // the error is ignored
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(env.LockFunc(),
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...))})
	n, err := watchAll(t, conn, &serviceDesc.Streams[1], order("1", "", 0, ""), order("1", "", 0, ""))
	if eerr := <-early; status.Code(eerr) != codes.Internal {
		t.Errorf("SendMsg before the first message was received: %v, want Internal", eerr)
	}
	if n != 0 || status.Code(err) != codes.Internal {
		t.Errorf("stream that sent before its lock: %d messages, %v; want none and Internal", n, err)
	}

	// Sending after the first message is received is the ordinary case.
	s.stream = echoAll
	if n, err := watchAll(t, conn, &serviceDesc.Streams[1], order("1", "", 0, ""), order("1", "", 0, "")); n != 2 || err != nil {
		t.Errorf("stream that received first: %d messages, %v; want 2, OK", n, err)
	}
	if n, err := watchAll(t, conn, &serviceDesc.Streams[1]); n != 0 || err != nil {
		t.Errorf("stream without messages: %d messages, %v; want none, OK", n, err)
	}

	// A client that sends no message names no lock: an answer to it is
	// refused as a first message without a key is.
	s.stream = func(st grpc.ServerStream) error {
		if err := echoAll(st); err != nil {
			return err
		}
		return st.SendMsg(order("", "", 0, "summary"))
	}
	if n, err := watchAll(t, conn, &serviceDesc.Streams[1]); n != 0 || status.Code(err) != codes.InvalidArgument {
		t.Errorf("answer to a stream without messages: %d messages, %v; want none and InvalidArgument", n, err)
	}
	if n, err := watchAll(t, conn, &serviceDesc.Streams[1], order("1", "", 0, "")); n != 2 || err != nil {
		t.Errorf("summary after a locked stream: %d messages, %v; want 2, OK", n, err)
	}
}

// TestStreamSendBeforeLockMetadataKey: a stream keyed by metadata is locked
// before its handler runs, so it may send first.
func TestStreamSendBeforeLockMetadataKey(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	s := &server{stream: func(st grpc.ServerStream) error {
		if err := st.SendMsg(order("", "", 0, "greeting")); err != nil {
			return err
		}
		return echoAll(st)
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(env.LockFunc(),
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Metadata("x-order-id")))...))})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-order-id", "1")
	cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order("", "", 0, "")); err != nil {
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
	if n != 2 || !errors.Is(err, io.EOF) {
		t.Errorf("metadata-keyed stream sending first: %d messages, %v; want 2, EOF", n, err)
	}
}

// TestStreamSendAfterFailOpen: a stream that fails open on its first message
// (Redis unreachable, WithFailOpen) runs without the lock by choice, so its
// answers are sent.
func TestStreamSendAfterFailOpen(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	conn := start(t, &server{stream: echoAll}, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(env.LockFunc(),
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")), grpclock.WithFailOpen(true))...))})
	env.Node.Kill()
	if n, err := watchAll(t, conn, &serviceDesc.Streams[1], order("1", "", 0, ""), order("1", "", 0, "")); n != 2 || err != nil {
		t.Errorf("stream failing open: %d messages, %v; want 2, OK", n, err)
	}
}
