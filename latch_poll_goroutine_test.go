package scriptlock

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// goroutineID is the calling goroutine's id, from its stack's header.
func goroutineID() uint64 {
	var b [64]byte
	s := bytes.TrimPrefix(b[:runtime.Stack(b[:], false)], []byte("goroutine "))
	id, _ := strconv.ParseUint(string(s[:bytes.IndexByte(s, ' ')]), 10, 64)
	return id
}

// callerRC records the goroutine each Do runs on.
type callerRC struct {
	rueidis.Client
	mu  *sync.Mutex
	ids *[]uint64
}

func (c callerRC) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.mu.Lock()
	*c.ids = append(*c.ids, goroutineID())
	c.mu.Unlock()
	return c.Client.Do(ctx, cmd)
}

// TestLatchAwaitTimeoutZeroOnCallersGoroutine: AwaitTimeout with no wait
// (a poll of the latch, as Count is) reads the count on its caller's
// goroutine, as Count does: only a wait's reads, which Close must end
// whatever the connection, are sent on a goroutine of their own. Every
// read paid one.
func TestLatchAwaitTimeoutZeroOnCallersGoroutine(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var mu sync.Mutex
	var ids []uint64
	c := newTestClient(t, callerRC{Client: node.Client(t), mu: &mu, ids: &ids})
	l := mustLatch(t, c, "poll")
	ctx := testCtx(t, 30*time.Second)
	if ok, err := l.AwaitTimeout(ctx, 0); !ok || err != nil {
		t.Fatalf("AwaitTimeout(0) on a latch not counting: %v, %v", ok, err)
	}
	me := goroutineID()
	mu.Lock()
	got := append([]uint64(nil), ids...)
	mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no read of the count went through the rueidis client")
	}
	for _, id := range got {
		if id != me {
			t.Fatalf("AwaitTimeout(0) read the count on goroutine %d, not its caller's (%d)", id, me)
		}
	}
}
