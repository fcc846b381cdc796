// Package middleware holds what the Echo middleware (package echolock) and the
// gRPC interceptors (package grpclock) share: turning untrusted request values
// into Redis keys, running a request under a lock, and the Idempotency-Key
// store. It imports neither Echo nor gRPC, so a service using one of them does
// not compile the other.
//
// # Request keys
//
// A key taken from a request (path parameter, header, message field, ...) is
// untrusted. Key validates it (non-empty, at most MaxKeyLen bytes, valid UTF-8,
// no control characters) and escapes it with EscapeKey before appending it to a
// fixed prefix. The escaping is percent-encoding of '%', '{', '}', ':', '*',
// '?', '[', ']' and '\', so:
//
//   - a key cannot contain a Redis Cluster hash tag, so clients cannot choose
//     the hash slot their lock lands in;
//   - a key contains no ':', so it cannot reach into another namespace that
//     shares the prefix ("orders:" + "idem:x" is not "orders:idem:x");
//   - a key contains no glob characters, so SCAN MATCH prefix* stays exact;
//   - the mapping is injective: UnescapeKey recovers the input, so two
//     distinct request values never share a Redis key.
//
// # Idempotency-Key
//
// IdempotencyStore keeps one record per (scope, key) in Redis, changed only by
// the idempotency_*.lua scripts: Reserve claims the key atomically together
// with the request's fingerprint (the first of any number of concurrent
// duplicates wins), the claim is renewed while the request runs (so a crashed
// server blocks the key for at most the claim TTL), and the request ends with
// Complete (the encoded StoredResponse is kept for the TTL, 24 h by default) or
// Release (the key can be used again). Every operation is one script call.
package middleware
