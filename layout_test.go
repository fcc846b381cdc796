package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The operator CLI reads locks through internal/layout; every name it derives
// must be the one the handles use, with and without a hash tag in the name.
func TestLayoutMatchesHandles(t *testing.T) {
	t.Parallel()
	rc := redistest.Server(t).Client(t)
	for _, name := range []string{"order:42", "app:{tenant}:order"} {
		for _, prefix := range []string{"", "svc:"} {
			c := newTestClient(t, rc, WithKeyPrefix(prefix))
			m := mustMutex(t, c, name)
			f := mustFair(t, c, name)
			rf := mustFair(t, c, name, WithRedissonFairQueue(5*time.Second))
			rw := mustRW(t, c, name)
			s := mustSem(t, c, name)
			p := mustPermits(t, c, name)
			l := mustLatch(t, c, name)
			k := layout.For(prefix+name, false)
			for _, x := range []struct{ what, got, want string }{
				{"lock", k.Lock, m.key},
				{"fence", k.Fence, m.fence},
				{"unlock latch", k.UnlockLatch, m.latch},
				{"lock channel", k.LockChannel, m.channel},
				{"Mutex waiters", k.LockWaiters, m.waiters},
				{"Mutex wake channel", k.LockWake, m.wake},
				{"fair queue", k.FairQueue, f.queue},
				{"fair timeouts", k.FairTimeouts, f.timeouts},
				{"fair wake channel", k.FairWake, f.wake},
				{"Redisson fair queue", k.Queue, rf.queue},
				{"Redisson fair timeouts", k.Timeouts, rf.timeouts},
				{"cluster latch channel", layout.For(prefix+name, true).LatchChannel, latchChannel(l.key, true)},
				{"rw channel", k.RWChannel, rw.channel},
				{"writers", k.Writers, rw.writers},
				{"rw fence", k.Fence, rw.fence},
				{"semaphore channel", k.SemChannel, s.channel},
				{"permit channel", k.SemChannel, p.channel},
				{"permits", k.Permits, p.timeouts},
				{"latch channel", k.LatchChannel, l.channel},
				{"read-hold leases", k.RWPrefix + ":f:rwlock_timeout", rwTimeouts(rw.key, "f")},
			} {
				if x.got != x.want {
					t.Errorf("%q prefix %q: %s = %q, handles use %q", name, prefix, x.what, x.got, x.want)
				}
			}
		}
	}
}

// recordKey names a call's record as redissonName does its key, in the key's
// hash slot, with the Client's id and a counter that never repeats.
func TestRecordKey(t *testing.T) {
	t.Parallel()
	c := &Client{id: "0123456789abcdef0123456789abcdef"}
	for _, key := range []string{"app:pool", "app:{tenant-7}:pool"} {
		a, b := c.recordKey("redisson_sc_latch", key), c.recordKey("redisson_sc_latch", key)
		want := redissonName("redisson_sc_latch", key) + ":" + c.id + ":"
		if !strings.HasPrefix(a, want) || !strings.HasPrefix(b, want) || a == b {
			t.Errorf("recordKey(%q) = %q then %q; want distinct keys starting %q", key, a, b, want)
		}
		if got, want := hashedPart(a), hashedPart(key); got != want {
			t.Errorf("recordKey(%q) = %q hashes %q, the key %q", key, a, got, want)
		}
	}
}

// hashedPart is the part of key Redis Cluster hashes: its hash tag, if any.
func hashedPart(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}
