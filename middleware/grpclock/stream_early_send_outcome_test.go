package grpclock_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestStreamSendBeforeLockOutcome: a stream keyed by its first message whose
// handler sends before receiving it is refused for want of the key its
// answer needed, and reported once as key_invalid, as a stream refused
// because its client sent no message is; neither takes a lock afterwards.
func TestStreamSendBeforeLockOutcome(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var mu sync.Mutex
	var got []scriptlock.RequestOutcome
	report := func(_ context.Context, o scriptlock.RequestOutcome) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, o)
	}
	take := func() []scriptlock.RequestOutcome {
		mu.Lock()
		defer mu.Unlock()
		g := got
		got = nil
		return g
	}
	s := &server{stream: func(st grpc.ServerStream) error {
		_ = st.SendMsg(order("", "", 0, "before the lock"))
		_ = st.SendMsg(order("", "", 0, "again"))
		return echoAll(st) // the errors are ignored
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(env.LockFunc(),
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")), grpclock.WithOutcome(report))...))})
	if n, err := watchAll(t, conn, &serviceDesc.Streams[1], order("1", "", 0, ""), order("1", "", 0, "")); n != 0 || status.Code(err) != codes.Internal {
		t.Errorf("stream that sent before its lock: %d messages, %v; want none and Internal", n, err)
	}
	if o, want := take(), []scriptlock.RequestOutcome{scriptlock.RequestKeyInvalid}; !slices.Equal(o, want) {
		t.Errorf("stream that sent before its lock: outcomes %v, want %v", o, want)
	}

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
	if o, want := take(), []scriptlock.RequestOutcome{scriptlock.RequestKeyInvalid, scriptlock.RequestLocked}; !slices.Equal(o, want) {
		t.Errorf("outcomes %v, want %v", o, want)
	}
}
