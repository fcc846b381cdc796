package scriptlockotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	scriptlockotel "github.com/scriptlock/scriptlock/otel"
)

// unlockSpans counts the scriptlock.Unlock spans by outcome.
func unlockSpans(tm *telemetry) map[string]int {
	out := map[string]int{}
	for _, s := range tm.spans.Ended() {
		if s.Name() == "scriptlock.Unlock" {
			out[attrValue(s.Attributes(), scriptlockotel.AttrOutcome)]++
		}
	}
	return out
}

// lossFoundSoon renews every 100 ms, so a renewal soon finds a member
// force-unlocked; its lease is long enough that a loaded machine's late
// renewal does not let a hold expire first (ForceUnlock would then find
// nothing).
var lossFoundSoon = scriptlock.WithWatchdog(10*time.Second, 100*time.Millisecond)

// slowMachineNodeTimeout is the RedLocks' node timeout, beyond its default
// (a hundredth of the lease), which a loaded machine's node can miss: the
// RedLock then asks again, and the hold of a node that answered in time is
// released first, which the counts below do not expect.
var slowMachineNodeTimeout = scriptlock.WithNodeTimeout(500 * time.Millisecond)

// checkGivenBack: after the loss of a MultiLock or RedLock of holds members
// or nodes, given of them still held (at least minGiven: a member lost
// outright may be found lost by its give-back first), no hold is reported
// ended by an Unlock and no release as the program's: the engine's
// give-backs are given_back, and every hold ends lost.
func checkGivenBack(t *testing.T, tm *telemetry, holds, minGiven, maxGiven int) {
	t.Helper()
	got := tm.collect(t)
	wantEqual(t, "hold.duration by end cause", histCounts(t, got["scriptlock.lock.hold.duration"]), map[string]uint64{
		"scriptlock.hold.end_cause=lost,scriptlock.primitive=mutex": uint64(holds),
	})
	releases := histCounts(t, got["scriptlock.lock.release.duration"])
	given := int(releases["scriptlock.outcome=given_back,scriptlock.primitive=mutex"])
	if given < minGiven || given > maxGiven {
		t.Errorf("%d releases given_back, want %d to %d", given, minGiven, maxGiven)
	}
	wantEqual(t, "release.duration by outcome", releases, map[string]uint64{
		"scriptlock.outcome=given_back,scriptlock.primitive=mutex": uint64(given),
	})
	wantEqual(t, "scriptlock.Unlock spans by outcome", unlockSpans(tm), map[string]int{"given_back": given})
}

// TestMultiLockLossGivenBackReported: a MultiLock whose member is lost gives
// the other back in the background; that release was reported as an Unlock
// of the program (outcome released, the hold's end cause unlocked), which
// the program never made.
func TestMultiLockLossGivenBackReported(t *testing.T) {
	node := redistest.Server(t)
	tm := newTelemetry(t)
	prefix := scriptlock.WithKeyPrefix(redistest.Prefix(t))
	c, err := scriptlock.New(node.Client(t), prefix, scriptlock.WithObserver(tm.obs),
		lossFoundSoon)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	admin, err := scriptlock.New(node.Client(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ml, err := scriptlock.NewMultiLock([]scriptlock.Locker{mustMutex(t, c, "ma"), mustMutex(t, c, "mb"), mustMutex(t, c, "mc")})
	if err != nil {
		t.Fatal(err)
	}
	loseMember(t, ctx, tm, ml, mustMutex(t, admin, "mb"))
	checkGivenBack(t, tm, 3, 2, 2)
}

// TestRedLockLossGivenBackReported: the same for a RedLock that loses its
// quorum: the node still holding it is given back by the engine.
func TestRedLockLossGivenBackReported(t *testing.T) {
	nodes := redistest.Servers(t, 3)
	tm := newTelemetry(t)
	prefix := redistest.Prefix(t)
	var clients, admins []*scriptlock.Client
	for _, n := range nodes {
		c, err := scriptlock.New(n.Client(t), scriptlock.WithKeyPrefix(prefix), scriptlock.WithObserver(tm.obs),
			lossFoundSoon)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		a, err := scriptlock.New(n.Client(t), scriptlock.WithKeyPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		clients, admins = append(clients, c), append(admins, a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rl, err := scriptlock.NewRedLock("rl", clients, slowMachineNodeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	l, err := rl.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range admins[:2] {
		if ok, err := mustMutex(t, a, "rl").ForceUnlock(ctx); !ok || err != nil {
			t.Fatalf("ForceUnlock: %v %v", ok, err)
		}
	}
	<-l.Done()
	waitUntil(t, "every node's hold ended", func() bool {
		return sums(t, tm.collect(t)["scriptlock.lock.held"])["scriptlock.primitive=mutex"] == 0
	})
	if err := rl.Unlock(l); !errors.Is(err, scriptlock.ErrNotHeld) {
		t.Fatalf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
	checkGivenBack(t, tm, 3, 1, 2)
}

// TestNestedLossGivenBackReported: a lost MultiLock's give-back of a member
// that is itself a MultiLock or a RedLock gives back that member's members
// and nodes, which are reported given_back as the direct members are, not
// as Unlocks of the program.
func TestNestedLossGivenBackReported(t *testing.T) {
	servers := redistest.Servers(t, 3)
	tm := newTelemetry(t)
	prefix := redistest.Prefix(t)
	newClient := func(node *redistest.Node, opts ...scriptlock.Option) *scriptlock.Client {
		c, err := scriptlock.New(node.Client(t), append(opts, scriptlock.WithKeyPrefix(prefix))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	observed := func(node *redistest.Node) *scriptlock.Client {
		return newClient(node, scriptlock.WithObserver(tm.obs), lossFoundSoon)
	}
	c := observed(servers[0])
	var nodes []*scriptlock.Client
	for _, n := range servers {
		nodes = append(nodes, observed(n))
	}
	admin := newClient(servers[0])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inner, err := scriptlock.NewMultiLock([]scriptlock.Locker{mustMutex(t, c, "mb"), mustMutex(t, c, "mc")})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := scriptlock.NewRedLock("rl", nodes, slowMachineNodeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	ml, err := scriptlock.NewMultiLock([]scriptlock.Locker{mustMutex(t, c, "ma"), inner, rl})
	if err != nil {
		t.Fatal(err)
	}
	loseMember(t, ctx, tm, ml, mustMutex(t, admin, "ma"))
	checkGivenBack(t, tm, 6, 5, 5)
}

// loseMember locks ml, force-unlocks its member lost through another Client,
// waits for every member's hold to end, and checks that ml's Unlock then
// answers ErrNotHeld.
func loseMember(t *testing.T, ctx context.Context, tm *telemetry, ml *scriptlock.MultiLock, lost *scriptlock.Mutex) {
	t.Helper()
	l, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := lost.ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock: %v %v", ok, err)
	}
	<-l.Done()
	waitUntil(t, "every member's hold ended", func() bool {
		return sums(t, tm.collect(t)["scriptlock.lock.held"])["scriptlock.primitive=mutex"] == 0
	})
	if err := ml.Unlock(l); !errors.Is(err, scriptlock.ErrNotHeld) {
		t.Fatalf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
}
