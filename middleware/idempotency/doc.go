// Package idempotency is the Redis store behind the Idempotency-Key
// middleware of packages echolock (HTTP) and grpclock (gRPC). It imports
// neither Echo nor gRPC. Create one Store per process and hand it to the
// middleware:
//
//	store, err := idempotency.NewStore(rc) // rc: a rueidis.Client; WithTTL, WithTimeout, ...
//	defer store.Close()
//	e.POST("/orders/:id/recharge", h, echolock.Idempotency(store), echolock.Lock(locks))
//	grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(...))
//
// Store keeps one record per (scope, key) in Redis, changed only by the
// idempotency_*.lua scripts: Reserve claims the key atomically together with
// the request's fingerprint (the first of any number of concurrent duplicates
// wins), the claim is renewed while the request runs (so a crashed server
// blocks the key for at most the claim TTL), and the request ends with
// Complete (the encoded StoredResponse is kept for the TTL, 24 h by default)
// or Release (the key can be used again). Every operation is one script call.
//
// # Scopes
//
// A scope is the namespace of one caller's keys: a record is replayed only
// within its scope. The middleware derives it from the request's credentials
// by default (CredentialScope); requests without credentials share
// AnonymousScope. Each scope may keep WithMaxBytesPerScope bytes of records
// (64 MiB by default); a new key beyond that is refused with OverBudget. The
// escaped scope is the hash tag of its records, so a scope's records and its
// accounting live in one Redis Cluster slot. The budget bounds a caller as far
// as its scope is its identity (see WithMaxBytesPerScope).
//
// A running request's claim ends its contexts from Claim.Context with
// ErrClaimLost when Redis says the claim is gone or no renewal is confirmed
// before the claim could have expired; the middleware runs the handler under
// such a context. The context also carries the request's RequestID, the same
// for every retry of the request: a handler that records it with its durable
// effects can tell, after its process died before the response was stored and
// the claim expired, that a retry is the request that made them.
//
// # Failures
//
// Every call is bounded by WithTimeout (3 s by default); a call that cannot
// be sent (no connection to Redis can be opened) fails at once, the
// background retries below taking over a Complete or a Release. A
// reservation whose reply does not come back in time may still be applied by
// Redis later, so it is released in the background until Redis answers; a
// release that arrives before its reservation leaves a short mark (for the
// claim TTL) that makes the late reservation claim nothing, also when another
// request held the key meanwhile and has released it since. A Complete that fails keeps the claim and is
// retried in the background until Redis answers (or its claim could have
// expired, when no retry can store it any more), so a request that ran is
// never run again because its response could not be stored at first:
// duplicates are answered "in flight" until the response is stored, then get
// it replayed. Close stops these background calls. At most
// WithMaxBackgroundRetries of them run at once; a call beyond that leaves its
// record to the claim TTL and reports ErrRetryDropped.
package idempotency
