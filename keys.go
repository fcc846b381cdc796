package scriptlock

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// redissonName puts Redisson's prefix on a name: "prefix:{name}", or
// "prefix:name" when the name already carries a hash tag, so every key of one
// lock lands in the lock's hash slot exactly as Redisson lays it out.
func redissonName(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}

// redissonNames3 is redissonName for three prefixes on one name, built in
// one allocation: a handle is made per request in the middleware, so its
// key names are on the hot path.
func redissonNames3(name, p1, p2, p3 string) (string, string, string) {
	open, end := ":{", "}"
	if strings.Contains(name, "{") {
		open, end = ":", ""
	}
	var b strings.Builder
	b.Grow(len(p1) + len(p2) + len(p3) + 3*(len(open)+len(name)+len(end)))
	marks := [3]int{}
	for i, p := range [3]string{p1, p2, p3} {
		b.WriteString(p)
		b.WriteString(open)
		b.WriteString(name)
		b.WriteString(end)
		marks[i] = b.Len()
	}
	all := b.String()
	return all[:marks[0]], all[marks[0]:marks[1]], all[marks[1]:]
}

// msArg formats d in whole milliseconds, as scripts take durations.
func msArg(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// lockKey validates a lock name and returns the Redis key of the lock.
func lockKey(prefix, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: empty name", ErrInvalidName)
	}
	if len(name) > MaxNameLen {
		return "", fmt.Errorf("%w: %d bytes, longer than %d", ErrInvalidName, len(name), MaxNameLen)
	}
	key := prefix + name
	// A key with "{" but no complete hash tag would hash differently from the
	// channel and counter keys derived from it (Redisson's rule keeps their
	// braces as they are): refuse it instead of failing later with CROSSSLOT.
	if i := strings.IndexByte(key, '{'); i >= 0 {
		j := strings.IndexByte(key[i+1:], '}')
		if j <= 0 {
			if i < len(prefix) {
				return "", fmt.Errorf("%w: '{' without a non-empty hash tag {...} after key prefix %q", ErrInvalidName, prefix)
			}
			return "", fmt.Errorf("%w: '{' without a non-empty hash tag {...}", ErrInvalidName)
		}
	}
	return key, nil
}

// randomID returns 128 random bits as 32 hex digits.
func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("scriptlock: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// clientID returns 128 random bits formatted like a UUID, as Redisson's
// connection-manager ids are.
func clientID() string {
	id := randomID()
	return id[0:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32]
}
