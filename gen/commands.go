package gen

// keySpec says which arguments of a Redis command (1-based, after the
// command name) are keys: first, last (-1: through the end; -2: all but the
// last) and step, as in Redis's own command table.
type keySpec struct {
	first, last, step int
}

var (
	oneKey   = keySpec{1, 1, 1}
	twoKeys  = keySpec{1, 2, 1}
	allKeys  = keySpec{1, -1, 1}
	pairKeys = keySpec{1, -1, 2}
)

// commandKeys lists the key positions of common commands. Commands not listed
// are not checked. PUBLISH takes a channel, not a key, and is not listed.
var commandKeys = map[string]keySpec{
	// strings
	"GET": oneKey, "SET": oneKey, "SETNX": oneKey, "SETEX": oneKey, "PSETEX": oneKey,
	"GETSET": oneKey, "GETDEL": oneKey, "GETEX": oneKey, "APPEND": oneKey, "STRLEN": oneKey,
	"INCR": oneKey, "INCRBY": oneKey, "INCRBYFLOAT": oneKey, "DECR": oneKey, "DECRBY": oneKey,
	"GETRANGE": oneKey, "SETRANGE": oneKey, "SETBIT": oneKey, "GETBIT": oneKey, "BITCOUNT": oneKey,
	"MGET": allKeys, "MSET": pairKeys, "MSETNX": pairKeys,
	// generic
	"DEL": allKeys, "UNLINK": allKeys, "EXISTS": allKeys, "TOUCH": allKeys,
	"EXPIRE": oneKey, "PEXPIRE": oneKey, "EXPIREAT": oneKey, "PEXPIREAT": oneKey,
	"EXPIRETIME": oneKey, "PEXPIRETIME": oneKey, "PERSIST": oneKey, "TTL": oneKey, "PTTL": oneKey,
	"TYPE": oneKey, "RENAME": twoKeys, "RENAMENX": twoKeys, "COPY": twoKeys, "DUMP": oneKey,
	// hashes
	"HSET": oneKey, "HSETNX": oneKey, "HMSET": oneKey, "HGET": oneKey, "HMGET": oneKey,
	"HDEL": oneKey, "HEXISTS": oneKey, "HINCRBY": oneKey, "HINCRBYFLOAT": oneKey, "HLEN": oneKey,
	"HGETALL": oneKey, "HKEYS": oneKey, "HVALS": oneKey, "HSTRLEN": oneKey, "HRANDFIELD": oneKey,
	"HSCAN": oneKey,
	// sorted sets
	"ZADD": oneKey, "ZREM": oneKey, "ZRANGE": oneKey, "ZREVRANGE": oneKey, "ZRANGEBYSCORE": oneKey,
	"ZREVRANGEBYSCORE": oneKey, "ZRANGEBYLEX": oneKey, "ZSCORE": oneKey, "ZMSCORE": oneKey,
	"ZCARD": oneKey, "ZCOUNT": oneKey, "ZPOPMIN": oneKey, "ZPOPMAX": oneKey, "ZRANK": oneKey,
	"ZREVRANK": oneKey, "ZINCRBY": oneKey, "ZREMRANGEBYSCORE": oneKey, "ZREMRANGEBYRANK": oneKey,
	"ZREMRANGEBYLEX": oneKey, "ZRANGESTORE": twoKeys, "ZSCAN": oneKey,
	// lists
	"RPUSH": oneKey, "LPUSH": oneKey, "RPUSHX": oneKey, "LPUSHX": oneKey, "LPOP": oneKey,
	"RPOP": oneKey, "LRANGE": oneKey, "LREM": oneKey, "LLEN": oneKey, "LINDEX": oneKey,
	"LSET": oneKey, "LTRIM": oneKey, "LINSERT": oneKey, "LPOS": oneKey,
	"RPOPLPUSH": twoKeys, "LMOVE": twoKeys,
	// sets
	"SADD": oneKey, "SREM": oneKey, "SMEMBERS": oneKey, "SCARD": oneKey, "SISMEMBER": oneKey,
	"SMISMEMBER": oneKey, "SPOP": oneKey, "SRANDMEMBER": oneKey, "SSCAN": oneKey,
	"SMOVE": twoKeys, "SINTER": allKeys, "SUNION": allKeys, "SDIFF": allKeys,
	"SINTERSTORE": allKeys, "SUNIONSTORE": allKeys, "SDIFFSTORE": allKeys,
	// streams, hyperloglog
	"XADD": oneKey, "XLEN": oneKey, "XRANGE": oneKey, "XREVRANGE": oneKey, "XDEL": oneKey,
	"XTRIM": oneKey, "PFADD": oneKey, "PFCOUNT": allKeys, "PFMERGE": allKeys,
	// sharded pub/sub: the shard channel is routed like a key
	"SPUBLISH": oneKey,
}

// isKeyPosition reports whether argument i (1-based, after the command name)
// of n arguments is a key position of spec.
func (s keySpec) isKeyPosition(i, n int) bool {
	last := s.last
	switch last {
	case -1:
		last = n
	case -2:
		last = n - 1
	}
	return i >= s.first && i <= last && (i-s.first)%s.step == 0
}
