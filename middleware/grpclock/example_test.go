package grpclock_test

import (
	"errors"
	"log"
	"time"

	"github.com/redis/rueidis"
	"google.golang.org/grpc"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

func Example() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		return
	}
	locks, err := scriptlock.New(rc)
	if err != nil {
		return
	}
	store, err := idempotency.NewStore(rc)
	if err != nil {
		return
	}
	defer store.Close()
	idemOpts := []grpclock.IdempotencyOption{grpclock.WithIdempotentMethods("/shop.Accounts/Recharge")}
	lockOpts := []grpclock.Option{
		grpclock.WithKeyPrefix("recharge:"),
		grpclock.WithMethod("/shop.Accounts/Recharge", grpclock.Field("account.id")),
		grpclock.WithMethod("/shop.Accounts/Watch", grpclock.Metadata("x-account-id")),
		grpclock.WithWait(2 * time.Second),
	}
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(
			grpclock.IdempotencyUnaryServerInterceptor(store, idemOpts...),
			grpclock.UnaryServerInterceptor(grpclock.Mutexes(locks), lockOpts...)),
		grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(grpclock.Mutexes(locks), lockOpts...)),
	)
	// accountspb.RegisterAccountsServer(srv, accounts)
	// Fail startup when a configured method or field does not exist.
	if err := errors.Join(grpclock.Validate(srv, lockOpts...), grpclock.ValidateIdempotency(srv, idemOpts...)); err != nil {
		log.Fatal(err)
	}

	// Client side: one idempotency key per logical call, reused by the retries
	// of interceptors chained after it.
	conn, err := grpc.NewClient("localhost:50051",
		grpc.WithChainUnaryInterceptor(grpclock.IdempotencyUnaryClientInterceptor(
			grpclock.WithIdempotentMethods("/shop.Accounts/Recharge"))))
	if err == nil {
		_ = conn.Close()
	}
}
