// Package layout names every Redis key and channel that the lock primitives
// use for one lock key, for tools that read locks from outside a Client (the
// operator CLI). The root package's handles derive the same names; a test
// there keeps the two in step.
package layout

import "strings"

// Keys are the keys and channels that can belong to the lock key Lock.
type Keys struct {
	Lock  string // the lock hash, or the counter of a semaphore or latch
	Fence string // redisson_lock_token:{name}: last fencing token
	// UnlockLatch (redisson_unlock_latch:{name}) prefixes the records of
	// releases, force-unlocks and Mutex waiters' leaves:
	// <UnlockLatch>:<client-id>:<n>.
	UnlockLatch string
	Queue       string // redisson_lock_queue:{name}: waiters in order, Redisson's RFairLock protocol
	Timeouts    string // redisson_lock_timeout:{name}: their deadlines
	// FairMutex's own queue (the default; Redisson never reads it).
	FairQueue    string // scriptlock_fair_queue:{name}
	FairTimeouts string // scriptlock_fair_timeout:{name}
	Writers      string // redisson_rwlock_writers:{name}: RWMutex pending writers
	Permits      string // {name}:timeout: PermitSemaphore permit leases
	RWPrefix     string // {name}: prefix of RWMutex read-hold lease keys, <RWPrefix>:<field>:rwlock_timeout:<n>
	LockWaiters  string // scriptlock_lock_waiters:{name}: Mutex's registered Go waiters

	LockChannel  string // Mutex and Redisson-protocol FairMutex release messages
	LockWake     string // scriptlock_lock_wake:{name}: a Mutex release wakes one Go waiter by name
	FairWake     string // scriptlock_fair_wake:{name}: a FairMutex release (our protocol) wakes the next waiter by name
	RWChannel    string // RWMutex release messages
	SemChannel   string // Semaphore and PermitSemaphore releases
	LatchChannel string // CountDownLatch zero and reset messages
}

// For returns the layout of the lock stored under key (key prefix included),
// on a Redis Cluster when cluster is true (a latch's channel differs there).
func For(key string, cluster bool) Keys {
	return Keys{
		Lock:         key,
		Fence:        redissonName("redisson_lock_token", key),
		UnlockLatch:  redissonName("redisson_unlock_latch", key),
		Queue:        redissonName("redisson_lock_queue", key),
		Timeouts:     redissonName("redisson_lock_timeout", key),
		FairQueue:    redissonName("scriptlock_fair_queue", key),
		FairTimeouts: redissonName("scriptlock_fair_timeout", key),
		Writers:      redissonName("redisson_rwlock_writers", key),
		Permits:      redissonSuffix(key, "timeout"),
		RWPrefix:     rwPrefix(key),
		LockWaiters:  redissonName("scriptlock_lock_waiters", key),
		LockChannel:  redissonName("redisson_lock__channel", key),
		LockWake:     redissonName("scriptlock_lock_wake", key),
		FairWake:     redissonName("scriptlock_fair_wake", key),
		RWChannel:    redissonName("redisson_rwlock", key),
		SemChannel:   redissonName("redisson_sc", key),
		LatchChannel: latchChannel(key, cluster),
	}
}

// Channels lists the channels on which the primitives announce releases.
func (k Keys) Channels() []string {
	return []string{k.LockChannel, k.LockWake, k.RWChannel, k.SemChannel, k.LatchChannel}
}

// redissonName is "prefix:{name}", or "prefix:name" when name already carries
// a hash tag, as Redisson lays it out.
func redissonName(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}

// redissonSuffix is "{name}:suffix", or "name:suffix" with a hash tag.
func redissonSuffix(name, suffix string) string {
	if strings.Contains(name, "{") {
		return name + ":" + suffix
	}
	return "{" + name + "}:" + suffix
}

// latchChannel is Redisson's latch channel, the name always in braces, except
// on a Cluster for a name with a hash tag, where the braces would move the
// channel out of the latch's slot.
func latchChannel(key string, cluster bool) string {
	if cluster && strings.Contains(key, "{") {
		return "redisson_countdownlatch__channel__" + key
	}
	return "redisson_countdownlatch__channel__{" + key + "}"
}

// rwPrefix is key in braces, or key as is when it already has a hash tag.
func rwPrefix(key string) string {
	if strings.Contains(key, "{") {
		return key
	}
	return "{" + key + "}"
}

// CompanionPrefixes begin the names of the keys and channels derived from a
// lock's key: no lock name may give a key that starts with one.
var CompanionPrefixes = []string{
	"redisson_lock__channel:", "redisson_lock_token:", "redisson_unlock_latch:",
	"redisson_lock_queue:", "redisson_lock_timeout:", "redisson_rwlock:",
	"redisson_rwlock_writers:", "redisson_sc:", "redisson_sc_latch:",
	"redisson_countdownlatch_latch:", "scriptlock_lock_waiters:", "scriptlock_lock_wake:",
	"scriptlock_fair_queue:", "scriptlock_fair_timeout:", "scriptlock_fair_wake:",
}

// Companion reports whether key has the form of a key derived from another
// lock's (a fencing counter, a queue, a call's record, a PermitSemaphore's
// lease set {name}:timeout, or a read hold's lease key
// <RWPrefix>:<field>:rwlock_timeout:<n>): no lock is stored under it.
func Companion(key string) bool {
	// Every prefix begins with one of these two: most keys are told apart
	// without the loop (handles are often made per request).
	if strings.HasPrefix(key, "redisson_") || strings.HasPrefix(key, "scriptlock_") {
		for _, p := range CompanionPrefixes {
			if strings.HasPrefix(key, p) {
				return true
			}
		}
	}
	// The lease set of the PermitSemaphore whose key is the part before
	// ":timeout" (redissonSuffix always leaves a '{' in it).
	if base, ok := strings.CutSuffix(key, ":timeout"); ok && strings.Contains(base, "{") {
		return true
	}
	// A read lease key ends in ":rwlock_timeout:" and digits: the digits
	// are read from the end, so a key that does not end in one is told
	// apart without a search of the whole key.
	i := len(key)
	for i > 0 && '0' <= key[i-1] && key[i-1] <= '9' {
		i--
	}
	return i < len(key) && strings.HasSuffix(key[:i], ":rwlock_timeout:")
}

// PrefixTagFault says why a key prefix cannot stand before every lock name,
// or "" when it can: a '}' without a '{' before it ends no hash tag, and a
// '{' without a non-empty tag after it would be completed by the name,
// which then chooses the hash slot.
func PrefixTagFault(prefix string) string {
	if i := strings.IndexByte(prefix, '{'); i >= 0 {
		if strings.IndexByte(prefix[i+1:], '}') <= 0 {
			return "'{' without a non-empty hash tag {...}"
		}
	} else if strings.Contains(prefix, "}") {
		return "'}' without a hash tag {...}"
	}
	return ""
}

// WholeTag reports whether key is "{" + k + "}" for a k without braces: the
// one form of key whose derived keys (fencing counter, queues, permit
// leases, read leases, channels) are another key's, k's, in Redisson's
// layout, so that two locks under the keys k and {k} would share them.
func WholeTag(key string) bool {
	return len(key) > 2 && key[0] == '{' && key[len(key)-1] == '}' &&
		!strings.ContainsAny(key[1:len(key)-1], "{}")
}

// latchChannelPrefix begins Redisson's latch channel, which has no ':'
// before the name (latchChannel).
const latchChannelPrefix = "redisson_countdownlatch__channel__"

// channelPrefixes are the CompanionPrefixes (and the latch's) that name
// channels, not keys.
var channelPrefixes = map[string]bool{
	"redisson_lock__channel:": true, "redisson_rwlock:": true, "redisson_sc:": true,
	"scriptlock_lock_wake:": true, "scriptlock_fair_wake:": true, latchChannelPrefix: true,
}

// ACLRules returns the ACL key and channel rules (~pattern, &pattern) that
// give a user the locks whose keys begin with prefix and nothing else: the
// lock keys, read leases and permit leases (the key, or the key in braces),
// and every companion key and channel, named after the whole key in braces
// or, for a key with a hash tag, as it is. A channel is a key pattern too:
// the scripts that publish are passed it among their keys, which routes them
// to its slot on a Cluster, and Redis checks every key of a script against
// the user's key patterns. The prefix is escaped for Redis's glob matching,
// so that "*", "?", "[", "]" and "\" in it match only themselves. An empty
// prefix gives every key and channel.
func ACLRules(prefix string) []string {
	if prefix == "" {
		return []string{"~*", "&*"}
	}
	p := GlobEscape(prefix)
	rules := []string{"~" + p + "*", "~{" + p + "*"}
	var channels []string
	for _, cp := range append(append([]string(nil), CompanionPrefixes...), latchChannelPrefix) {
		forms := []string{cp + "{" + p + "*", cp + p + "*"}
		for _, f := range forms {
			rules = append(rules, "~"+f)
			if channelPrefixes[cp] {
				channels = append(channels, "&"+f)
			}
		}
	}
	return append(rules, channels...)
}

// GlobEscape escapes the characters Redis's glob matching reads
// (stringmatchlen), so that the pattern GlobEscape(s) + "*" matches the keys
// (channels, SCAN's MATCH) that begin with s and no others. It goes byte by
// byte: key names need not be UTF-8, and a rune loop would turn each invalid
// byte into U+FFFD, matching nothing.
func GlobEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
