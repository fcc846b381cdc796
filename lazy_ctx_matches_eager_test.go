package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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
		ctx, stop = context.WithTimeout(ctx, 600*time.Millisecond)
		defer stop()
	}
	lctx, err := lk.LockWithLease(ctx, 2*time.Second)
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
			time.Sleep(2600 * time.Millisecond)
		case 'T':
			// At least 600 ms past the deadline, which a loaded machine's
			// timers carry to the lock context in, and well inside the lease.
			time.Sleep(1200 * time.Millisecond)
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
	time.Sleep(300 * time.Millisecond) // a derived context's end may be carried late
	out = append(out, "end Err="+ctxEnd(lctx.Err())+" Cause="+ctxEnd(context.Cause(lctx)))
	for i, k := range kids {
		out = append(out, fmt.Sprintf("derived%d=%s", i, ctxEnd(context.Cause(k))))
	}
	return strings.Join(out, " "), nil
}

// The lock context of every kind of lock (lazyKinds), made lazily, tells
// what the same kind's lock context made at Lock tells (a Client with
// eagerLockCtx), whatever ends first (the caller's context, with a cause or
// at its deadline, Unlock, the lease) and whatever comes second, whether it
// is made before the first end or only after.
func TestLazyContextMatchesEager(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	eager := newTestClient(t, node.Client(t))
	eager.eagerLockCtx = true
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
	kinds := lazyKinds()
	for i, seq := range seqs {
		t.Run(seq, func(t *testing.T) {
			t.Parallel()
			type story struct {
				lazy, eager string
				err         error
			}
			// Every kind's two stories at once: each sleeps through its
			// lease, most of the run.
			stories := make([]story, len(kinds))
			var wg sync.WaitGroup
			for j, k := range kinds {
				name := fmt.Sprintf("m%d", i)
				lazyLk, eagerLk := k.open(t, c, name), k.open(t, eager, "eager-"+name)
				wg.Go(func() {
					var lazyErr, eagerErr error
					var inner sync.WaitGroup
					inner.Go(func() { stories[j].eager, eagerErr = ctxStory(eagerLk, seq) })
					stories[j].lazy, lazyErr = ctxStory(lazyLk, seq)
					inner.Wait()
					stories[j].err = errors.Join(lazyErr, eagerErr)
				})
			}
			wg.Wait()
			for j, st := range stories {
				if st.err != nil {
					t.Fatalf("%s: %v", kinds[j].name, st.err)
				}
				if st.lazy != st.eager {
					t.Errorf("%s, seq %s\n made at Lock: %s\n made lazily:  %s", kinds[j].name, seq, st.eager, st.lazy)
				}
			}
		})
	}
}
