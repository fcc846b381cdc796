package scriptlock

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/scriptlock/scriptlock/internal/layout"
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

// redissonNames sets out[i] to redissonName(prefixes[i], name) for every
// non-empty prefix, in one allocation.
func redissonNames(out []string, name string, prefixes ...string) {
	joinNames(out, "", name, prefixes)
}

// joinNames sets out[i] to redissonName(prefixes[i], prefix+name) for every
// non-empty prefix, in one allocation, and returns the length of prefix+name.
func joinNames(out []string, prefix, name string, prefixes []string) int {
	open, end := ":{", "}"
	if strings.Contains(prefix, "{") || strings.Contains(name, "{") {
		open, end = ":", ""
	}
	kl := len(prefix) + len(name)
	n := 0
	for _, p := range prefixes {
		if p != "" {
			n += len(p) + len(open) + kl + len(end)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range prefixes {
		if p != "" {
			b.WriteString(p)
			b.WriteString(open)
			b.WriteString(prefix)
			b.WriteString(name)
			b.WriteString(end)
		}
	}
	all, at := b.String(), 0
	for i, p := range prefixes {
		if p == "" {
			continue
		}
		l := len(p) + len(open) + kl + len(end)
		out[i] = all[at : at+l]
		at += l
	}
	return kl
}

// lockKey validates a lock name and returns the Redis key of the lock.
func lockKey(prefix, name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	key := prefix + name
	if err := checkKey(prefix, key); err != nil {
		return "", err
	}
	return key, nil
}

// lockNames is lockKey and redissonNames in one allocation: it validates
// name, sets out[i] to redissonName(prefixes[i], key) for every non-empty
// prefix and returns the key, itself a part of out[0] (prefixes[0] must not
// be ""). Handles are often made per request.
func lockNames(out []string, prefix, name string, prefixes ...string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	kl := joinNames(out, prefix, name, prefixes)
	start := len(out[0]) - kl
	if !strings.Contains(prefix, "{") && !strings.Contains(name, "{") {
		start-- // the closing brace
	}
	key := out[0][start : start+kl]
	if err := checkKey(prefix, key); err != nil {
		return "", err
	}
	return key, nil
}

// checkName refuses an empty name and one longer than MaxNameLen.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: %d bytes, longer than %d", ErrInvalidName, len(name), MaxNameLen)
	}
	return nil
}

// checkKey refuses a lock key (prefix + name) whose braces would not keep
// its derived keys in its hash slot, and one named as a companion key.
func checkKey(prefix, key string) error {
	// A key with "{" but no complete hash tag would hash differently from the
	// channel and counter keys derived from it (Redisson's rule keeps their
	// braces as they are): refuse it instead of failing later with CROSSSLOT.
	if i := strings.IndexByte(key, '{'); i >= 0 {
		j := strings.IndexByte(key[i+1:], '}')
		if j <= 0 {
			if i < len(prefix) {
				return fmt.Errorf("%w: '{' without a non-empty hash tag {...} after key prefix %q", ErrInvalidName, prefix)
			}
			return fmt.Errorf("%w: '{' without a non-empty hash tag {...}", ErrInvalidName)
		}
	} else if i := strings.IndexByte(key, '}'); i >= 0 {
		// The derived names ("redisson_sc:{a}b}") would take "a" as their
		// hash tag and hash elsewhere than the key "a}b" itself.
		if i < len(prefix) {
			return fmt.Errorf("%w: '}' without a hash tag {...} in key prefix %q", ErrInvalidName, prefix)
		}
		return fmt.Errorf("%w: '}' without a hash tag {...}", ErrInvalidName)
	}
	if companionKey(key) {
		return fmt.Errorf("%w: key %q is named as another lock's companion key (fencing counter, queue, latch, permit leases, read lease)", ErrInvalidName, key)
	}
	if layout.WholeTag(key) {
		// Redisson's rule derives the same companion keys for "{x}" as
		// for "x" ("redisson_lock_token:{x}", "{x}:timeout", ...): two
		// such locks would share their fencing counter, queues, permit
		// leases, read leases and channels. "x" hashes to the same slot.
		// Only a key without a prefix takes this form: a prefix cannot
		// begin with a lone '{'.
		return fmt.Errorf("%w: key %q is one whole hash tag, whose companion keys (fencing counter, queues, permit leases, read leases, channels) are those of the key %q; name the lock without the braces, which keeps its hash slot", ErrInvalidName, key, key[1:len(key)-1])
	}
	return nil
}

// companionKey reports whether key has the form of a key derived from
// another lock's: a lock under it would read and write that lock's fencing
// counter, queue, latch, a PermitSemaphore's lease set or a read hold's lease key
// (<rwPrefix>:<field>:rwlock_timeout:<n>, which holds a count as a
// Semaphore's or a latch's key does). The operator CLI refuses the same names.
func companionKey(key string) bool { return layout.Companion(key) }

// randomID returns 128 random bits as 32 hex digits.
func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("scriptlock: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// clientID returns a random version-8 UUID: shaped as Redisson's
// connection-manager ids are (version-4 UUIDs), and told apart from them by
// its version digit, which is how MutexAcquire knows a scriptlock holder
// (whose release wakes Go waiters by name) from a Redisson one.
func clientID() string {
	id := []byte(randomID())
	id[12] = '8'
	id[16] = "89ab"[strings.IndexByte("0123456789abcdef", id[16])&3] // RFC 9562 variant
	s := string(id)
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// keySlot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of the key,
// or of its first non-empty {hash tag}, modulo 16384.
func keySlot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^key[i]]
	}
	return crc & 16383
}

// crc16Table is the CRC16-CCITT (XMODEM, polynomial 0x1021) table.
var crc16Table = func() [256]uint16 {
	var t [256]uint16
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()
