package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Redisson takes lock names with a '{' or '}' that makes no hash tag on a
// single node (Redis then hashes the whole key), and lays out their
// companions by its own rule: "redisson_lock__channel:{a}b}" for a}b,
// "redisson_lock__channel:x{y" for x{y. The command reads, lists and
// force-unlocks them there, on those keys and channels; on a Cluster, where
// those keys lie in other slots than the lock (Redisson's own calls fail
// there with CROSSSLOT), it refuses the name as one no lock can have.
func TestUnbalancedBraceNames(t *testing.T) {
	t.Parallel()
	ds := deployments(t)
	const field = "dd470a8d-d59f-4713-a23e-7f6ceac9f0ce:1"
	t.Run("single", func(t *testing.T) {
		d := ds[0]
		ctx := testCtx(t, 30*time.Second)
		prefix := redistest.Prefix(t)
		names := []string{"a}b", "x{y", "{}z", "p}{q"}
		for _, n := range names {
			redissonAcquire(t, ctx, d.rc, prefix+n, field)
		}
		for _, n := range names {
			r := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, n)
			var rep Report
			if r.code != exitOK || json.Unmarshal([]byte(r.out), &rep) != nil || rep.Kind != kindMutex || len(rep.Holders) != 1 || rep.Holders[0].Field != field {
				t.Errorf("inspect %q: exit %d, want %d and a mutex held by %s\n%s%s", n, r.code, exitOK, field, r.out, r.errOut)
			}
		}
		r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
		var l listing
		if err := json.Unmarshal([]byte(r.out), &l); r.code != exitOK || err != nil || len(l.Locks) != len(names) {
			t.Errorf("list: exit %d, want %d locks\n%s%s", r.code, len(names), r.out, r.errOut)
		}
		// force-unlock deletes the lock and tells its waiters on Redisson's
		// channel for that name.
		key := prefix + "a}b"
		channel := layout.For(key, false).LockChannel
		if channel != "redisson_lock__channel:{"+key+"}" {
			t.Fatalf("channel %q is not Redisson's", channel)
		}
		heard := make(chan string, 1)
		sctx, stop := context.WithCancel(ctx)
		subscribed := make(chan struct{})
		go func() {
			_ = d.rc.Receive(sctx, d.rc.B().Subscribe().Channel(channel).Build(), func(m rueidis.PubSubMessage) {
				select {
				case heard <- m.Message:
				default:
				}
			})
		}()
		go func() {
			defer close(subscribed)
			for sctx.Err() == nil {
				v, _ := d.rc.Do(sctx, d.rc.B().PubsubNumsub().Channel(channel).Build()).ToArray()
				if len(v) == 2 {
					if n, _ := v[1].AsInt64(); n > 0 {
						return
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		defer stop()
		<-subscribed
		r = cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "a}b")
		if r.code != exitOK {
			t.Fatalf("force-unlock a}b: exit %d\n%s%s", r.code, r.out, r.errOut)
		}
		select {
		case m := <-heard:
			if m != "0" {
				t.Errorf("message %q on %s, want Redisson's 0", m, channel)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("no release message on %s", channel)
		}
		if n, _ := d.rc.Do(ctx, d.rc.B().Exists().Key(key).Build()).AsInt64(); n != 0 {
			t.Errorf("%s still exists after force-unlock", key)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		d := ds[1]
		ctx := testCtx(t, 30*time.Second)
		prefix := redistest.Prefix(t)
		for _, cmd := range []string{"inspect", "force-unlock", "watch"} {
			r := cli(ctx, d, "", cmd, "--key-prefix", prefix, "a}b")
			if r.code != exitUsage || !strings.Contains(r.errOut, "Cluster") {
				t.Errorf("%s a}b on a Cluster: exit %d, want %d naming the Cluster\n%s%s", cmd, r.code, exitUsage, r.out, r.errOut)
			}
		}
	})
}
