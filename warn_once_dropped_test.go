package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// gateLog is a logSink whose first record blocks until open is closed (a
// log pipe that stalled for a while); entered is closed once it blocks.
type gateLog struct {
	*logSink
	first         chan struct{} // one token: taken by the first record
	entered, open chan struct{}
}

func (g gateLog) Handle(ctx context.Context, r slog.Record) error {
	select {
	case <-g.first:
		close(g.entered)
		<-g.open
	default:
	}
	return g.logSink.Handle(ctx, r)
}

func (g gateLog) WithAttrs([]slog.Attr) slog.Handler { return g }
func (g gateLog) WithGroup(string) slog.Handler      { return g }

// TestOnceWarningsNotDropped: the eviction policy's WARN (once per policy)
// and the failover guard's refused count (once per Client) were never said
// again once the reporter had dropped them (the logger blocking with other
// records piled up): the operator never learnt that Redis can evict held
// locks, or that the guard is off. A dropped one is said at the next count.
func TestOnceWarningsNotDropped(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	g := gateLog{logSink: &logSink{}, first: make(chan struct{}, 1), entered: make(chan struct{}), open: make(chan struct{})}
	g.first <- struct{}{}
	c := newTestClient(t, node.Client(t), WithLogger(slog.New(g)))
	c.rep.logLater(func() { c.log.Debug("first") })
	<-g.entered
	for range maxLooseReports + 1 {
		c.rep.logLater(func() { c.log.Debug("filler") })
	}
	warn := func() {
		c.warnEviction("role:master\r\nmaxmemory:1048576\r\nmaxmemory_policy:allkeys-lru\r\n")
		c.warnUncounted("127.0.0.1:1", errors.New("NOPERM this user has no permissions to run the 'info' command"))
	}
	warn()
	close(g.open)
	if !eventually(5*time.Second, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.logs) > 0 && strings.Contains(g.logs[len(g.logs)-1], "filler")
	}) {
		t.Fatal("the records waiting were not written within 5s of the logger returning")
	}
	warn() // the next count, the next look at the policy
	c.Close()
	g.mu.Lock()
	out := strings.Join(g.logs, "\n")
	g.mu.Unlock()
	for _, want := range []string{"maxmemory_policy=allkeys-lru", "failover guard cannot count", "reports dropped"} {
		if !strings.Contains(out, want) {
			t.Errorf("no record with %q once the logger returned, after it blocked with %d records waiting", want, maxLooseReports+1)
		}
	}
}
