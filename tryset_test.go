package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A TrySetPermits or TrySetCount whose reply is lost is made again and
// answers true: the count it finds is the one its own first attempt set. A
// later call of anyone answers false. The record a call leaves outlives a
// Delete and is told apart from a later call's.
func TestTrySetReplyLost(t *testing.T) {
	t.Parallel()
	type kind struct {
		key, records string // records: the prefix of the sets' records
		set          func(context.Context, int64) (bool, error)
		del          func(context.Context) (bool, error)
	}
	kinds := map[string]func(p proxied) kind{
		"Semaphore": func(p proxied) kind {
			s := mustSem(t, p.c, "try-set-retry")
			return kind{s.Key(), setRecordKey("redisson_sc_latch", s.Key(), ""), s.TrySetPermits, s.Delete}
		},
		"PermitSemaphore": func(p proxied) kind {
			s := mustPermits(t, p.c, "try-set-retry")
			return kind{s.Key(), setRecordKey("redisson_sc_latch", s.Key(), ""), s.TrySetPermits, s.Delete}
		},
		"CountDownLatch": func(p proxied) kind {
			l := mustLatch(t, p.c, "try-set-retry")
			return kind{l.Key(), setRecordKey("redisson_countdownlatch_latch", l.Key(), ""), l.TrySetCount, l.Delete}
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
			if len(keysWithPrefix(t, p.node, k.records)) != 1 {
				t.Fatal("Delete removed the set's record: a repeat of that set would set the count again")
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
			for _, record := range keysWithPrefix(t, p.node, k.records) {
				if ttl := pttlAt(t, p, record); ttl <= 0 || ttl > time.Minute.Milliseconds() {
					t.Fatalf("record's PTTL = %d ms, want a minute at most", ttl)
				}
			}
			if ok, err := k.del(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
			// Beside the records of the Deletes' answers, which expire
			// within a minute.
			if ks := keysBesideRecords(t, p.node, strings.TrimSuffix(k.records, ":set:")); len(ks) > 0 {
				t.Fatalf("keys left after Delete: %q", ks)
			}
		})
	}
}

// keysWithPrefix lists the keys that start with prefix.
func keysWithPrefix(t *testing.T, n *redistest.Node, prefix string) []string {
	t.Helper()
	keys, err := n.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

func pttlAt(t *testing.T, p proxied, key string) int64 {
	t.Helper()
	n, err := p.node.Do(t, "PTTL", key).AsInt64()
	if err != nil {
		t.Fatalf("PTTL %s: %v", key, err)
	}
	return n
}

// A TrySetPermits or TrySetCount whose reply is lost is made again after the
// count it set is gone: deleted by another caller, or counted down to zero.
// The repeat answers true, as its first attempt did, and sets nothing: a
// count set again would bring back a semaphore another caller deleted, or
// re-arm a latch whose waiters were released, so that every later Await
// blocks.
func TestTrySetReplyLostThenGone(t *testing.T) {
	t.Parallel()
	type kind struct {
		key  string
		set  func(context.Context, int64) (bool, error)
		gone func(context.Context) error // by another client, once the set landed
	}
	deleted := func(d interface {
		Delete(context.Context) (bool, error)
	}) func(context.Context) error {
		return func(ctx context.Context) error {
			ok, err := d.Delete(ctx)
			if err == nil && !ok {
				err = errors.New("Delete found nothing to delete")
			}
			return err
		}
	}
	for _, tc := range []struct {
		name string
		open func(t *testing.T, c, other *Client) kind
	}{
		{"Semaphore deleted", func(t *testing.T, c, other *Client) kind {
			s := mustSem(t, c, "try-set-gone")
			return kind{s.Key(), s.TrySetPermits, deleted(mustSem(t, other, "try-set-gone"))}
		}},
		{"PermitSemaphore deleted", func(t *testing.T, c, other *Client) kind {
			s := mustPermits(t, c, "try-set-gone")
			return kind{s.Key(), s.TrySetPermits, deleted(mustPermits(t, other, "try-set-gone"))}
		}},
		{"CountDownLatch deleted", func(t *testing.T, c, other *Client) kind {
			l := mustLatch(t, c, "try-set-gone")
			return kind{l.Key(), l.TrySetCount, deleted(mustLatch(t, other, "try-set-gone"))}
		}},
		{"CountDownLatch counted down", func(t *testing.T, c, other *Client) kind {
			l := mustLatch(t, c, "try-set-gone")
			w := mustLatch(t, other, "try-set-gone")
			return kind{l.Key(), l.TrySetCount, func(ctx context.Context) error {
				for {
					n, err := w.Count(ctx)
					if err != nil || n == 0 {
						return err
					}
					if err := w.CountDown(ctx); err != nil {
						return err
					}
				}
			}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pre := sharedPrefix(t)
			p := newProxied(t, pre)
			other := newTestClient(t, p.node.Client(t), pre)
			ctx := testCtx(t, 20*time.Second)
			k := tc.open(t, p.c, other)
			// Scripts loaded, so the call below is one EVALSHA.
			if ok, err := k.set(ctx, 2); err != nil || !ok {
				t.Fatalf("first set = %v, %v", ok, err)
			}
			if err := k.gone(ctx); err != nil {
				t.Fatal(err)
			}
			var ok, gone bool
			err := p.lostReply(t, func() bool {
				if gone {
					return true
				}
				if !exists(t, p.node, k.key) {
					return false
				}
				if err := k.gone(ctx); err != nil {
					t.Error(err)
				}
				gone = true
				return true
			}, func() error {
				var err error
				ok, err = k.set(ctx, 2)
				return err
			})
			if err != nil || !ok {
				t.Fatalf("set whose first reply was lost = %v, %v; want true (it set the count)", ok, err)
			}
			if exists(t, p.node, k.key) {
				t.Fatalf("count %d after the repeated set; want none: the repeat set the count again after it was gone", countAt(t, p.node, k.key))
			}
			// A new call is not taken for the repeat of the old one.
			if ok, err := k.set(ctx, 3); err != nil || !ok {
				t.Fatalf("a new set = %v, %v; want true", ok, err)
			}
			if n := countAt(t, p.node, k.key); n != 3 {
				t.Fatalf("count after a new set = %d, want 3", n)
			}
		})
	}
}

// A TrySetPermits or TrySetCount whose reply is lost is made again after the
// count it set was deleted and another caller set a new one: the repeat
// still answers true, as its first attempt set the count, and leaves the new
// count alone. The other caller's set must not take the record the repeat
// looks for.
func TestTrySetReplyLostThenSetAgain(t *testing.T) {
	t.Parallel()
	type kind struct {
		key   string
		set   func(context.Context, int64) (bool, error)
		again func(context.Context) error // by another client, once the set landed
	}
	// deleteThenSet is the other caller's turn: it deletes the count and
	// sets a new one.
	deleteThenSet := func(del func(context.Context) (bool, error), set func(context.Context, int64) (bool, error)) func(context.Context) error {
		return func(ctx context.Context) error {
			if _, err := del(ctx); err != nil {
				return err
			}
			ok, err := set(ctx, 9)
			if err == nil && !ok {
				err = errors.New("the other caller's set set nothing")
			}
			return err
		}
	}
	for _, tc := range []struct {
		name string
		open func(t *testing.T, c, other *Client) kind
	}{
		{"Semaphore", func(t *testing.T, c, other *Client) kind {
			s, o := mustSem(t, c, "try-set-again"), mustSem(t, other, "try-set-again")
			return kind{s.Key(), s.TrySetPermits, deleteThenSet(o.Delete, o.TrySetPermits)}
		}},
		{"PermitSemaphore", func(t *testing.T, c, other *Client) kind {
			s, o := mustPermits(t, c, "try-set-again"), mustPermits(t, other, "try-set-again")
			return kind{s.Key(), s.TrySetPermits, deleteThenSet(o.Delete, o.TrySetPermits)}
		}},
		{"CountDownLatch", func(t *testing.T, c, other *Client) kind {
			l, o := mustLatch(t, c, "try-set-again"), mustLatch(t, other, "try-set-again")
			return kind{l.Key(), l.TrySetCount, deleteThenSet(o.Delete, o.TrySetCount)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pre := sharedPrefix(t)
			p := newProxied(t, pre)
			other := newTestClient(t, p.node.Client(t), pre)
			ctx := testCtx(t, 20*time.Second)
			k := tc.open(t, p.c, other)
			// Scripts loaded, so the call below is one EVALSHA.
			if ok, err := k.set(ctx, 2); err != nil || !ok {
				t.Fatalf("first set = %v, %v", ok, err)
			}
			p.node.Do(t, "DEL", k.key) // so that the call below sets it again
			var ok, again bool
			err := p.lostReply(t, func() bool {
				if again {
					return true
				}
				if !exists(t, p.node, k.key) {
					return false
				}
				if err := k.again(ctx); err != nil {
					t.Error(err)
				}
				again = true
				return true
			}, func() error {
				var err error
				ok, err = k.set(ctx, 2)
				return err
			})
			if err != nil || !ok {
				t.Errorf("set whose first reply was lost = %v, %v; want true (it set the count)", ok, err)
			}
			if n := countAt(t, p.node, k.key); n != 9 {
				t.Errorf("count = %d, want 9, the other caller's", n)
			}
		})
	}
}
