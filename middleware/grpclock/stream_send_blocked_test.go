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
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestStreamSendReturnsOnLockLoss: a handler whose SendMsg waits for a
// client that does not read (gRPC flow control) gets the loss as soon as the
// lock is lost, not when the client reads or goes away: an error that
// errors.Is reports as scriptlock.ErrLockLost, with the Aborted code, and so
// does any later SendMsg. The send left waiting ends with the call. (Not
// parallel: no other test's stream sends while it counts those sends.)
func TestStreamSendReturnsOnLockLoss(t *testing.T) {
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	const id = "send-blocked"
	type result struct {
		err, again error
		at         time.Time
	}
	blocked := make(chan struct{})
	lostAt := make(chan time.Time, 1)
	res := make(chan result, 1)
	big := strings.Repeat("x", 256<<10) // a few fill the client's flow-control window
	s := &server{stream: func(st grpc.ServerStream) error {
		if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			return err
		}
		go func() {
			<-st.Context().Done()
			lostAt <- time.Now()
		}()
		sent := make(chan struct{}, 1)
		go func() { // the lock is deleted once a SendMsg has waited 300 ms
			for {
				select {
				case <-sent:
				case <-time.After(300 * time.Millisecond):
					close(blocked)
					env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+id).Key())
					return
				}
			}
		}()
		for {
			err := st.SendMsg(order("", "", 0, big))
			if err != nil {
				r := result{err: err, at: time.Now()}
				r.again = st.SendMsg(order("", "", 0, "again"))
				res <- r
				return err
			}
			select {
			case sent <- struct{}{}:
			default:
			}
		}
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks,
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
	<-blocked // the client reads nothing until the handler's SendMsg returned
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
		cancel() // let the test end
		r = <-res
		t.Fatalf("SendMsg still blocked 5 s after the lock was lost; it returned %v only once the client went away", r.err)
	}
	if d := r.at.Sub(lost); d > 2*time.Second {
		t.Errorf("SendMsg returned %s after the loss was seen", d)
	}
	if !errors.Is(r.err, scriptlock.ErrLockLost) || status.Code(r.err) != codes.Aborted {
		t.Errorf("SendMsg interrupted by the loss: %v, want Aborted and errors.Is ErrLockLost", r.err)
	}
	if !errors.Is(r.again, scriptlock.ErrLockLost) || status.Code(r.again) != codes.Aborted {
		t.Errorf("SendMsg after the loss: %v, want Aborted and errors.Is ErrLockLost", r.again)
	}
	for {
		if err := cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			if status.Code(err) != codes.Aborted {
				t.Errorf("stream whose lock was lost: %v, want Aborted", err)
			}
			break
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "(*lockedStream).send.func") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a send of a stream whose call ended is still running:\n%s", stacks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
