package grpclock_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// signalLocker tells when an acquisition starts and when the lock is held,
// and stays a while in TryLock after the lock was taken, as a slow network
// or scheduler would.
type signalLocker struct {
	scriptlock.Locker
	started, taken func()
}

func (l signalLocker) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	l.started()
	lctx, err := l.Locker.TryLock(ctx, wait)
	if err == nil {
		l.taken()
		time.Sleep(50 * time.Millisecond)
	}
	return lctx, err
}

// TestStreamSendDuringAcquisition: a bidirectional handler sends on one
// goroutine and receives on another. A SendMsg that starts once the first
// message was received, while its lock is being taken or just after, waits
// for the lock and is sent under it: only a SendMsg before the first message
// is received fails.
func TestStreamSendDuringAcquisition(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	inner := env.LockFunc()
	for _, after := range []string{"started", "taken"} {
		t.Run(after, func(t *testing.T) {
			started, taken := make(chan struct{}), make(chan struct{})
			var once1, once2 sync.Once
			locks := func(key string) (scriptlock.Locker, error) {
				l, err := inner(key)
				if err != nil {
					return nil, err
				}
				return signalLocker{l, func() { once1.Do(func() { close(started) }) }, func() { once2.Do(func() { close(taken) }) }}, nil
			}
			sendErr := make(chan error, 1)
			s := &server{stream: func(st grpc.ServerStream) error {
				go func() {
					if after == "started" {
						<-started
					} else {
						<-taken
					}
					sendErr <- st.SendMsg(order("", "", 0, "from the sender"))
				}()
				for {
					if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); errors.Is(err, io.EOF) {
						break
					} else if err != nil {
						return err
					}
				}
				return <-sendErr
			}}
			conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks,
				lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...))})
			n, err := watchAll(t, conn, &serviceDesc.Streams[1], order("race-"+after, "", 0, ""))
			if n != 1 || err != nil {
				t.Errorf("SendMsg after the acquisition %s: %d messages, %v; want 1, OK", after, n, err)
			}
		})
	}
}

// TestStreamSendDuringRefusedAcquisition: a SendMsg waiting for the first
// message's lock fails with the refusal when the lock is refused.
func TestStreamSendDuringRefusedAcquisition(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	inner := env.LockFunc()
	started := make(chan struct{})
	var once sync.Once
	locks := func(key string) (scriptlock.Locker, error) {
		l, err := inner(key)
		if err != nil {
			return nil, err
		}
		return signalLocker{l, func() { once.Do(func() { close(started) }) }, func() {}}, nil
	}
	if _, err := env.Mutex(t, env.Prefix+"held").Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	sendErr := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		go func() {
			<-started
			sendErr <- st.SendMsg(order("", "", 0, "from the sender"))
		}()
		_ = st.RecvMsg(dynamicpb.NewMessage(orderDesc))
		<-sendErr
		return nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks,
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")), grpclock.WithWait(200*time.Millisecond))...))})
	n, err := watchAll(t, conn, &serviceDesc.Streams[1], order("held", "", 0, ""))
	if n != 0 || status.Code(err) != codes.Aborted {
		t.Errorf("SendMsg while a contended lock is awaited: %d messages, %v; want none, Aborted", n, err)
	}
}

// TestStreamSendDuringFailOpenAcquisition: with WithFailOpen and Redis
// unreachable, a SendMsg waiting for the first message's lock is sent once
// the stream fails open.
func TestStreamSendDuringFailOpenAcquisition(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	inner := env.LockFunc()
	started := make(chan struct{})
	var once sync.Once
	locks := func(key string) (scriptlock.Locker, error) {
		l, err := inner(key)
		if err != nil {
			return nil, err
		}
		return signalLocker{l, func() { once.Do(func() { close(started) }) }, func() {}}, nil
	}
	sendErr := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		go func() {
			<-started
			sendErr <- st.SendMsg(order("", "", 0, "from the sender"))
		}()
		for {
			if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return err
			}
		}
		return <-sendErr
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks,
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")), grpclock.WithFailOpen(true))...))})
	env.Node.Kill()
	if n, err := watchAll(t, conn, &serviceDesc.Streams[1], order("open", "", 0, "")); n != 1 || err != nil {
		t.Errorf("SendMsg while the stream fails open: %d messages, %v; want 1, OK", n, err)
	}
}

// TestStreamEmptyTrailerOnly: a client that closes its stream without a
// message gets the handler's status and trailer when the handler sends no
// message.
func TestStreamEmptyTrailerOnly(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	s := &server{stream: func(st grpc.ServerStream) error {
		if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); !errors.Is(err, io.EOF) {
			return err
		}
		st.SetTrailer(metadata.Pairs("x-summary", "none"))
		return nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(env.LockFunc(),
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...))})
	cs, err := conn.NewStream(context.Background(), &serviceDesc.Streams[1], svc+"Chat")
	if err != nil {
		t.Fatal(err)
	}
	_ = cs.CloseSend()
	if err := cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); !errors.Is(err, io.EOF) {
		t.Errorf("empty stream answered with a trailer only: %v, want OK", err)
	}
	if got := cs.Trailer().Get("x-summary"); len(got) != 1 || got[0] != "none" {
		t.Errorf("trailer %v", cs.Trailer())
	}
}
