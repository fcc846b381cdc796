// Package idempotency is the Redis store behind the Idempotency-Key
// middleware of packages echolock (HTTP) and grpclock (gRPC). It imports
// neither Echo nor gRPC.
//
// Store keeps one record per (scope, key) in Redis, changed only by the
// idempotency_*.lua scripts: Reserve claims the key atomically together with
// the request's fingerprint (the first of any number of concurrent duplicates
// wins), the claim is renewed while the request runs (so a crashed server
// blocks the key for at most the claim TTL), and the request ends with
// Complete (the encoded StoredResponse is kept for the TTL, 24 h by default)
// or Release (the key can be used again). Every operation is one script call.
package idempotency
