package grpclock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/redis/rueidis"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/exampleredis"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// Calls of one method run under a lock named after a request field, with
// Idempotency-Key replay in front. The service here is gRPC's health
// service, locked on the service name it is asked about; the example runs
// against a redis-server the package's tests start.
func Example() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: exampleredis.Addrs()})
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	locks, err := scriptlock.New(rc)
	if err != nil {
		log.Fatal(err)
	}
	defer locks.Close()
	store, err := idempotency.NewStore(rc)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	const check = "/grpc.health.v1.Health/Check"
	idemOpts := []grpclock.IdempotencyOption{grpclock.WithIdempotentMethods(check)}
	lockOpts := []grpclock.Option{
		grpclock.WithKeyPrefix("health:"),
		grpclock.WithMethod(check, grpclock.Field("service")), // or Metadata("x-key"), Func(...)
		grpclock.WithWait(2 * time.Second),
	}
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(
			grpclock.IdempotencyUnaryServerInterceptor(store, idemOpts...),
			grpclock.UnaryServerInterceptor(grpclock.Mutexes(locks), lockOpts...)),
		grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(grpclock.Mutexes(locks), lockOpts...)),
	)
	hs := health.NewServer()
	hs.SetServingStatus("orders", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	// Fail startup when a configured method or field does not exist.
	if err := errors.Join(grpclock.Validate(srv, lockOpts...), grpclock.ValidateIdempotency(srv, idemOpts...)); err != nil {
		log.Fatal(err)
	}
	misspelt := grpclock.Validate(srv, grpclock.WithMethod("/grpc.health.v1.Health/Chek", grpclock.Field("service")))
	fmt.Println("misspelt method refused:", errors.Is(misspelt, grpclock.ErrConfig))

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	// Client side: one idempotency key per logical call, kept by the retries
	// of interceptors chained after it.
	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(grpclock.IdempotencyUnaryClientInterceptor(grpclock.WithIdempotentMethods(check))))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("orders:", resp.GetStatus())
	// Output:
	// misspelt method refused: true
	// orders: SERVING
}
