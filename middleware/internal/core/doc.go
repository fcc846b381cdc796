// Package core holds what the Echo middleware (package echolock) and the gRPC
// interceptors (package grpclock) share: turning untrusted request values into
// Redis keys and running a request under a lock. It imports neither Echo nor
// gRPC, so a service using one of them does not compile the other.
//
// A key taken from a request (path parameter, header, message field, ...) is
// untrusted. Key validates it (non-empty, at most MaxKeyLen bytes, valid UTF-8,
// no control or invisible format characters) and escapes it with EscapeKey
// before appending it to a fixed prefix. The escaping is percent-encoding of
// '%', '{', '}', ':', '*', '?', '[', ']' and '\', so:
//
//   - a key cannot contain a Redis Cluster hash tag, so clients cannot choose
//     the hash slot their lock lands in;
//   - a key contains no ':', so it cannot reach into another namespace that
//     shares the prefix ("orders:" + "idem:x" is not "orders:idem:x");
//   - a key contains no glob characters, so SCAN MATCH prefix* stays exact;
//   - the mapping is injective but for integers and UUIDs: UnescapeKey
//     recovers the input, so two distinct request values never share a
//     Redis key, except spellings of one integer ("042", "+42", " 42", "0x2A", "42") or
//     UUID (upper or lower case, with or without dashes), which a handler
//     parsing the id reads as one, and which so share one (CanonicalKey);
//     a UUID of decimal digits shares the key of the integer they spell.
package core
