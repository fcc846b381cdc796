package scriptlock

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The scripts below are Redisson's own, copied verbatim (their Java string
// pieces joined) from redisson/redisson at commit
// 0482efe14713f6ef660cccbd66118154d72f1425
// (redisson/src/main/java/org/redisson/*.java), with the KEYS and ARGV those
// classes pass. Unlike the redissonJava helpers, which restate the protocol,
// these run the very text a Java service sends.

const (
	// RedissonReadLock.tryLockInnerAsync: KEYS name,
	// getReadWriteTimeoutNamePrefix; ARGV lease, <lockName>, <lockName>:write.
	exactReadLock = "local mode = redis.call('hget', KEYS[1], 'mode'); " +
		"if (mode == false) then " +
		"redis.call('hset', KEYS[1], 'mode', 'read'); " +
		"redis.call('hset', KEYS[1], ARGV[2], 1); " +
		"redis.call('set', KEYS[2] .. ':1', 1); " +
		"redis.call('pexpire', KEYS[2] .. ':1', ARGV[1]); " +
		"redis.call('pexpire', KEYS[1], ARGV[1]); " +
		"return nil; " +
		"end; " +
		"if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then " +
		"local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1); " +
		"local key = KEYS[2] .. ':' .. ind;" +
		"redis.call('set', key, 1); " +
		"redis.call('pexpire', key, ARGV[1]); " +
		"local remainTime = redis.call('pttl', KEYS[1]); " +
		"redis.call('pexpire', KEYS[1], math.max(remainTime, ARGV[1])); " +
		"return nil; " +
		"end;" +
		"return redis.call('pttl', KEYS[1]);"

	// RedissonReadLock.unlockInnerAsync: KEYS name, channel, timeout prefix,
	// key prefix, unlock latch; ARGV UNLOCK_MESSAGE, <lockName>, publish
	// command, latch timeout.
	exactReadUnlock = "local val = redis.call('get', KEYS[5]); " +
		"if val ~= false then " +
		"return tonumber(val);" +
		"end; " +
		"local mode = redis.call('hget', KEYS[1], 'mode'); " +
		"if (mode == false) then " +
		"redis.call(ARGV[3], KEYS[2], ARGV[1]); " +
		"redis.call('set', KEYS[5], 1, 'px', ARGV[4]); " +
		"return 1; " +
		"end; " +
		"local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); " +
		"if (lockExists == 0) then " +
		"return nil;" +
		"end; " +
		"local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); " +
		"if (counter == 0) then " +
		"redis.call('hdel', KEYS[1], ARGV[2]); " +
		"end;" +
		"redis.call('del', KEYS[3] .. ':' .. (counter+1)); " +
		"if (redis.call('hlen', KEYS[1]) > 1) then " +
		"local maxRemainTime = -3; " +
		"local keys = redis.call('hkeys', KEYS[1]); " +
		"for n, key in ipairs(keys) do " +
		"counter = tonumber(redis.call('hget', KEYS[1], key)); " +
		"if type(counter) == 'number' then " +
		"for i=counter, 1, -1 do " +
		"local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); " +
		"maxRemainTime = math.max(remainTime, maxRemainTime);" +
		"end; " +
		"end; " +
		"end; " +
		"if maxRemainTime > 0 then " +
		"redis.call('pexpire', KEYS[1], maxRemainTime); " +
		"redis.call('set', KEYS[5], 0, 'px', ARGV[4]); " +
		"return 0; " +
		"end;" +
		"if mode == 'write' then " +
		"redis.call('set', KEYS[5], 0, 'px', ARGV[4]); " +
		"return 0;" +
		"end; " +
		"end; " +
		"redis.call('del', KEYS[1]); " +
		"redis.call(ARGV[3], KEYS[2], ARGV[1]); " +
		"redis.call('set', KEYS[5], 1, 'px', ARGV[4]); " +
		"return 1; "

	// RedissonReadLock.renewExpirationAsync: KEYS name, key prefix; ARGV
	// lockWatchdogTimeout, <lockName>.
	exactReadRenew = "local counter = redis.call('hget', KEYS[1], ARGV[2]); " +
		"if (counter ~= false) then " +
		"redis.call('pexpire', KEYS[1], ARGV[1]); " +
		"if (redis.call('hlen', KEYS[1]) > 1) then " +
		"local keys = redis.call('hkeys', KEYS[1]); " +
		"for n, key in ipairs(keys) do " +
		"counter = tonumber(redis.call('hget', KEYS[1], key)); " +
		"if type(counter) == 'number' then " +
		"for i=counter, 1, -1 do " +
		"redis.call('pexpire', KEYS[2] .. ':' .. key .. ':rwlock_timeout:' .. i, ARGV[1]); " +
		"end; " +
		"end; " +
		"end; " +
		"end; " +
		"return 1; " +
		"end; " +
		"return 0;"

	// RedissonWriteLock.tryLockInnerAsync: KEYS name; ARGV lease,
	// <lockName>:write.
	exactWriteLock = "local mode = redis.call('hget', KEYS[1], 'mode'); " +
		"if (mode == false) then " +
		"redis.call('hset', KEYS[1], 'mode', 'write'); " +
		"redis.call('hset', KEYS[1], ARGV[2], 1); " +
		"redis.call('pexpire', KEYS[1], ARGV[1]); " +
		"return nil; " +
		"end; " +
		"if (mode == 'write') then " +
		"if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then " +
		"redis.call('hincrby', KEYS[1], ARGV[2], 1); " +
		"local currentExpire = redis.call('pttl', KEYS[1]); " +
		"redis.call('pexpire', KEYS[1], currentExpire + ARGV[1]); " +
		"return nil; " +
		"end; " +
		"end;" +
		"return redis.call('pttl', KEYS[1]);"

	// RedissonWriteLock.unlockInnerAsync: KEYS name, channel, unlock latch;
	// ARGV READ_UNLOCK_MESSAGE, lease, <lockName>:write, publish command,
	// latch timeout.
	exactWriteUnlock = "local val = redis.call('get', KEYS[3]); " +
		"if val ~= false then " +
		"return tonumber(val);" +
		"end; " +
		"local mode = redis.call('hget', KEYS[1], 'mode'); " +
		"if (mode == false) then " +
		"redis.call(ARGV[4], KEYS[2], ARGV[1]); " +
		"redis.call('set', KEYS[3], 1, 'px', ARGV[5]); " +
		"return 1; " +
		"end;" +
		"if (mode == 'write') then " +
		"local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); " +
		"if (lockExists == 0) then " +
		"return nil;" +
		"else " +
		"local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); " +
		"if (counter > 0) then " +
		"redis.call('pexpire', KEYS[1], ARGV[2]); " +
		"redis.call('set', KEYS[3], 0, 'px', ARGV[5]); " +
		"return 0; " +
		"else " +
		"redis.call('hdel', KEYS[1], ARGV[3]); " +
		"if (redis.call('hlen', KEYS[1]) == 1) then " +
		"redis.call('del', KEYS[1]); " +
		"redis.call(ARGV[4], KEYS[2], ARGV[1]); " +
		"else " +
		"redis.call('hset', KEYS[1], 'mode', 'read'); " +
		"end; " +
		"redis.call('set', KEYS[3], 1, 'px', ARGV[5]); " +
		"return 1; " +
		"end; " +
		"end; " +
		"end; " +
		"return nil;"

	// RedissonLock.unlockInnerAsync: KEYS name, channel, unlock latch; ARGV
	// UNLOCK_MESSAGE, lease, <lockName>, publish command, latch timeout.
	exactUnlock = "local val = redis.call('get', KEYS[3]); " +
		"if val ~= false then " +
		"return tonumber(val);" +
		"end; " +
		"if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then " +
		"return nil;" +
		"end; " +
		"local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); " +
		"if (counter > 0) then " +
		"redis.call('pexpire', KEYS[1], ARGV[2]); " +
		"redis.call('set', KEYS[3], 0, 'px', ARGV[5]); " +
		"return 0; " +
		"else " +
		"redis.call('del', KEYS[1]); " +
		"redis.call(ARGV[4], KEYS[2], ARGV[1]); " +
		"redis.call('set', KEYS[3], 1, 'px', ARGV[5]); " +
		"return 1; " +
		"end; "
)

// redissonExact is one Java thread of a Redisson client: its id is a
// version-4 UUID, as Redisson's ServiceManager id is.
type redissonExact struct {
	rc     rueidis.Client
	uuid   string
	thread int64
}

func newRedissonExact(rc rueidis.Client, thread int64) redissonExact {
	return redissonExact{rc: rc, uuid: "3b241101-e2bb-4255-8caf-4136c566a962", thread: thread}
}

func (j redissonExact) lockName() string { return j.uuid + ":" + strconv.FormatInt(j.thread, 10) }

func (j redissonExact) eval(ctx context.Context, script string, keys []string, args ...string) rueidis.RedisResult {
	return j.rc.Do(ctx, j.rc.B().Eval().Script(script).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
}

// readTimeoutPrefix is getReadWriteTimeoutNamePrefix: suffixName(name,
// lockName) + ":rwlock_timeout".
func (j redissonExact) readTimeoutPrefix(name string) string {
	return redissonSuffix(name, j.lockName()) + ":rwlock_timeout"
}

// keyPrefix is RedissonReadLock.getKeyPrefix.
func (j redissonExact) keyPrefix(name string) string {
	return strings.Split(j.readTimeoutPrefix(name), ":"+j.lockName())[0]
}

func (j redissonExact) readLock(ctx context.Context, name string, lease time.Duration) (bool, int64, error) {
	return nilOrTTL(j.eval(ctx, exactReadLock, []string{name, j.readTimeoutPrefix(name)},
		strconv.FormatInt(lease.Milliseconds(), 10), j.lockName(), j.lockName()+":write"))
}

func (j redissonExact) readUnlock(ctx context.Context, name string) (int64, error) {
	keys := []string{name, redissonName("redisson_rwlock", name), j.readTimeoutPrefix(name), j.keyPrefix(name),
		redissonName("redisson_unlock_latch", name) + ":" + randomID()}
	return j.eval(ctx, exactReadUnlock, keys, "0", j.lockName(), "publish", "7500").AsInt64()
}

func (j redissonExact) readRenew(ctx context.Context, name string, lease time.Duration) (int64, error) {
	return j.eval(ctx, exactReadRenew, []string{name, j.keyPrefix(name)}, strconv.FormatInt(lease.Milliseconds(), 10), j.lockName()).AsInt64()
}

// Read holds of both sides keep the read-write lock alive for the longest
// lease among them, whichever side releases: Redisson's read unlock finds a
// Go reader's lease keys where it looks for every reader's, and a Go read
// release finds Redisson's. Redisson's read renewal extends Go's lease keys
// as its own (the layout the docs describe).
func TestRedissonExactReadExpiry(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, name := range []string{"ledger", "ledger:{3}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			rw := mustRW(t, c, name)
			key := rw.Key()
			java := newRedissonExact(node.Client(t), 21)

			// A Go reader with a long lease, a Java reader with a short one:
			// Java's release leaves the lock to the Go reader's lease.
			r, err := rw.RLockWithLease(ctx, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if ok, _, err := java.readLock(ctx, key, 5*time.Second); err != nil || !ok {
				t.Fatalf("Java read beside a Go reader: ok=%v err=%v", ok, err)
			}
			if n, err := java.readUnlock(ctx, key); err != nil || n != 0 {
				t.Fatalf("Java read unlock beside a Go reader = %d, %v; want 0", n, err)
			}
			if p := pttlOf(t, node, key); p < 15000 {
				t.Fatalf("lock PTTL after Java's read unlock = %d ms; the Go reader's lease is 20 s", p)
			}

			// A Java reader with a long lease, the Go reader's release: the
			// lock lives on for Java's lease.
			if ok, _, err := java.readLock(ctx, key, 25*time.Second); err != nil || !ok {
				t.Fatalf("Java read: ok=%v err=%v", ok, err)
			}
			if err := rw.RUnlock(r); err != nil {
				t.Fatal(err)
			}
			if p := pttlOf(t, node, key); p < 20000 {
				t.Fatalf("lock PTTL after Go's read release = %d ms; the Java reader's lease is 25 s", p)
			}

			// Redisson's renewal sets every reader's lease key, Go's too.
			r, err = rw.RLockWithLease(ctx, 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := java.readRenew(ctx, key, 30*time.Second); err != nil || n != 1 {
				t.Fatalf("Java read renew = %d, %v", n, err)
			}
			goLease := rwTimeouts(key, holdField(t, node, key, java.lockName())) + ":1"
			if p := pttlOf(t, node, goLease); p < 25000 {
				t.Fatalf("Go reader's lease key %s PTTL after Redisson's renewal = %d ms, want ~30 s", goLease, p)
			}
			if err := rw.RUnlock(r); err != nil {
				t.Fatal(err)
			}
			if n, err := java.readUnlock(ctx, key); err != nil || n != 1 {
				t.Fatalf("Java last read unlock = %d, %v; want 1", n, err)
			}
			if n, _ := node.Do(t, "EXISTS", key).AsInt64(); n != 0 {
				t.Fatal("lock still exists after both sides released")
			}
		})
	}
}

// holdField returns the one field of the read-write lock's hash that is
// neither mode nor skip.
func holdField(t *testing.T, node *redistest.Node, key, skip string) string {
	t.Helper()
	fields, err := node.Do(t, "HKEYS", key).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		if f != "mode" && f != skip {
			return f
		}
	}
	t.Fatalf("no Go field in %q", fields)
	return ""
}

const (
	// RedissonPermitExpirableSemaphore.tryAcquireAsync(ids, timeoutDate):
	// KEYS name, {name}:timeout, channel; ARGV permits, timeout date, now,
	// non-expirable date, publish command, then each id as 16 raw bytes.
	exactPermitAcquire = "local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, ARGV[1]); " +
		"if #expiredIds > 0 then " +
		"redis.call('zrem', KEYS[2], unpack(expiredIds)); " +
		"local value = redis.call('incrby', KEYS[1], #expiredIds); " +
		"if tonumber(value) > 0 then " +
		"redis.call(ARGV[5], KEYS[3], value); " +
		"end;" +
		"end; " +
		"local value = redis.call('get', KEYS[1]); " +
		"if (value ~= false and tonumber(value) >= tonumber(ARGV[1])) then " +
		"redis.call('decrby', KEYS[1], ARGV[1]); " +
		"for i = 6, #ARGV, 1 do " +
		"redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]); " +
		"end; " +
		"local ttl = redis.call('pttl', KEYS[1]); " +
		"if ttl > 0 then " +
		"redis.call('pexpire', KEYS[2], ttl); " +
		"end; " +
		"return 'OK'; " +
		"end; " +
		"local v = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES'); " +
		"if v[1] ~= nil and v[2] ~= ARGV[4] then " +
		"return ':' .. tostring(v[2]); " +
		"end " +
		"return nil;"

	// RedissonPermitExpirableSemaphore.tryReleaseAsync(List): KEYS name,
	// channel, {name}:timeout; ARGV count, now, publish command, then each
	// id as 16 raw bytes. It publishes the number of permits it released,
	// not the new count.
	exactPermitReleaseMany = "local expiredIds = redis.call('zrangebyscore', KEYS[3], 0, ARGV[2], 'limit', 0, -1); " +
		"if #expiredIds > 0 then " +
		"redis.call('zrem', KEYS[3], unpack(expiredIds)); " +
		"local value = redis.call('incrby', KEYS[1], #expiredIds); " +
		"if tonumber(value) > 0 then " +
		"redis.call(ARGV[3], KEYS[2], value); " +
		"end; " +
		"end; " +
		"local keys = {}; " +
		"for i = 4, #ARGV, 1 do " +
		"table.insert(keys, ARGV[i]); " +
		"end; " +
		"local removed = redis.call('zrem', KEYS[3], unpack(keys)); " +
		"if tonumber(removed) == 0 then " +
		"return 0;" +
		"end; " +
		"redis.call('incrby', KEYS[1], removed); " +
		"redis.call(ARGV[3], KEYS[2], removed); " +
		"return removed;"
)

// permitsAcquire takes n permits at once with the given lease, as
// RPermitExpirableSemaphore.tryAcquire(n, ...), and returns their ids
// (none when they were not all free).
func (j redissonExact) permitsAcquire(ctx context.Context, name string, n int, lease time.Duration) ([]string, error) {
	ids := make([]string, n)
	args := []string{strconv.Itoa(n), "", "", "922337203685477", "publish"}
	now := time.Now().UnixMilli()
	args[1], args[2] = strconv.FormatInt(now+lease.Milliseconds(), 10), strconv.FormatInt(now, 10)
	for i := range ids {
		ids[i] = randomID()
		raw, _ := permitWire(ids[i])
		args = append(args, string(raw))
	}
	keys := []string{name, redissonSuffix(name, "timeout"), redissonName("redisson_sc", name)}
	s, err := j.eval(ctx, exactPermitAcquire, keys, args...).ToString()
	if rueidis.IsRedisNil(err) || (err == nil && s != "OK") {
		return nil, nil
	}
	return ids, err
}

func (j redissonExact) permitsRelease(ctx context.Context, name string, ids ...string) (int64, error) {
	args := []string{strconv.Itoa(len(ids)), strconv.FormatInt(time.Now().UnixMilli(), 10), "publish"}
	for _, id := range ids {
		raw, err := permitWire(id)
		if err != nil {
			return 0, err
		}
		args = append(args, string(raw))
	}
	keys := []string{name, redissonName("redisson_sc", name), redissonSuffix(name, "timeout")}
	return j.eval(ctx, exactPermitReleaseMany, keys, args...).AsInt64()
}

// Redisson's acquisition of several permits at once and its release of a
// list of permits (which announces the number released, not the count):
// Go releases permits Java took in one call, Java releases Go's and its own
// together, and Go waiters wake on that release's message.
func TestRedissonExactPermitLists(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix)
	for _, name := range []string{"slots", "slots:{8}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			p := mustPermits(t, c, name)
			key := p.Key()
			java := newRedissonExact(node.Client(t), 31)
			if ok, err := p.TrySetPermits(ctx, 3); err != nil || !ok {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			jids, err := java.permitsAcquire(ctx, key, 2, 30*time.Second)
			if err != nil || len(jids) != 2 {
				t.Fatalf("Java acquire of 2 = %v, %v", jids, err)
			}
			if err := p.Release(ctx, jids[0]); err != nil {
				t.Fatalf("Go release of one of Java's permits: %v", err)
			}
			gid, err := p.Acquire(ctx, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := java.permitsRelease(ctx, key, gid, jids[1]); err != nil || n != 2 {
				t.Fatalf("Java release of a Go and a Java permit = %d, %v; want 2", n, err)
			}
			if n, err := p.AvailablePermits(ctx); err != nil || n != 3 {
				t.Fatalf("AvailablePermits = %d, %v; want 3", n, err)
			}

			// Java holds every permit; two Go waiters on two Clients wake
			// on the list release's "2".
			all, err := java.permitsAcquire(ctx, key, 3, 30*time.Second)
			if err != nil || len(all) != 3 {
				t.Fatalf("Java acquire of 3 = %v, %v", all, err)
			}
			var waits []func()
			for _, cl := range []*Client{c, c2} {
				h := mustPermits(t, cl, name)
				waits = append(waits, within(t, notifyFallback/2, "Go waiter after Java's list release", func() error {
					id, err := h.Acquire(ctx, 30*time.Second)
					if err == nil {
						err = h.Release(ctx, id)
					}
					return err
				}))
			}
			time.Sleep(300 * time.Millisecond)
			if n, err := java.permitsRelease(ctx, key, all[0], all[1]); err != nil || n != 2 {
				t.Fatalf("Java list release = %d, %v", n, err)
			}
			for _, w := range waits {
				w()
			}
		})
	}
}
