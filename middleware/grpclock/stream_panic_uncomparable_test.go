package grpclock_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// faults is a panic value of an uncomparable type (a slice), as an error
// gathering several is often written.
type faults []string

func (f faults) Error() string { return strings.Join(f, "; ") }

// TestStreamPanicUncomparableLoggedOnce: under two grpclock locks on one
// stream, the panic of the call beneath SendMsg, of a value that == cannot
// compare (a slice, a map), is logged once, with the stack where it was
// raised, as one of a comparable value is. The outer lock logged it a
// second time, with a stack naming only the inner one's hand-off.
func TestStreamPanicUncomparableLoggedOnce(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	const logged = "panic recovered in a stream call made under the lock"
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"slice", faults{"disk full", "quota"}},
		{"map", map[string]int{"quota": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			got := make(chan any, 1)
			recovering := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
				defer func() {
					if v := recover(); v != nil {
						got <- v
						err = status.Error(codes.Internal, fmt.Sprint(v))
					}
				}()
				return handler(srv, ss)
			}
			wrapping := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
				return handler(srv, &faultStream{ServerStream: ss, v: tc.v})
			}
			s := &server{stream: func(st grpc.ServerStream) error {
				if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
					return err
				}
				return st.SendMsg(order("", "", 0, "x"))
			}}
			method := grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id"))
			conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(recovering, wrapping,
				grpclock.StreamServerInterceptor(locks, lockOpts(env, method, grpclock.WithLogger(log))...),
				grpclock.StreamServerInterceptor(locks, lockOpts(env, grpclock.WithKeyPrefix(env.Prefix+"second:"), method, grpclock.WithLogger(log))...))})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.SendMsg(order("panic-uncomparable-"+tc.name, "", 0, "")); err != nil {
				t.Fatal(err)
			}
			if err := cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); status.Code(err) != codes.Internal {
				t.Fatalf("stream whose wrapper panicked: %v, want Internal (the recovery interceptor's)", err)
			}
			if v := <-got; fmt.Sprint(v) != fmt.Sprint(tc.v) {
				t.Fatalf("recovered %T %v, want the value raised", v, v)
			}
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(logs.String(), logged) {
				if time.Now().After(deadline) {
					t.Fatalf("the panic carried to the handler was not logged:\n%s", logs.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // a second record would be written meanwhile
			if out := logs.String(); strings.Count(out, logged) != 1 || !strings.Contains(out, "(*faultStream).SendMsg") {
				t.Fatalf("the panic was logged %d times, want once, with the stack naming (*faultStream).SendMsg:\n%s", strings.Count(out, logged), out)
			}
		})
	}
}
