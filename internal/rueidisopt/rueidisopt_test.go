package rueidisopt

import (
	"context"
	"strconv"
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
func TestConnLifetimeReplaysWrittenCalls(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	check := node.Client(t)
	rc := node.Client(t, func(o *rueidis.ClientOption) { o.ConnLifetime = 5 * time.Millisecond })
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
		var ok atomic.Int64
		var wg sync.WaitGroup
		for range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if script.Exec(ctx, rc, []string{key}, []string{"2500000"}).Error() == nil {
					ok.Add(1)
				}
			}()
		}
		wg.Wait()
		runs, err := check.Do(ctx, check.B().Get().Key(key).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d calls, %d answered, %d runs", round, calls, ok.Load(), runs)
		if runs > int64(calls) {
			return
		}
	}
	t.Error("every call of the script ran once in each of 3 rounds: rueidis no longer sends a call Redis ran again when its connection expires, and the refusal of ConnLifetime clients can go")
}
