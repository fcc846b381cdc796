package scriptlock

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A TrySetPermits or TrySetCount whose reply is lost is made again and
// answers true: the count it finds is the one its own first attempt set. A
// later call of anyone answers false, and Delete removes the call's record
// with the count.
func TestTrySetReplyLost(t *testing.T) {
	type kind struct {
		key, record string
		set         func(context.Context, int64) (bool, error)
		del         func(context.Context) (bool, error)
	}
	kinds := map[string]func(p proxied) kind{
		"Semaphore": func(p proxied) kind {
			s := mustSem(t, p.c, "try-set-retry")
			return kind{s.Key(), setRecordKey("redisson_sc_latch", s.Key()), s.TrySetPermits, s.Delete}
		},
		"PermitSemaphore": func(p proxied) kind {
			s := mustPermits(t, p.c, "try-set-retry")
			return kind{s.Key(), setRecordKey("redisson_sc_latch", s.Key()), s.TrySetPermits, s.Delete}
		},
		"CountDownLatch": func(p proxied) kind {
			l := mustLatch(t, p.c, "try-set-retry")
			return kind{l.Key(), setRecordKey("redisson_countdownlatch_latch", l.Key()), l.TrySetCount, l.Delete}
		},
	}
	for name, open := range kinds {
		t.Run(name, func(t *testing.T) {
			p := newProxied(t)
			ctx := testCtx(t, 20*time.Second)
			k := open(p)
			// Scripts loaded, so the call below is one EVALSHA.
			if ok, err := k.set(ctx, 2); err != nil || !ok {
				t.Fatalf("first set = %v, %v", ok, err)
			}
			if ok, err := k.del(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
			if exists(t, p.node, k.record) {
				t.Fatal("the set's record outlived Delete")
			}
			var ok bool
			err := p.lostReply(t, func() bool { return exists(t, p.node, k.key) }, func() error {
				var err error
				ok, err = k.set(ctx, 5)
				return err
			})
			if err != nil || !ok {
				t.Fatalf("set whose first reply was lost = %v, %v; want true (it set the count)", ok, err)
			}
			if n := countAt(t, p.node, k.key); n != 5 {
				t.Fatalf("count = %d, want 5", n)
			}
			if ok, err := k.set(ctx, 7); err != nil || ok {
				t.Fatalf("a later set = %v, %v; want false", ok, err)
			}
			if n := countAt(t, p.node, k.key); n != 5 {
				t.Fatalf("count after a refused set = %d, want 5", n)
			}
			if ttl := pttlAt(t, p, k.record); ttl <= 0 || ttl > time.Minute.Milliseconds() {
				t.Fatalf("record's PTTL = %d ms, want a minute at most", ttl)
			}
			if ok, err := k.del(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
			// Beside the records of the Deletes' answers, which expire
			// within a minute.
			if ks := keysBesideRecords(t, p.node, strings.TrimSuffix(k.record, ":set")); len(ks) > 0 {
				t.Fatalf("keys left after Delete: %q", ks)
			}
		})
	}
}

func pttlAt(t *testing.T, p proxied, key string) int64 {
	t.Helper()
	n, err := p.node.Do(t, "PTTL", key).AsInt64()
	if err != nil {
		t.Fatalf("PTTL %s: %v", key, err)
	}
	return n
}
