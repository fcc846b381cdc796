package scriptlock

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// A Java holder may set any lease (a PEXPIRE of centuries). Behind it, only
// the FairMutex waiter first in line listens on Redisson's channel; the one
// behind it is told it is not first. A lease past 2^51 ms ran FairAcquire's
// refusal past the integers Lua's doubles hold, and rounding set the flags
// packed below the lease: the second waiter read itself first in line
// behind a Redisson holder and subscribed to Redisson's channel as well.
func TestFairMutexSecondWaiterBehindLongJavaLease(t *testing.T) {
	t.Parallel()
	node, ctx, f1, j := javaHeldFair(t, "fair-java-long-lease")
	c2 := newTestClient(t, node.Client(t), WithWaiterTimeout(30*time.Second), WithKeyPrefix(f1.m.c.cfg.prefix))
	f2 := mustFair(t, c2, "fair-java-long-lease")
	key := f1.Key()
	const lease = 1<<52 + 1
	if err := node.Do(t, "PEXPIRE", key, strconv.FormatInt(lease, 10)).Error(); err != nil {
		t.Fatal(err)
	}
	channel := redissonName("redisson_lock__channel", key)
	numsub := func() int64 {
		r, err := node.Do(t, "PUBSUB", "NUMSUB", channel).ToArray()
		if err != nil || len(r) != 2 {
			t.Fatalf("PUBSUB NUMSUB: %v %v", r, err)
		}
		n, _ := r[1].AsInt64()
		return n
	}
	queue := redissonName("scriptlock_fair_queue", key)
	type got struct {
		l   context.Context
		err error
	}
	first, second := make(chan got, 1), make(chan got, 1)
	go func() { l, err := f1.Lock(ctx); first <- got{l, err} }()
	if !eventually(10*time.Second, func() bool { return numsub() == 1 }) {
		t.Fatal("the first waiter did not listen on Redisson's channel")
	}
	go func() { l, err := f2.Lock(ctx); second <- got{l, err} }()
	if !eventually(10*time.Second, func() bool { n, _ := node.Do(t, "LLEN", queue).AsInt64(); return n == 2 }) {
		t.Fatal("the second waiter did not queue")
	}
	// Its refusal is in; a subscription would follow within a round trip.
	time.Sleep(500 * time.Millisecond)
	if n := numsub(); n != 1 {
		t.Fatalf("behind a Java holder with a lease of %d ms, %d clients listen on Redisson's channel, want 1 (the first waiter's)", int64(lease), n)
	}
	if n, err := j.unlock(ctx, key); err != nil || n != 1 {
		t.Fatalf("Java unlock = %d, %v", n, err)
	}
	g := <-first
	if g.err != nil {
		t.Fatal(g.err)
	}
	if err := f1.Unlock(g.l); err != nil {
		t.Fatal(err)
	}
	g = <-second
	if g.err != nil {
		t.Fatal(g.err)
	}
	if err := f2.Unlock(g.l); err != nil {
		t.Fatal(err)
	}
}
