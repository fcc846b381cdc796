package grpclock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/exampleredis"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// The Example runs against a redis-server started here.
func TestMain(m *testing.M) {
	exampleredis.Main(m, 1)
}

// recovery turns handler panics into Internal, as go-grpc-middleware's recovery does.
func recovery(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = status.Errorf(codes.Internal, "panic: %v", r)
		}
	}()
	return h(ctx, req)
}

// fenceReply answers with the fencing token in num and the note "locked" when
// the context carries one.
func fenceReply(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
	f, ok := scriptlock.Fence(ctx)
	note := "unlocked"
	if ok {
		note = "locked"
	}
	return order("", "", f, note), nil
}

func lockOpts(env *mwtest.Env, extra ...grpclock.Option) []grpclock.Option {
	return append([]grpclock.Option{
		grpclock.WithKeyPrefix(env.Prefix),
		grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id")),
		grpclock.WithMethod(svc+"PayNested", grpclock.Field("order.id")),
		grpclock.WithMethod(svc+"Refund", grpclock.Metadata("x-order-id")),
		grpclock.WithMethod(svc+"Watch", grpclock.Field("orderId")),
	}, extra...)
}

func TestUnaryOutcomes(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	s := &server{unary: fenceReply}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(locks, lockOpts(env)...))})
	ctx := context.Background()

	r1, err := call(ctx, conn, "Pay", order("42", "", 0, ""))
	if err != nil || field(r1, "note").String() != "locked" {
		t.Fatalf("Pay: %v %v", r1, err)
	}
	r2, err := call(ctx, conn, "PayNested", order("", "42", 0, ""))
	if err != nil || field(r2, "num").Int() <= field(r1, "num").Int() {
		t.Fatalf("PayNested on the same key: fence %v after %v, %v", field(r2, "num"), field(r1, "num"), err)
	}
	mdctx := metadata.AppendToOutgoingContext(ctx, "x-order-id", "42")
	if r, err := call(mdctx, conn, "Refund", order("", "", 0, "")); err != nil || field(r, "note").String() != "locked" {
		t.Fatalf("Refund by metadata: %v %v", r, err)
	}
	if r, err := call(ctx, conn, "Ping", order("", "", 0, "")); err != nil || field(r, "note").String() != "unlocked" {
		t.Fatalf("unconfigured method must pass through untouched: %v %v", r, err)
	}

	for name, c := range map[string]struct {
		ctx    context.Context
		method string
		req    proto.Message
	}{
		"missing field":    {ctx, "Pay", order("", "", 0, "")},
		"missing nested":   {ctx, "PayNested", order("7", "", 0, "")},
		"missing metadata": {ctx, "Refund", order("7", "", 0, "")},
		"too long":         {ctx, "Pay", order(strings.Repeat("k", 257), "", 0, "")},
		"control char":     {ctx, "Pay", order("a\x00b", "", 0, "")},
		"zero-width space": {ctx, "Pay", order("1\u200b", "", 0, "")},
		"line separator":   {ctx, "Pay", order("a\u2028b", "", 0, "")},
		"two metadata":     {metadata.AppendToOutgoingContext(ctx, "x-order-id", "1", "x-order-id", "2"), "Refund", order("", "", 0, "")},
	} {
		if _, err := call(c.ctx, conn, c.method, c.req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}

	holder := env.Lock(t, locks, env.Prefix+"busy")
	hctx := scriptlock.WithOwner(ctx, "test-holder")
	if _, err := holder.Lock(hctx); err != nil {
		t.Fatal(err)
	}
	_, err = call(ctx, conn, "Pay", order("busy", "", 0, ""))
	if status.Code(err) != codes.Aborted {
		t.Fatalf("contended: %v, want Aborted", err)
	}
	var retry *errdetails.RetryInfo
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			retry = ri
		}
	}
	if retry == nil || retry.GetRetryDelay().AsDuration() <= 0 {
		t.Errorf("contended: no positive RetryInfo in %v", status.Convert(err).Details())
	}
	_ = holder.Unlock(hctx)
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}

func TestUnaryWaitAllMethodsFailOpen(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	var ran atomic.Int64
	s := &server{unary: func(ctx context.Context, m string, r *dynamicpb.Message) (proto.Message, error) {
		ran.Add(1)
		return fenceReply(ctx, m, r)
	}}
	closed := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(locks,
		grpclock.WithKeyPrefix(env.Prefix), grpclock.WithAllMethods(grpclock.Field("order_id")), grpclock.WithWait(3*time.Second)))})
	open := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(locks,
		grpclock.WithKeyPrefix(env.Prefix), grpclock.WithAllMethods(grpclock.Field("order_id")), grpclock.WithFailOpen(true)))})
	ctx := context.Background()

	holder := env.Lock(t, locks, env.Prefix+"1")
	hctx := scriptlock.WithOwner(ctx, "test-holder")
	if _, err := holder.Lock(hctx); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, func() { _ = holder.Unlock(hctx) })
	if r, err := call(ctx, closed, "Ping", order("1", "", 0, "")); err != nil || field(r, "note").String() != "locked" {
		t.Fatalf("WithAllMethods + wait: %v %v", r, err)
	}

	env.Node.Kill()
	before := ran.Load()
	if _, err := call(ctx, closed, "Pay", order("1", "", 0, "")); status.Code(err) != codes.Unavailable {
		t.Errorf("Redis down: %v, want Unavailable", err)
	}
	if ran.Load() != before {
		t.Error("handler ran without the lock")
	}
	if r, err := call(ctx, open, "Pay", order("1", "", 0, "")); err != nil || field(r, "note").String() != "unlocked" {
		t.Errorf("fail open: %v %v", r, err)
	}
}

func TestUnaryLockLostAndPanic(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	causes := make(chan error, 1)
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		id := field(r, "order_id").String()
		if id == "panic" {
			panic("boom")
		}
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+id).Key())
		select {
		case <-ctx.Done():
			causes <- context.Cause(ctx)
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-time.After(5 * time.Second):
			causes <- nil
			return order("", "", 0, "done"), nil
		}
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(recovery, grpclock.UnaryServerInterceptor(locks, lockOpts(env)...))})
	_, err := call(context.Background(), conn, "Pay", order("lost", "", 0, ""))
	if cause := <-causes; !errors.Is(cause, scriptlock.ErrLockLost) {
		t.Errorf("handler context cause %v, want ErrLockLost", cause)
	}
	if status.Code(err) != codes.Aborted {
		t.Errorf("lock lost: %v, want Aborted", err)
	}
	for range 3 {
		if _, err := call(context.Background(), conn, "Pay", order("panic", "", 0, "")); status.Code(err) != codes.Internal {
			t.Errorf("panic: %v, want Internal from the recovery interceptor", err)
		}
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}

func TestStream(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	var overlap, inside atomic.Int32
	s := &server{stream: func(st grpc.ServerStream) error {
		req := dynamicpb.NewMessage(orderDesc)
		if err := st.RecvMsg(req); err != nil {
			return err
		}
		if inside.Add(1) > 1 {
			overlap.Add(1)
		}
		defer inside.Add(-1)
		f, ok := scriptlock.Fence(st.Context())
		if !ok {
			return status.Error(codes.Internal, "no fencing token in the stream context")
		}
		for i := range 3 {
			time.Sleep(time.Millisecond)
			if err := st.SendMsg(order("", "", f, fmt.Sprint(i))); err != nil {
				return err
			}
		}
		return nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks, append(lockOpts(env), grpclock.WithWait(5*time.Second))...))})
	watch := func(id string) (int, error) {
		cs, err := conn.NewStream(context.Background(), &serviceDesc.Streams[0], svc+"Watch")
		if err != nil {
			return 0, err
		}
		if err := cs.SendMsg(order(id, "", 0, "")); err != nil {
			return 0, err
		}
		_ = cs.CloseSend()
		n := 0
		for {
			m := dynamicpb.NewMessage(orderDesc)
			if err := cs.RecvMsg(m); err != nil {
				if status.Code(err) == codes.OK || err.Error() == "EOF" {
					return n, nil
				}
				return n, err
			}
			n++
		}
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if n, err := watch("s1"); err != nil || n != 3 {
				t.Errorf("watch: %d messages, %v", n, err)
			}
		})
	}
	wg.Wait()
	if overlap.Load() != 0 {
		t.Errorf("%d overlapping streams on one key", overlap.Load())
	}
	if _, err := watch(""); status.Code(err) != codes.InvalidArgument {
		t.Errorf("missing key: %v, want InvalidArgument", err)
	}
	holder := env.Lock(t, locks, env.Prefix+"busy")
	hctx := scriptlock.WithOwner(context.Background(), "test-holder")
	if _, err := holder.TryLock(hctx, 0); err != nil {
		t.Fatal(err)
	}
	nowait := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks, lockOpts(env)...))})
	conn = nowait
	if _, err := watch("busy"); status.Code(err) != codes.Aborted {
		t.Errorf("contended stream: %v, want Aborted", err)
	}
	_ = holder.Unlock(hctx)
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}

func TestStreamLockLost(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	causes := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		req := dynamicpb.NewMessage(orderDesc)
		if err := st.RecvMsg(req); err != nil {
			return err
		}
		ctx := st.Context()
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+field(req, "order_id").String()).Key())
		select {
		case <-ctx.Done():
			causes <- context.Cause(ctx)
			return status.FromContextError(ctx.Err()).Err()
		case <-time.After(5 * time.Second):
			causes <- nil
			return nil
		}
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks, lockOpts(env)...))})
	cs, err := conn.NewStream(context.Background(), &serviceDesc.Streams[0], svc+"Watch")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order("lost", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	_ = cs.CloseSend()
	err = cs.RecvMsg(dynamicpb.NewMessage(orderDesc))
	if cause := <-causes; !errors.Is(cause, scriptlock.ErrLockLost) {
		t.Errorf("stream context cause %v, want ErrLockLost", cause)
	}
	if status.Code(err) != codes.Aborted {
		t.Errorf("stream with lost lock: %v, want Aborted", err)
	}
}

// With fail-open, only an unreachable Redis runs the handler without the
// lock: a request whose lock name is held by another kind of lock fails with
// Unavailable and the handler does not run.
func TestFailOpenOnlyWhenUnreachable(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	var ran atomic.Int64
	s := &server{unary: func(ctx context.Context, m string, r *dynamicpb.Message) (proto.Message, error) {
		ran.Add(1)
		return fenceReply(ctx, m, r)
	}}
	open := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(locks,
		grpclock.WithKeyPrefix(env.Prefix), grpclock.WithAllMethods(grpclock.Field("order_id")), grpclock.WithFailOpen(true)))})
	env.Node.Do(t, "SET", env.Mutex(t, env.Prefix+"7").Key(), "someone-else")
	if _, err := call(context.Background(), open, "Pay", order("7", "", 0, "")); status.Code(err) != codes.Unavailable {
		t.Errorf("lock name held by another kind, fail open: %v, want Unavailable", err)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handler ran %d times without the lock while Redis was reachable", n)
	}
}
