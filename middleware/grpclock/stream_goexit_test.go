package grpclock_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// goexitStream is a stream whose SendMsg, and RecvMsg after the first
// message, end their goroutine, as a test's t.FailNow in a stream wrapper
// does (runtime.Goexit, which recover does not stop).
type goexitStream struct {
	grpc.ServerStream
	n int
}

func (s *goexitStream) RecvMsg(m any) error {
	if s.n++; s.n > 1 {
		runtime.Goexit()
	}
	return s.ServerStream.RecvMsg(m)
}

func (s *goexitStream) SendMsg(any) error {
	runtime.Goexit()
	return nil
}

// TestStreamGoexitEndsHandler: a SendMsg or RecvMsg made under the
// stream's lock runs on a goroutine of its own; when the call beneath it
// ends its goroutine (runtime.Goexit), the handler's goroutine ends too, as
// without the lock, and the lock is released. It returned nil instead: a
// message reported sent that was not, or an empty message handed over as
// received.
func TestStreamGoexitEndsHandler(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	for _, tc := range []struct {
		name string
		op   func(grpc.ServerStream) error
	}{
		{"send", func(st grpc.ServerStream) error { return st.SendMsg(order("", "", 0, "x")) }},
		{"recv", func(st grpc.ServerStream) error { return st.RecvMsg(dynamicpb.NewMessage(orderDesc)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "goexit-" + tc.name
			returned := make(chan error, 1)
			unwound := make(chan struct{})
			s := &server{stream: func(st grpc.ServerStream) error {
				defer close(unwound)
				if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
					return err
				}
				err := tc.op(st)
				returned <- err
				return err
			}}
			wrapping := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
				return handler(srv, &goexitStream{ServerStream: ss})
			}
			conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(wrapping, grpclock.StreamServerInterceptor(locks,
				lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...))})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.SendMsg(order(id, "", 0, "")); err != nil {
				t.Fatal(err)
			}
			_ = cs.SendMsg(order(id, "", 0, ""))
			select {
			case <-unwound:
			case <-ctx.Done():
				t.Fatal("handler neither returned nor ended")
			}
			select {
			case err := <-returned:
				t.Fatalf("%s whose call beneath ended its goroutine returned %v; want the handler's goroutine ended, as without the lock", tc.name, err)
			default:
			}
			// The lock is released as the handler's goroutine unwinds.
			m := env.Mutex(t, env.Prefix+id)
			deadline := time.Now().Add(10 * time.Second)
			for {
				l, err := m.TryLock(ctx, 0)
				if err == nil {
					_ = m.Unlock(l)
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the stream's lock was not released: %v", err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
