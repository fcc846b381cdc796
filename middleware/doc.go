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
package middleware
