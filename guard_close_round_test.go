package scriptlock

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseDuringGuardedRenewalRound: Close while a round of guarded
// renewals on a Cluster, spread over more slots than go out at once, waits
// on WAIT (the shard's only replica stopped) returns within the guard
// timeout, and no call of the round reaches the server once Close has begun:
// the slots not yet sent are not sent.
func TestCloseDuringGuardedRenewalRound(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	const lease, every = 20 * time.Second, 2 * time.Second
	const guardTimeout = 3 * time.Second
	c, err := New(cl.Client(t), sharedPrefix(t), WithFailoverGuard(true, guardTimeout), WithWatchdog(lease, every))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	inRound := make(chan struct{}, 1)
	c.wd.sendHook = func() {
		select {
		case inRound <- struct{}{}:
		default:
		}
	}
	ctx := testCtx(t, 60*time.Second)
	primary := cl.Primaries(t)[0]
	slots := map[uint16]bool{}
	for i := 0; len(slots) < 3*guardedGroups && i < 10000; i++ {
		m := mustMutex(t, c, "close-round-"+strconv.Itoa(i))
		if cl.NodeFor(t, m.Key()) != primary || slots[keySlot(m.Key())] {
			continue
		}
		if _, err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		slots[keySlot(m.Key())] = true
	}
	replica := replicaOf(t, cl, primary)
	replica.Pause()
	defer replica.Resume()
	for len(inRound) > 0 {
		<-inRound
	}
	select {
	case <-inRound:
	case <-time.After(10 * time.Second):
		t.Fatal("no renewal round")
	}
	// The round's first slots (guardedGroups of them at once) all wait on
	// WAIT before the counts are reset: on a loaded machine their calls (an
	// EVALSHA refused NOSCRIPT and made again as EVAL, for a first renewal
	// there) may reach the server well after the round began, before Close.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if blockedClients(t, primary) >= guardedGroups {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no call of the renewal round waits on WAIT")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := primary.Do(t, "CONFIG", "RESETSTAT").Error(); err != nil {
		t.Fatal(err)
	}
	// Redis 7.2 and newer count a blocked command when it ends: those of the
	// WAITs still blocked now that end later count too, and no more may.
	waitsBefore := 0
	if serverAtLeast(t, primary, 7, 2) {
		waitsBefore = blockedClients(t, primary)
	}
	start := time.Now()
	c.Close()
	if took := time.Since(start); took > guardTimeout+time.Second {
		t.Errorf("Close took %s during a guarded renewal round on %d slots (guard timeout %s)", took, len(slots), guardTimeout)
	}
	time.Sleep(guardTimeout)
	stats, err := primary.Do(t, "INFO", "commandstats").ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"cmdstat_evalsha:", "cmdstat_wait:"} {
		i := strings.Index(stats, cmd)
		if i < 0 {
			continue
		}
		line := strings.SplitN(stats[i:], "\n", 2)[0]
		calls, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(line[len(cmd):], "calls="), ",", 2)[0])
		if cmd != "cmdstat_wait:" || calls > waitsBefore {
			t.Errorf("sent after Close began: %s (%d WAITs blocked before)", line, waitsBefore)
		}
	}
}
