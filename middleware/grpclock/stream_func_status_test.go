package grpclock_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestStreamFuncStatusLaterMessage: a Func key source that refuses a later
// message of a stream with a status of its own (PermissionDenied: the order
// is not the caller's) ends the stream with that status, as it does for the
// first message, reported as key_invalid; grpclock's generic
// InvalidArgument would tell the client its request was malformed.
func TestStreamFuncStatusLaterMessage(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	src := grpclock.Func(func(_ context.Context, _ string, req any) (string, error) {
		m := req.(*dynamicpb.Message)
		if field(m, "note").String() == "foreign" {
			return "", status.Error(codes.PermissionDenied, "order belongs to another account")
		}
		return field(m, "order_id").String(), nil
	})
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
	var mu sync.Mutex
	var outcomes []scriptlock.RequestOutcome
	outcome := func(_ context.Context, o scriptlock.RequestOutcome) {
		mu.Lock()
		defer mu.Unlock()
		outcomes = append(outcomes, o)
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(env.LockFunc(),
		lockOpts(env, grpclock.WithMethod(svc+"Chat", src), grpclock.WithOutcome(outcome))...))})
	bidi := &serviceDesc.Streams[1]
	// The first message refused so: the Func's own status.
	if n, err := watchAll(t, conn, bidi, order("1", "", 0, "foreign")); n != 0 || status.Code(err) != codes.PermissionDenied {
		t.Fatalf("first message refused by the Func: %d messages, %v; want none, PermissionDenied", n, err)
	}
	mu.Lock()
	outcomes = nil
	mu.Unlock()
	n, err := watchAll(t, conn, bidi, order("1", "", 0, ""), order("1", "", 0, "foreign"))
	if st := status.Convert(err); n != 1 || st.Code() != codes.PermissionDenied || st.Message() != "order belongs to another account" {
		t.Fatalf("later message refused by the Func with its own status: %d messages handled, %v; want 1, PermissionDenied %q", n, err, "order belongs to another account")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(outcomes) != 1 || outcomes[0] != scriptlock.RequestKeyInvalid {
		t.Errorf("outcomes %v, want [key_invalid], as for a later message naming another key", outcomes)
	}
}
