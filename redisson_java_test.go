package scriptlock

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// redissonJava plays one Java thread of a service using Redisson 3.2x/4.x on
// the same Redis: each method sends the Lua that Redisson's class sends for
// that operation, with the KEYS and ARGV it passes (written here from the
// protocol: commands, key names, argument order, messages). Names follow
// RedissonObject.prefixName/suffixName: "prefix:{name}" and "{name}:suffix",
// without the added braces when the name already has a hash tag.
type redissonJava struct {
	rc     rueidis.Client
	uuid   string // the connection manager id
	thread int64  // the thread id
}

func newRedissonJava(rc rueidis.Client, thread int64) redissonJava {
	return redissonJava{rc: rc, uuid: clientID(), thread: thread}
}

// lockName is Redisson's getLockName(threadId): <uuid>:<thread>.
func (j redissonJava) lockName() string { return j.uuid + ":" + strconv.FormatInt(j.thread, 10) }

func (j redissonJava) eval(ctx context.Context, script string, keys []string, args ...string) rueidis.RedisResult {
	return j.rc.Do(ctx, j.rc.B().Eval().Script(script).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
}

// nilOrTTL reads Redisson's acquire reply: nil = acquired, a number = the
// holder's remaining ttl.
func nilOrTTL(r rueidis.RedisResult) (acquired bool, ttl int64, err error) {
	if err := r.Error(); rueidis.IsRedisNil(err) {
		return true, 0, nil
	} else if err != nil {
		return false, 0, err
	}
	ttl, err = r.AsInt64()
	return false, ttl, err
}

// --- RReadWriteLock (RedissonReadLock, RedissonWriteLock) ---

// The read-write lock's scripts are Redisson's own text (see
// redisson_exact_test.go).
const (
	javaWriteLock   = exactWriteLock
	javaWriteUnlock = exactWriteUnlock
	javaReadLock    = exactReadLock
	javaReadUnlock  = exactReadUnlock
)

func (j redissonJava) writeLock(ctx context.Context, name string) (bool, int64, error) {
	return nilOrTTL(j.eval(ctx, javaWriteLock, []string{name}, "30000", j.lockName()+":write"))
}

func (j redissonJava) writeUnlock(ctx context.Context, name string) (int64, error) {
	keys := []string{name, redissonName("redisson_rwlock", name), redissonName("redisson_unlock_latch", name) + ":" + randomID()}
	return j.eval(ctx, javaWriteUnlock, keys, "1", "30000", j.lockName()+":write", "publish", "5000").AsInt64()
}

func (j redissonJava) readTimeoutPrefix(name string) string {
	return redissonSuffix(name, j.lockName()) + ":rwlock_timeout"
}

func (j redissonJava) readLock(ctx context.Context, name string) (bool, int64, error) {
	return nilOrTTL(j.eval(ctx, javaReadLock, []string{name, j.readTimeoutPrefix(name)}, "30000", j.lockName(), j.lockName()+":write"))
}

func (j redissonJava) readUnlock(ctx context.Context, name string) (int64, error) {
	prefix := j.readTimeoutPrefix(name)
	keyPrefix := strings.Split(prefix, ":"+j.lockName())[0] // RedissonReadLock.getKeyPrefix
	keys := []string{name, redissonName("redisson_rwlock", name), prefix, keyPrefix, redissonName("redisson_unlock_latch", name) + ":" + randomID()}
	return j.eval(ctx, javaReadUnlock, keys, "0", j.lockName(), "publish", "5000").AsInt64()
}

// --- RCountDownLatch ---

const (
	// trySetCountAsync: KEYS name, channel; ARGV NEW_COUNT_MESSAGE 1, count,
	// publish command.
	javaLatchTrySet = `if redis.call('exists', KEYS[1]) == 1 then return 0 end
redis.call('set', KEYS[1], ARGV[2])
redis.call(ARGV[3], KEYS[2], ARGV[1])
return 1`
	// countDownAsync: KEYS name, channel; ARGV ZERO_COUNT_MESSAGE 0, publish
	// command.
	javaLatchCountDown = `local v = redis.call('decr', KEYS[1])
if v <= 0 then redis.call('del', KEYS[1]) end
if v == 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]) end
return v`
)

// javaLatchChannel is RedissonCountDownLatch.getChannelName: braces always.
func javaLatchChannel(name string) string { return "redisson_countdownlatch__channel__{" + name + "}" }

func (j redissonJava) latchTrySet(ctx context.Context, name string, count int64) (int64, error) {
	return j.eval(ctx, javaLatchTrySet, []string{name, javaLatchChannel(name)}, "1", strconv.FormatInt(count, 10), "publish").AsInt64()
}

func (j redissonJava) latchCountDown(ctx context.Context, name string) error {
	return j.eval(ctx, javaLatchCountDown, []string{name, javaLatchChannel(name)}, "0", "publish").Error()
}

// --- RSemaphore, RPermitExpirableSemaphore ---

const (
	// RedissonSemaphore.tryAcquireAsync0: KEYS name; ARGV permits.
	javaSemAcquire = `local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  return 1
end
return 0`
	// RedissonSemaphore.releaseAsync: KEYS name, channel; ARGV permits,
	// publish command. Publishes the new count whatever it is.
	javaSemRelease = `local value = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], value)
return value`
	// RedissonSemaphore.drainPermitsAsync: KEYS name. Sets any count,
	// zero or negative too, to 0 and returns what it was (the string GET
	// read, which EVAL_INTEGER turns into a number); 0 when there is none.
	javaSemDrain = `local value = redis.call('get', KEYS[1])
if value == false then return 0 end
redis.call('set', KEYS[1], 0)
return value`
	// RedissonPermitExpirableSemaphore.addPermitsAsync: KEYS name, channel;
	// ARGV permits, publish command. Publishes the permits added (not the new
	// count), and nothing when they are removed.
	javaPermitAddPermits = `local value = redis.call('get', KEYS[1])
if value == false then value = 0 end
redis.call('set', KEYS[1], tonumber(value) + tonumber(ARGV[1]))
if tonumber(ARGV[1]) > 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]) end`
	// RedissonPermitExpirableSemaphore.tryAcquireAsync for one permit: KEYS
	// name, {name}:timeout, channel; ARGV permits, timeout date (client
	// clock), now (client clock), non-expirable date, publish command, then
	// each id as 16 raw bytes (ByteBufUtil.decodeHexDump).
	javaPermitAcquire = `local expired = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, ARGV[1])
if #expired > 0 then
  redis.call('zrem', KEYS[2], unpack(expired))
  local value = redis.call('incrby', KEYS[1], #expired)
  if tonumber(value) > 0 then redis.call(ARGV[5], KEYS[3], value) end
end
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  for i = 6, #ARGV do redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]) end
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
  return 'OK'
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if first[1] ~= nil and first[2] ~= ARGV[4] then return ':' .. tostring(first[2]) end
return nil`
	// RedissonPermitExpirableSemaphore.tryReleaseAsync(id): KEYS name,
	// channel, {name}:timeout; ARGV id as 16 raw bytes, 1, now (client
	// clock), publish command.
	javaPermitRelease = `local expire = redis.call('zscore', KEYS[3], ARGV[1])
if tonumber(redis.call('zrem', KEYS[3], ARGV[1])) ~= 1 then return 0 end
local value = redis.call('incrby', KEYS[1], ARGV[2])
redis.call(ARGV[4], KEYS[2], value)
if tonumber(expire) <= tonumber(ARGV[3]) then return 0 end
return 1`
)

// javaPermitSetPermits is RedissonPermitExpirableSemaphore.setPermitsAsync's
// script, copied verbatim (its Java string pieces joined) from
// redisson/redisson at commit 0482efe14713f6ef660cccbd66118154d72f1425
// (redisson/src/main/java/org/redisson/RedissonPermitExpirableSemaphore.java;
// unchanged at 017b8306b450d6970ef7a5244e89c1c14bbab571): KEYS name,
// channel, {name}:timeout; ARGV permits, publish command.
const javaPermitSetPermits = "local available = redis.call('get', KEYS[1]); " +
	"if (available == false) then " +
	"redis.call('set', KEYS[1], ARGV[1]); " +
	"redis.call(ARGV[2], KEYS[2], ARGV[1]); " +
	"return;" +
	"end;" +
	"local acquired = redis.call('zcount', KEYS[3], 0, '+inf'); " +
	"local maximum = (acquired == false and 0 or acquired) + tonumber(available); " +
	"if (maximum == tonumber(ARGV[1])) then " +
	"return;" +
	"end;" +
	"redis.call('incrby', KEYS[1], tonumber(ARGV[1]) - maximum); " +
	"redis.call(ARGV[2], KEYS[2], ARGV[1]);"

func (j redissonJava) permitSetPermits(ctx context.Context, name string, n int64) error {
	keys := []string{name, redissonName("redisson_sc", name), redissonSuffix(name, "timeout")}
	err := j.eval(ctx, javaPermitSetPermits, keys, strconv.FormatInt(n, 10), "publish").Error()
	if rueidis.IsRedisNil(err) { // EVAL_VOID: the script returns nothing
		return nil
	}
	return err
}

func (j redissonJava) semAcquire(ctx context.Context, name string, n int64) (int64, error) {
	return j.eval(ctx, javaSemAcquire, []string{name}, strconv.FormatInt(n, 10)).AsInt64()
}

func (j redissonJava) semRelease(ctx context.Context, name string, n int64) (int64, error) {
	return j.eval(ctx, javaSemRelease, []string{name, redissonName("redisson_sc", name)}, strconv.FormatInt(n, 10), "publish").AsInt64()
}

func (j redissonJava) semDrain(ctx context.Context, name string) (int64, error) {
	return j.eval(ctx, javaSemDrain, []string{name}).AsInt64()
}

func (j redissonJava) permitAddPermits(ctx context.Context, name string, n int64) error {
	err := j.eval(ctx, javaPermitAddPermits, []string{name, redissonName("redisson_sc", name)}, strconv.FormatInt(n, 10), "publish").Error()
	if rueidis.IsRedisNil(err) { // EVAL_VOID: the script returns nothing
		return nil
	}
	return err
}

// permitAcquire takes one permit with the given lease and returns its id as
// Redisson shows it (32 hex digits), or "" when none was free.
func (j redissonJava) permitAcquire(ctx context.Context, name string, lease time.Duration) (string, error) {
	id := randomID() // ServiceManager.generateId: 16 random bytes, hex
	raw, _ := permitWire(id)
	now := time.Now().UnixMilli()
	keys := []string{name, redissonSuffix(name, "timeout"), redissonName("redisson_sc", name)}
	r := j.eval(ctx, javaPermitAcquire, keys, "1", strconv.FormatInt(now+lease.Milliseconds(), 10),
		strconv.FormatInt(now, 10), "922337203685477", "publish", string(raw))
	s, err := r.ToString()
	if rueidis.IsRedisNil(err) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	if s != "OK" {
		return "", nil
	}
	return id, nil
}

func (j redissonJava) permitRelease(ctx context.Context, name, id string) (int64, error) {
	raw, err := permitWire(id)
	if err != nil {
		return 0, err
	}
	keys := []string{name, redissonName("redisson_sc", name), redissonSuffix(name, "timeout")}
	return j.eval(ctx, javaPermitRelease, keys, string(raw), "1", strconv.FormatInt(time.Now().UnixMilli(), 10), "publish").AsInt64()
}

// channelLog subscribes to channels as a Redisson PublishSubscribe would and
// records every message in order.
type channelLog struct {
	ch chan string // "<channel> <message>"
}

func listen(t *testing.T, node *redistest.Node, channels ...string) *channelLog {
	t.Helper()
	l := &channelLog{ch: make(chan string, 64)}
	rc := node.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	subscribed := make(chan struct{})
	var once sync.Once
	n := 0
	hook := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == "subscribe" {
			n++
			if n == len(channels) {
				once.Do(func() { close(subscribed) })
			}
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = rc.Receive(hook, rc.B().Subscribe().Channel(channels...).Build(), func(m rueidis.PubSubMessage) {
			select {
			case l.ch <- m.Channel + " " + m.Message:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-subscribed:
	case <-time.After(5 * time.Second):
		t.Fatalf("subscribe to %v timed out", channels)
	}
	return l
}

// next returns the next message, failing the test when none comes within d.
func (l *channelLog) next(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case m := <-l.ch:
		return m
	case <-time.After(d):
		t.Fatalf("no message within %s", d)
		return ""
	}
}

// quiet fails the test when a message arrives within d.
func (l *channelLog) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m := <-l.ch:
		t.Fatalf("unexpected message %q", m)
	case <-time.After(d):
	}
}

// within runs f in a goroutine and fails unless it returns nil within d. The
// Java side's leases are 30 s, so a bound of a few seconds can only be met
// by a wake-up message, never by the fallback timer.
func within(t *testing.T, d time.Duration, what string, f func() error) func() {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- f() }()
	return func() {
		t.Helper()
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(d):
			t.Fatalf("%s: not done within %s", what, d)
		}
	}
}

// --- RFairLock (RedissonFairLock) ---

const (
	// RedissonFairLock.tryLockInnerAsync, the EVAL_LONG form (lock, tryLock
	// with a wait): KEYS name, redisson_lock_queue:{name},
	// redisson_lock_timeout:{name}; ARGV lease, <lockName>, waitTime, now
	// (the Java host's clock).
	javaFairLock = `while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then break end
  local timeout = tonumber(redis.call('zscore', KEYS[3], first))
  if timeout <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], first)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
if redis.call('exists', KEYS[1]) == 0 and
   (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  local waiting = redis.call('zrange', KEYS[3], 0, -1)
  for i = 1, #waiting do redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), waiting[i]) end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
local timeout = redis.call('zscore', KEYS[3], ARGV[2])
if timeout ~= false then
  return timeout - tonumber(ARGV[3]) - tonumber(ARGV[4])
end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last ~= false and last ~= ARGV[2] then
  ttl = tonumber(redis.call('zscore', KEYS[3], last)) - tonumber(ARGV[4])
else
  ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl`
	// RedissonFairLock.unlockInnerAsync: KEYS name, queue, timeouts, channel,
	// unlock latch; ARGV UNLOCK_MESSAGE 0, lease, <lockName>, now, publish
	// command, latch timeout.
	javaFairUnlock = `local seen = redis.call('get', KEYS[5])
if seen ~= false then return tonumber(seen) end
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then break end
  local timeout = tonumber(redis.call('zscore', KEYS[3], first))
  if timeout <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], first)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
if redis.call('exists', KEYS[1]) == 0 then
  local nextWaiter = redis.call('lindex', KEYS[2], 0)
  if nextWaiter ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. nextWaiter, ARGV[1]) end
  redis.call('set', KEYS[5], 1, 'px', ARGV[6])
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
local n = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if n > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[5], 0, 'px', ARGV[6])
  return 0
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[6])
local nextWaiter = redis.call('lindex', KEYS[2], 0)
if nextWaiter ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. nextWaiter, ARGV[1]) end
return 1`
)

// javaThreadWait is RedissonFairLock's default threadWaitTime (ms).
const javaThreadWait = "300000"

func (j redissonJava) fairLock(ctx context.Context, name string) (bool, int64, error) {
	keys := []string{name, redissonName("redisson_lock_queue", name), redissonName("redisson_lock_timeout", name)}
	return nilOrTTL(j.eval(ctx, javaFairLock, keys, "30000", j.lockName(), javaThreadWait, strconv.FormatInt(time.Now().UnixMilli(), 10)))
}

func (j redissonJava) fairUnlock(ctx context.Context, name string) (int64, error) {
	keys := []string{name, redissonName("redisson_lock_queue", name), redissonName("redisson_lock_timeout", name),
		redissonName("redisson_lock__channel", name), redissonName("redisson_unlock_latch", name) + ":" + randomID()}
	return j.eval(ctx, javaFairUnlock, keys, "0", "30000", j.lockName(), strconv.FormatInt(time.Now().UnixMilli(), 10), "publish", "5000").AsInt64()
}

// fairChannel is the thread's own wake-up channel (RedissonFairLock.subscribe).
func (j redissonJava) fairChannel(name string) string {
	return redissonName("redisson_lock__channel", name) + ":" + j.lockName()
}

// RedissonFencedLock.tryLockInnerAsync (EVAL_LONG_LIST): KEYS name,
// redisson_lock_token:{name}; ARGV lease, <lockName>. Every acquisition,
// re-entry included, draws a token.
const javaFencedLock = `if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local token = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}`

// fencedLock returns the token, or -1 when the lock is held by another.
func (j redissonJava) fencedLock(ctx context.Context, name string) (int64, error) {
	r, err := j.eval(ctx, javaFencedLock, []string{name, redissonName("redisson_lock_token", name)}, "30000", j.lockName()).AsIntSlice()
	if err != nil {
		return 0, err
	}
	return r[1], nil
}

func (j redissonJava) unlock(ctx context.Context, name string) (int64, error) {
	keys := []string{name, redissonName("redisson_lock__channel", name), redissonName("redisson_unlock_latch", name) + ":" + randomID()}
	// RedissonLock.unlockInnerAsync, Redisson's own text (exactUnlock): ARGV
	// UNLOCK_MESSAGE, lease, <lockName>, publish command, latch timeout.
	return j.eval(ctx, exactUnlock, keys, "0", "30000", j.lockName(), "publish", "5000").AsInt64()
}
