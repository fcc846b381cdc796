// Package scriptlock provides distributed locks on Redis with Redisson's
// semantics and key layout: a reentrant Mutex with watchdog lease renewal,
// FairMutex, MultiLock, RedLock, RWMutex, Semaphore, PermitSemaphore,
// CountDownLatch and fencing tokens.
//
// Every Redis-side step is a Lua script under scripts/, called through the
// typed callers in generated/ (see cmd/scriptgen).
package scriptlock
