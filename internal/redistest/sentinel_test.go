package redistest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// A Sentinel deployment fails over on request and on a killed primary; the
// Sentinel client follows both, keeps acknowledged-and-replicated data, and a
// restarted old primary comes back as a replica.
func TestSentinel(t *testing.T) {
	t.Parallel()
	runAndCheckGone(t, "sentinel", func(t *testing.T) []int {
		start := time.Now()
		s := Sentinel(t)
		t.Logf("sentinel deployment ready in %v", time.Since(start))
		if p := s.Primary(t); p != s.Data[0] {
			t.Fatalf("primary %s, want the first data node %s", p.Addr, s.Data[0].Addr)
		}
		rc := s.Client(t)
		key := Prefix(t) + "k"
		mustSet(t, rc, key, "1")
		// WAIT so the write is on both replicas before the primary changes.
		if n, err := rc.Do(ctxFor(t, 10*time.Second), rc.B().Wait().Numreplicas(2).Timeout(5000).Build()).AsInt64(); err != nil || n != 2 {
			t.Fatalf("WAIT 2: %d, %v", n, err)
		}

		old, primary, took := s.Failover(t)
		t.Logf("SENTINEL FAILOVER: %s -> %s in %v", old.Addr, primary.Addr, took)
		if primary == old {
			t.Fatal("primary did not change")
		}
		if got := clientGet(t, rc, key); got != "1" {
			t.Fatalf("after failover GET = %q, want 1", got)
		}
		// The old primary stays writable until the sentinels turn it into a
		// replica; the client moves on +switch-master, shortly after, and
		// once AwaitFollowed returns its next write is on the new primary.
		s.AwaitFollowed(t, primary, rc)
		mustSet(t, rc, key, "followed")
		if got, err := primary.Do(t, "GET", key).ToString(); got != "followed" {
			t.Fatalf("after AwaitFollowed, GET on the new primary = %q (%v), want the client's write", got, err)
		}
		t.Logf("client writes reach the new primary %v after the sentinels agreed on it", follow(t, rc, primary, key))
		s.WaitReplicas(t, primary, 2)
		if n, err := rc.Do(ctxFor(t, 10*time.Second), rc.B().Wait().Numreplicas(2).Timeout(5000).Build()).AsInt64(); err != nil || n != 2 {
			t.Fatalf("WAIT 2 after failover: %d, %v", n, err)
		}

		killed, primary2, took := s.KillPrimary(t)
		t.Logf("kill -9 of %s: %s promoted in %v", killed.Addr, primary2.Addr, took)
		if killed != primary || primary2 == killed {
			t.Fatalf("killed %s (want %s), promoted %s", killed.Addr, primary.Addr, primary2.Addr)
		}
		if took < sentinelDownAfter {
			t.Errorf("failover after kill took %v, less than down-after %v", took, sentinelDownAfter)
		}
		t.Logf("client writes reach the new primary %v after the sentinels agreed on it", follow(t, rc, primary2, key))
		killed.Restart(t)
		s.WaitReplicaOf(t, killed)
		pids := pidsOf(s.Data...)
		return append(pids, pidsOf(s.Sentinels...)...)
	})
}

func clientGet(t *testing.T, rc rueidis.Client, key string) string {
	t.Helper()
	got, err := rc.Do(ctxFor(t, 10*time.Second), rc.B().Get().Key(key).Build()).ToString()
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return got
}

// follow writes through the client until a write lands on primary, for at
// most 10 s, and returns how long that took.
func follow(t *testing.T, rc rueidis.Client, primary *Node, key string) time.Duration {
	t.Helper()
	start := time.Now()
	for i := 0; ; i++ {
		val := strconv.Itoa(i)
		err := rc.Do(ctxFor(t, 10*time.Second), rc.B().Set().Key(key).Value(val).Build()).Error()
		if err == nil {
			if got, _ := primary.Do(t, "GET", key).ToString(); got == val {
				return time.Since(start)
			}
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("client writes do not reach the new primary %s: %v", primary.Addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// With WithTLS the sentinels give the primary's TLS address, replication runs
// on TLS, and a Sentinel client on TLS follows a failover.
func TestSentinelWithTLS(t *testing.T) {
	t.Parallel()
	s := Sentinel(t, WithTLS())
	if len(s.TLSAddrs) != len(s.Sentinels) || s.Data[0].TLS == nil || s.Sentinels[0].TLS != s.Data[0].TLS {
		t.Fatalf("TLS not set up for the deployment: %v", s.TLSAddrs)
	}
	addr, err := s.Sentinels[0].Do(t, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SentinelMaster).AsStrSlice()
	if err != nil || len(addr) != 2 || addr[1] != strconv.Itoa(s.Data[0].TLSPort) {
		t.Fatalf("sentinel gives the primary as %v (%v), want its TLS port %d", addr, err, s.Data[0].TLSPort)
	}
	rc := s.Client(t)
	key := Prefix(t) + "k"
	mustSet(t, rc, key, "1")
	if n, err := rc.Do(ctxFor(t, 10*time.Second), rc.B().Wait().Numreplicas(2).Timeout(5000).Build()).AsInt64(); err != nil || n != 2 {
		t.Fatalf("WAIT 2 over TLS replication: %d, %v", n, err)
	}
	old, primary, _ := s.Failover(t)
	if primary == old {
		t.Fatal("primary did not change")
	}
	follow(t, rc, primary, key)
}

// With WithSentinelPassword the sentinels refuse a client without the
// password, still find each other (sentinel-pass), and the deployment's own
// client and probes authenticate.
func TestSentinelWithPassword(t *testing.T) {
	t.Parallel()
	s := Sentinel(t, WithSentinelPassword("s3ntinel"))
	for _, sn := range s.Sentinels {
		if r, err := rawCmd(sn.Addr, time.Second, "SENTINEL", "MASTERS"); err != nil || !strings.HasPrefix(fmt.Sprint(r), "NOAUTH") {
			t.Fatalf("sentinel %s without the password: %v %v, want NOAUTH", sn.Addr, r, err)
		}
	}
	if p := s.Primary(t); p != s.Data[0] {
		t.Fatalf("primary %s, want %s", p.Addr, s.Data[0].Addr)
	}
	rc := s.Client(t)
	mustSet(t, rc, Prefix(t)+"k", "1")
	if _, err := s.Sentinels[0].Do(t, "SENTINEL", "MASTERS").ToArray(); err != nil {
		t.Fatalf("Node.Do on a sentinel: %v", err)
	}
}
