package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

var errCallerEnd = errors.New("the caller's own end")

// ctxEnd names what a context's Err or Cause tells.
func ctxEnd(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, ErrLockLost):
		return "lost"
	case errors.Is(err, errCallerEnd):
		return "caller"
	case err == context.Canceled:
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	}
	return "other:" + err.Error()
}

// ctxStory runs seq against a hold of lk and tells what its lock context
// showed along the way. Events: A the caller's context is cancelled with a
// cause, B Unlock, C the lease runs out, T the caller's deadline passes.
// Looks: D Err, E Done and Cause, F a context derived from it (told at the
// end).
func ctxStory(lk interface {
	LockWithLease(context.Context, time.Duration) (context.Context, error)
	Unlock(context.Context) error
}, seq string) (string, error) {
	base, stopBase := context.WithTimeout(context.Background(), 20*time.Second)
	defer stopBase()
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	if strings.Contains(seq, "T") {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, 400*time.Millisecond)
		defer stop()
	}
	lctx, err := lk.LockWithLease(ctx, 900*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer func() { _ = lk.Unlock(lctx) }()
	var out []string
	var kids []context.Context
	for _, s := range seq {
		switch s {
		case 'A':
			cancel(errCallerEnd)
		case 'B':
			_ = lk.Unlock(lctx)
		case 'C':
			time.Sleep(1300 * time.Millisecond)
		case 'T':
			time.Sleep(600 * time.Millisecond)
		case 'D':
			out = append(out, "Err="+ctxEnd(lctx.Err()))
		case 'E':
			st := "open"
			select {
			case <-lctx.Done():
				st = "closed"
			default:
			}
			out = append(out, "Done="+st+",Cause="+ctxEnd(context.Cause(lctx)))
		case 'F':
			k, stop := context.WithCancel(lctx)
			defer stop()
			kids = append(kids, k)
		}
	}
	time.Sleep(50 * time.Millisecond) // a derived context's end may be carried late
	out = append(out, "end Err="+ctxEnd(lctx.Err())+" Cause="+ctxEnd(context.Cause(lctx)))
	for i, k := range kids {
		out = append(out, fmt.Sprintf("derived%d=%s", i, ctxEnd(context.Cause(k))))
	}
	return strings.Join(out, " "), nil
}

// A LeanMutex's lock context, made lazily, tells what a Mutex's tells, made
// at Lock, whatever ends first (the caller's context, with a cause or at its
// deadline, Unlock, the lease) and whatever comes second, whether it is made
// before the first end or only after.
func TestLeanMutexContextMatchesMutex(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	events := "ABCT"
	var seqs []string
	for _, first := range events {
		for _, second := range " " + events {
			if first == second {
				continue
			}
			e1, e2 := string(first), strings.TrimSpace(string(second))
			seqs = append(seqs,
				"F"+e1+"DE"+e2+"DEF", // made before the first end
				e1+"D"+e2+"EF",       // made after the ends
			)
		}
	}
	for i, seq := range seqs {
		t.Run(seq, func(t *testing.T) {
			t.Parallel()
			type story struct {
				s   string
				err error
			}
			got := make(chan story, 1)
			go func() {
				s, err := ctxStory(mustMutex(t, c, fmt.Sprintf("m%d", i)), seq)
				got <- story{s, err}
			}()
			lean, err := ctxStory(mustLean(t, c, fmt.Sprintf("l%d", i)), seq)
			if err != nil {
				t.Fatalf("LeanMutex: %v", err)
			}
			mutex := <-got
			if mutex.err != nil {
				t.Fatalf("Mutex: %v", mutex.err)
			}
			if lean != mutex.s {
				t.Errorf("seq %s\n Mutex:     %s\n LeanMutex: %s", seq, mutex.s, lean)
			}
		})
	}
}
