package grpclock_test

import (
	"context"
	"log/slog"
	"strings"
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

// gatedPanicStream's SendMsg waits for release, then panics with errQuota.
type gatedPanicStream struct {
	grpc.ServerStream
	release <-chan struct{}
}

func (s gatedPanicStream) SendMsg(any) error {
	<-s.release
	panic(errQuota)
}

// TestStreamPanicLetGoLoggedOnce: under two grpclock locks on one stream,
// the handler's SendMsg returns at the loss of the second (inner) lock;
// the call beneath, made under the first, panics later. Its stack, where
// it was raised, is logged once, by the first lock; the second says it let
// the panic go, without a stack of its own, which names only the first
// lock's hand-off and not where the panic was raised. It logged that
// stack beside the first lock's record.
func TestStreamPanicLetGoLoggedOnce(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	const id = "panic-let-go"
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	release := make(chan struct{})
	sending := make(chan struct{})
	handled := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			return err
		}
		close(sending)
		err := st.SendMsg(order("", "", 0, "x"))
		handled <- err
		return err
	}}
	wrapping := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, gatedPanicStream{ss, release})
	}
	method := grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id"))
	second := env.Prefix + "second:"
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(wrapping,
		grpclock.StreamServerInterceptor(locks, lockOpts(env, method, grpclock.WithLogger(log))...),
		grpclock.StreamServerInterceptor(locks, lockOpts(env, grpclock.WithKeyPrefix(second), method, grpclock.WithLogger(log))...))})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order(id, "", 0, "")); err != nil {
		t.Fatal(err)
	}
	<-sending
	env.Node.Do(t, "DEL", env.Mutex(t, second+id).Key())
	select {
	case err := <-handled:
		if status.Code(err) != codes.Aborted {
			t.Fatalf("SendMsg at the inner lock's loss: %v, want Aborted", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SendMsg did not return at the inner lock's loss")
	}
	close(release)
	const letGo = "let go at its lock's loss"
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), letGo) {
		if time.Now().After(deadline) {
			t.Fatalf("the panic let go was not logged:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // another record would be written meanwhile
	out := logs.String()
	stacks := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "stack=") {
			continue
		}
		stacks++
		if !strings.Contains(line, "gatedPanicStream.SendMsg") {
			t.Fatalf("a record of the panic has a stack that does not name gatedPanicStream.SendMsg, where it was raised:\n%s", out)
		}
	}
	if stacks != 1 {
		t.Fatalf("the panic's stack was logged %d times, want once:\n%s", stacks, out)
	}
}
