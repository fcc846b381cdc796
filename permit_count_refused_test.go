package scriptlock

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// commander runs one command against a server: a *redistest.Node (a new
// connection a command) or a connCommander (one connection for all).
type commander interface {
	Do(t testing.TB, args ...string) rueidis.RedisResult
}

// connCommander runs commands on one long-lived client: a test making
// thousands of setup and dump commands spends its time opening connections
// otherwise.
type connCommander struct{ rc rueidis.Client }

func (c connCommander) Do(_ testing.TB, args ...string) rueidis.RedisResult {
	return c.rc.Do(context.Background(), c.rc.B().Arbitrary(args[0]).Args(args[1:]...).Build())
}

// mustDo runs a test's setup command, failing the test if it fails.
func mustDo(t *testing.T, c commander, args ...string) {
	t.Helper()
	if err := c.Do(t, args...).Error(); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
}

// dumpKeys describes every key on n, its type, value and whether it
// expires, so that two dumps tell whether anything changed.
func dumpKeys(t *testing.T, n commander) string {
	t.Helper()
	keys, err := n.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		typ, _ := n.Do(t, "TYPE", k).ToString()
		var v []string
		switch typ {
		case "string":
			s, _ := n.Do(t, "GET", k).ToString()
			v = []string{s}
		case "zset":
			members, _ := n.Do(t, "ZRANGE", k, "0", "-1").AsStrSlice()
			for _, m := range members {
				score, _ := n.Do(t, "ZSCORE", k, m).ToString()
				v = append(v, m, score)
			}
		}
		fmt.Fprintf(&b, "%q %s %q; ", k, typ, v)
	}
	return b.String()
}

// A count INCR refuses (past 2^63 - 1 with the permits given back, or a
// number with a fraction or an exponent, as Redisson's addPermits writes a
// sum of 10^17 or more) fails a call that would give a permit back to it, and
// changes nothing: the permit was taken out of the lease set before the
// count was refused, and was lost to everyone.
func TestPermitCountRefusedChangesNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 20*time.Second)
	calls := []struct {
		name  string
		ended bool // the permit's lease has ended
		call  func(ctx context.Context, p *PermitSemaphore, id string) error
	}{
		{"Release", false, func(ctx context.Context, p *PermitSemaphore, id string) error { return p.Release(ctx, id) }},
		{"Release of an ended lease", true, func(ctx context.Context, p *PermitSemaphore, id string) error { return p.Release(ctx, id) }},
		{"Extend of an ended lease", true, func(ctx context.Context, p *PermitSemaphore, id string) error {
			return p.Extend(ctx, id, time.Minute)
		}},
		{"AvailablePermits beside an ended lease", true, func(ctx context.Context, p *PermitSemaphore, _ string) error {
			_, err := p.AvailablePermits(ctx)
			return err
		}},
		{"TryAcquire beside an ended lease", true, func(ctx context.Context, p *PermitSemaphore, _ string) error {
			_, err := p.TryAcquire(ctx, time.Minute, 0)
			return err
		}},
		{"give-back", false, func(ctx context.Context, p *PermitSemaphore, id string) error {
			raw, _ := permitWire(id)
			return p.undoOnce(ctx, raw, p.c.recordKey("redisson_sc_latch", p.key))
		}},
	}
	for i, call := range calls {
		for _, count := range []string{"9223372036854775807", "1.152921504606847e+18"} {
			node.Do(t, "FLUSHALL")
			p := mustPermits(t, c, fmt.Sprintf("refused-%d", i))
			id := randomID()
			raw, _ := permitWire(id)
			node.Do(t, "SET", p.Key(), count)
			end := time.Now().Add(time.Hour).UnixMilli()
			if call.ended {
				end = 5
			}
			node.Do(t, "ZADD", redissonSuffix(p.Key(), "timeout"), fmt.Sprint(end), string(raw))
			before := dumpKeys(t, node)
			err := call.call(ctx, p, id)
			if after := dumpKeys(t, node); after != before {
				t.Errorf("%s on a count of %s (%v) changed\n%s\ninto\n%s", call.name, count, err, before, after)
			}
		}
	}
}
