package scriptlock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiter refused by a lock whose expiry is due within the millisecond
// (PTTL 0) tries again at once, not at a third of the waiter timeout: PTTL 0
// was read as "held without expiry", and the waiter slept on while the lock
// was free. The lock is made to expire 1-2 ms after it is written, so that
// some attempts land on the millisecond its PTTL reads 0.
func TestWaiterRefusedAtExpiryRetriesSoon(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc, WithWaiterTimeout(30*time.Second))
	ctx := testCtx(t, 60*time.Second)
	for _, tc := range []struct {
		name   string
		fields []string // of the holder's hash
		try    func(ctx context.Context, name string) (attempt, error)
	}{{
		name:   "Mutex",
		fields: []string{c.ID() + ":other", "1"},
		try: func(ctx context.Context, name string) (attempt, error) {
			a, _, err := mustMutex(t, c, name).tryAcquire(ctx, c.ID()+":o", time.Second, time.Minute, guardWait{}, waitAttempt{})
			return a, err
		},
	}, {
		name:   "FairMutex",
		fields: []string{c.ID() + ":other", "1"},
		try: func(ctx context.Context, name string) (attempt, error) {
			a, _, err := mustFair(t, c, name).tryAcquire(ctx, c.ID()+":o", time.Second, time.Minute, guardWait{}, waitAttempt{})
			return a, err
		},
	}, {
		// Redisson's queue protocol answers the lease as PTTL reads it.
		name:   "FairMutex Redisson queue",
		fields: []string{c.ID() + ":other", "1"},
		try: func(ctx context.Context, name string) (attempt, error) {
			a, _, err := mustFair(t, c, name, WithRedissonFairQueue(5*time.Second)).tryAcquire(ctx, c.ID()+":o", time.Second, time.Minute, guardWait{}, waitAttempt{})
			return a, err
		},
	}, {
		name:   "RWMutex write",
		fields: []string{"mode", "write", c.ID() + ":other:write", "1"},
		try: func(ctx context.Context, name string) (attempt, error) {
			a, _, err := mustRW(t, c, name).write.tryAcquire(ctx, c.ID()+":o:write", time.Second, time.Minute, guardWait{}, waitAttempt{})
			return a, err
		},
	}, {
		name:   "RWMutex read",
		fields: []string{"mode", "write", c.ID() + ":other:write", "1"},
		try: func(ctx context.Context, name string) (attempt, error) {
			a, _, err := mustRW(t, c, name).read.tryAcquire(ctx, c.ID()+":o", time.Second, time.Minute, guardWait{}, waitAttempt{})
			return a, err
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			refusals := 0
			for i := 0; i < 300; i++ {
				name := tc.name + ":" + strconv.Itoa(i)
				key := mustMutex(t, c, name).Key()
				hset := rc.B().Hset().Key(key).FieldValue()
				for j := 0; j < len(tc.fields); j += 2 {
					hset = hset.FieldValue(tc.fields[j], tc.fields[j+1])
				}
				for _, r := range rc.DoMulti(ctx, hset.Build(), rc.B().Pexpire().Key(key).Milliseconds(2).Build()) {
					if err := r.Error(); err != nil {
						t.Fatal(err)
					}
				}
				// Attempts spread over the lock's last milliseconds.
				for end := time.Now().Add(time.Duration(i%8) * 250 * time.Microsecond); time.Now().Before(end); {
				}
				a, err := tc.try(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				if a.granted {
					continue
				}
				refusals++
				if a.sleep > 100*time.Millisecond {
					t.Fatalf("refused by a lock that expires within 2 ms, the waiter would sleep %s (remaining %s)", a.sleep, a.remaining)
				}
			}
			if refusals == 0 {
				t.Fatal("no attempt was refused: the lock always expired first")
			}
		})
	}
}
