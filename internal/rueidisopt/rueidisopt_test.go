package rueidisopt

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// wrapped is a client of another package's making around rueidis's own.
type wrapped struct{ rueidis.Client }

func TestReplaysWrittenCalls(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	if ReplaysWrittenCalls(node.Client(t)) {
		t.Error("a client without ConnLifetime reported")
	}
	lived := node.Client(t, func(o *rueidis.ClientOption) { o.ConnLifetime = time.Minute })
	if !ReplaysWrittenCalls(lived) {
		t.Error("a client with ConnLifetime not reported")
	}
	if ReplaysWrittenCalls(wrapped{lived}) || ReplaysWrittenCalls(nil) {
		t.Error("a wrapper or a nil client reported")
	}
}

// TestConnLifetimeReplaysWrittenCalls is why ReplaysWrittenCalls exists: 200
// calls at once of a script that counts its runs and takes some 10 ms, through a
// client whose connections live 5 ms, so that a connection reaches its lifetime
// with a second or more of replies still due. rueidis closes it and sends those
// calls again on a new connection, though Redis ran them: the script runs more
// often than it was called, and every call answers as if it ran once. Should
// rueidis stop doing so, this fails, and the refusal of ConnLifetime clients can
// go.
// The new connection's handshake waits behind the calls Redis still has to
// run. On a loaded machine that took longer than rueidis's default dial and
// write timeouts (5 s and 10 s): the calls failed with "context deadline
// exceeded" instead of being sent again, every one ran once, and the test
// failed without saying why. The client gives both a minute, the errors are
// logged by kind, and a round ends as soon as a call has run twice: every
// new connection expires too, so the calls are sent again and again while
// the backlog lasts.
func TestConnLifetimeReplaysWrittenCalls(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	check := node.Client(t)
	rc := node.Client(t, func(o *rueidis.ClientOption) {
		o.ConnLifetime = 5 * time.Millisecond
		o.Dialer.Timeout = time.Minute
		o.ConnWriteTimeout = time.Minute
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The count first, then some 10 ms of the server's CPU: an empty loop,
	// as from Redis 7.2 on TIME in a script reads the time the script began.
	script := rueidis.NewLuaScript(`local n = redis.call('incr', KEYS[1])
for _ = 1, tonumber(ARGV[1]) do end
return n`)
	const calls = 200
	for round := range 3 {
		key := redistest.Prefix(t) + "runs:" + strconv.Itoa(round)
		runs := func() int64 {
			n, err := check.Do(ctx, check.B().Get().Key(key).Build()).AsInt64()
			if err != nil && !rueidis.IsRedisNil(err) {
				t.Fatal(err)
			}
			return n
		}
		callCtx, stop := context.WithCancel(ctx)
		var (
			ok   atomic.Int64
			mu   sync.Mutex
			errs = map[string]int{}
			wg   sync.WaitGroup
		)
		for range calls {
			wg.Go(func() {
				err := script.Exec(callCtx, rc, []string{key}, []string{"2500000"}).Error()
				if err == nil {
					ok.Add(1)
					return
				}
				if callCtx.Err() != nil {
					return // stopped below: a call ran twice
				}
				// The kind of error, without the connection's ports.
				kind := err.Error()
				if i := strings.LastIndex(kind, ": "); i >= 0 {
					kind = kind[i+2:]
				}
				mu.Lock()
				errs[kind]++
				mu.Unlock()
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		tick := time.NewTicker(100 * time.Millisecond)
		var n int64
		for finished := false; !finished && n <= calls; n = runs() {
			select {
			case <-done:
				finished = true
			case <-tick.C:
			}
		}
		tick.Stop()
		stop()
		<-done
		mu.Lock()
		t.Logf("round %d: %d calls, %d answered, %d runs; errors %v", round, calls, ok.Load(), n, errs)
		mu.Unlock()
		if n > calls {
			return
		}
	}
	t.Error("every call of the script ran once in each of 3 rounds: rueidis no longer sends a call Redis ran again when its connection expires, and the refusal of ConnLifetime clients can go")
}
