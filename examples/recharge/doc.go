// Package recharge is the order-recharge flow run under scriptlock: credit an
// account exactly once for an order, however many duplicate requests arrive
// at once and whether they come over HTTP (Echo) or gRPC.
//
// Both front ends lock order:<id> through the scriptlock middleware (echolock,
// grpclock) and then run Service.Recharge: claim the order with the lock's
// fencing token and read it; if it is paid answer "already processed"; if it
// is not unpaid either, refuse it (ErrNotPayable); else work, then in one
// transaction mark it paid, where it still carries the token and is still
// unpaid, credit the account and record the payment. A holder whose lease ran
// out while it worked finds a newer token on the order and writes nothing
// (ErrStaleFence). The payment records the idempotency.RequestID of the
// request that paid, so a retry of that request whose answer was lost (its
// process died before the answer was stored) gets that answer again.
//
// The database is SQLite (pure Go, embedded) or PostgreSQL (pgx); the schema
// is created on start. Idempotency-Key is supported on both front ends when
// Config.Idempotency is set. Service.Unsafe drops the lock, the token and the
// write's status check, a plain check-then-act, to show a double credit. In
// the locked service the lock keeps duplicates from repeating the work, and
// the write's conditions (token, status) keep an order to one credit.
//
// cmd/recharge runs the service; cmd/demo (make demo) runs the duplicate-request
// scenario against it, locked and -unsafe.
//
// The gRPC code in rechargepb is generated and committed; after changing
// rechargepb/recharge.proto, regenerate it from that directory with
//
//	protoc --go_out=. --go_opt=paths=source_relative \
//	  --go-grpc_out=. --go-grpc_opt=paths=source_relative recharge.proto
//
// (protoc-gen-go and protoc-gen-go-grpc on PATH).
package recharge
