package grpclock_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
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

// TestStreamRecvReturnsOnLockLoss: a handler waiting in RecvMsg for a
// message the client has not sent yet gets the loss as soon as the lock is
// lost, not when the client next sends or closes: an error that errors.Is
// reports as scriptlock.ErrLockLost, with the Aborted code. A later RecvMsg
// fails the same way at once, and a message the client sends after the loss
// is never handed to the handler. The receive left waiting for the client
// ends with the call. (Not parallel: no other test's stream receives while it
// counts those receives.)
func TestStreamRecvReturnsOnLockLoss(t *testing.T) {
	t.Run("group", func(t *testing.T) { streamRecvReturnsOnLockLoss(t) })
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "(*lockedStream).recv.func") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a receive of a stream whose call ended is still running:\n%s", stacks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func streamRecvReturnsOnLockLoss(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  grpclock.KeySource
		// blocked in the first RecvMsg (metadata key: the lock is held
		// before the handler runs) or in the second (field key).
		first bool
	}{
		{"field key", grpclock.Field("order_id"), false},
		{"metadata key", grpclock.Metadata("x-order-id"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := mwtest.New(t)
			locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
			const id = "recv-blocked"
			type result struct {
				err, again error
				late       string // what the message passed to the interrupted RecvMsg holds at the end
				at         time.Time
			}
			lostAt := make(chan time.Time, 1)
			res := make(chan result, 1)
			s := &server{stream: func(st grpc.ServerStream) error {
				if !tc.first {
					if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
						return err
					}
				}
				go func() {
					<-st.Context().Done()
					lostAt <- time.Now()
				}()
				env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+id).Key())
				m := dynamicpb.NewMessage(orderDesc)
				err := st.RecvMsg(m) // the client sends nothing until this returned
				r := result{err: err, at: time.Now()}
				r.again = st.RecvMsg(dynamicpb.NewMessage(orderDesc))
				time.Sleep(300 * time.Millisecond) // room for a late message to be written into m
				r.late = field(m, "note").String()
				res <- r
				return err
			}}
			conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks,
				lockOpts(env, grpclock.WithMethod(svc+"Chat", tc.src))...))})
			ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "x-order-id", id), 20*time.Second)
			defer cancel()
			cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
			if err != nil {
				t.Fatal(err)
			}
			if !tc.first {
				if err := cs.SendMsg(order(id, "", 0, "")); err != nil {
					t.Fatal(err)
				}
			}
			var lost time.Time
			select {
			case lost = <-lostAt:
			case <-ctx.Done():
				t.Fatal("the stream's context did not end after its lock was deleted")
			}
			var r result
			select {
			case r = <-res:
			case <-time.After(5 * time.Second):
				_ = cs.SendMsg(order(id, "", 0, "late")) // let the test end
				r = <-res
				t.Fatalf("RecvMsg still blocked 5 s after the lock was lost; it returned %v only once the client sent again", r.err)
			}
			// The client sends only now: the message reaches a stream whose
			// handler was told of the loss, and must not be handed over.
			_ = cs.SendMsg(order(id, "", 0, "late"))
			if d := r.at.Sub(lost); d > 2*time.Second {
				t.Errorf("RecvMsg returned %s after the loss was seen", d)
			}
			if !errors.Is(r.err, scriptlock.ErrLockLost) || status.Code(r.err) != codes.Aborted {
				t.Errorf("RecvMsg interrupted by the loss: %v, want Aborted and errors.Is ErrLockLost", r.err)
			}
			if !errors.Is(r.again, scriptlock.ErrLockLost) || status.Code(r.again) != codes.Aborted {
				t.Errorf("RecvMsg after the loss: %v, want Aborted and errors.Is ErrLockLost", r.again)
			}
			if r.late != "" {
				t.Errorf("a message sent after the loss was written into the handler's message: %q", r.late)
			}
			_ = cs.CloseSend()
			if err := cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); status.Code(err) != codes.Aborted {
				t.Errorf("stream whose lock was lost: %v, want Aborted", err)
			}
		})
	}
}
