package scriptlock

import (
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestForeignHolderLongLeaseRead: a Java (Redisson) holder may set any
// lease; one over 2^42 ms (about 139 years) ran into the flags a refused
// attempt packs above 2^42 in its reply, and a Go waiter read it as a
// scriptlock holder, or as queued behind others with a lease of a few
// seconds, and called again that soon. The holder's lease is read as the
// longest the reply carries: a foreign holder, for about 139 years.
func TestForeignHolderLongLeaseRead(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	c := newTestClient(t, n.Client(t))
	ctx := testCtx(t, 20*time.Second)
	for _, lease := range []int64{1<<42 + 5000, 1<<43 + 7, 1<<44 + 3} {
		m := mustMutex(t, c, "java-"+strconv.FormatInt(lease, 10), WithWaiterTimeout(time.Minute))
		if err := n.Do(t, "HSET", m.key, "0f0e0d0c-aaaa-bbbb-cccc-0123456789ab:1", "1").Error(); err != nil {
			t.Fatal(err)
		}
		if err := n.Do(t, "PEXPIRE", m.key, strconv.FormatInt(lease, 10)).Error(); err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{0, 1} {
			res, err := generated.MutexAcquire(ctx, c.rc, m.key, m.fence, m.waiters, "11111111-0000-4000-8000-000000000000:"+strconv.Itoa(w), "60000", m.ctl[w])
			if err != nil {
				t.Fatal(err)
			}
			r := acquireResult(res)
			if r.acquired() {
				t.Fatalf("lease %d: acquired over a foreign holder", lease)
			}
			rem, foreign, behind := r.refusal()
			if !foreign || behind || rem < MaxLease-time.Minute || rem > MaxLease {
				t.Errorf("lease %d ms, waiting %d: read as %v left, foreign %v, behind %v; want about %v, foreign, not behind", lease, w, rem, foreign, behind, MaxLease)
			}
		}
	}
}
