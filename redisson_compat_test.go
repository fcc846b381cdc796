package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Java service using Redisson speaks this protocol on the same keys; these
// scripts play that service, written from the protocol's description.
const (
	javaAcquire = `if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])`
	javaRelease = `if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
local n = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if n > 0 then redis.call('pexpire', KEYS[1], ARGV[2]) return 0 end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1`
)

// javaRenew is RedissonBaseLock.renewExpirationAsync: KEYS name; ARGV lease,
// <lockName>. The watchdog extends only its own thread's hold.
const javaRenew = `if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0`

func (j javaClient) renew(ctx context.Context, key string) (int64, error) {
	return j.rc.Do(ctx, j.rc.B().Eval().Script(javaRenew).Numkeys(1).Key(key).Arg("30000", j.field).Build()).AsInt64()
}

type javaClient struct {
	rc    rueidis.Client
	field string
}

func (j javaClient) acquire(ctx context.Context, key string) (held bool, err error) {
	r := j.rc.Do(ctx, j.rc.B().Eval().Script(javaAcquire).Numkeys(1).Key(key).Arg("30000", j.field).Build())
	if err := r.Error(); rueidis.IsRedisNil(err) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	return false, nil
}

func (j javaClient) release(ctx context.Context, key string) (int64, error) {
	ch := redissonName("redisson_lock__channel", key)
	return j.rc.Do(ctx, j.rc.B().Eval().Script(javaRelease).Numkeys(2).Key(key, ch).Arg("0", "30000", j.field).Build()).AsInt64()
}

func TestRedissonInterop(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	for _, name := range []string{"shared:resource", "shared:{res}"} {
		t.Run(name, func(t *testing.T) { testRedissonMutexInterop(t, node, c, name) })
	}
}

func testRedissonMutexInterop(t *testing.T, node *redistest.Node, c *Client, name string) {
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, name)
	java := javaClient{rc: node.Client(t), field: "7f1c0a52-3c1e-4b9e-9d5e-0e4c2f2b9a11:57"}

	// Go holds: the Java side is refused, and it sees Go's field as a hold count.
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if held, err := java.acquire(ctx, m.Key()); err != nil || held {
		t.Fatalf("Java acquire while Go holds: held=%v err=%v", held, err)
	}
	fields, err := node.Do(t, "HGETALL", m.Key()).AsStrMap()
	if err != nil || len(fields) != 1 || fields[c.ID()+":"+ownerIn(lctx)] != "1" {
		t.Fatalf("lock hash = %v, %v; want {<client-id>:<owner-id>: 1}", fields, err)
	}

	// A Redisson-style subscriber hears Go's unlock message "0".
	channel := redissonName("redisson_lock__channel", m.Key())
	heard := make(chan string, 1)
	subctx, stop := context.WithCancel(ctx)
	defer stop()
	subscribed := make(chan struct{})
	go func() {
		sub := node.Client(t)
		hook := rueidis.WithOnSubscriptionHook(subctx, func(rueidis.PubSubSubscription) { close(subscribed) })
		_ = sub.Receive(hook, sub.B().Subscribe().Channel(channel).Build(), func(msg rueidis.PubSubMessage) {
			select {
			case heard <- msg.Message:
			default:
			}
		})
	}()
	<-subscribed
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-heard:
		if msg != "0" {
			t.Fatalf("unlock message %q, want \"0\"", msg)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Redisson-style subscriber did not hear the unlock")
	}

	// Java holds: Go is refused, then Go's waiter wakes on Java's release.
	if held, err := java.acquire(ctx, m.Key()); err != nil || !held {
		t.Fatalf("Java acquire on a free lock: held=%v err=%v", held, err)
	}
	if _, err := m.TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("Go TryLock while Java holds: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := m.Lock(ctx)
		if err == nil {
			err = m.Unlock(l)
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if n, err := java.release(ctx, m.Key()); err != nil || n != 1 {
		t.Fatalf("Java release = %d, %v", n, err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second): // Java's lease is 30 s: only the message can be this fast
		t.Fatal("Go waiter did not wake on the Java release message")
	}

	// Re-entry on each side: Go's hold count is Java's to read, Java's
	// re-entered hold keeps Go out until its last release.
	l1, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := m.Lock(l1)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := node.Do(t, "HGET", m.Key(), c.ID()+":"+ownerIn(l1)).AsInt64(); err != nil || n != 2 {
		t.Fatalf("Go re-entered hold count = %d, %v", n, err)
	}
	if held, err := java.acquire(ctx, m.Key()); err != nil || held {
		t.Fatalf("Java acquire while Go re-entered: held=%v err=%v", held, err)
	}
	// Java's watchdog does not extend a Go hold.
	if n, err := java.renew(ctx, m.Key()); err != nil || n != 0 {
		t.Fatalf("Java renewal on a Go-held lock = %d, %v", n, err)
	}
	for _, l := range []context.Context{l2, l1} {
		if err := m.Unlock(l); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if held, err := java.acquire(ctx, m.Key()); err != nil || !held {
			t.Fatalf("Java (re-)acquire: held=%v err=%v", held, err)
		}
	}
	if n, err := java.renew(ctx, m.Key()); err != nil || n != 1 {
		t.Fatalf("Java renewal of its own hold = %d, %v", n, err)
	}
	if n, err := java.release(ctx, m.Key()); err != nil || n != 0 {
		t.Fatalf("Java first release of two = %d, %v", n, err)
	}
	if _, err := m.TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("Go TryLock while Java still holds once: %v", err)
	}
	// Go's force unlock of Java's lock frees it.
	if ok, err := m.ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	if held, err := java.acquire(ctx, m.Key()); err != nil || !held {
		t.Fatalf("Java acquire after force unlock: held=%v err=%v", held, err)
	}
	if n, err := java.release(ctx, m.Key()); err != nil || n != 1 {
		t.Fatalf("Java release = %d, %v", n, err)
	}
}
