// Command recharge runs the recharge service: POST /orders/:id/recharge on
// HTTP and Orders.Recharge on gRPC, each order under the lock order:<id>.
//
//	go run ./examples/recharge/cmd/recharge -redis redis://127.0.0.1:6379 -seed 100
//	curl -X POST -H 'Idempotency-Key: k1' localhost:8080/orders/1/recharge
//
// The database is SQLite (-sqlite file, default recharge.db) or PostgreSQL
// (-postgres DSN); the schema is created on start. -unsafe runs without the
// lock and without the write's token and status checks, to see a double
// credit.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, errorLine(err))
		os.Exit(1)
	}
}

// errorLine is the message printed for err: prefixed with the command's
// name, unless it starts with it already, as the recharge package's errors
// do ("recharge: create schema: ...").
func errorLine(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "recharge: ") {
		return msg
	}
	return "recharge: " + msg
}

func run() error {
	var (
		httpAddr = flag.String("http", "127.0.0.1:8080", "HTTP listen address")
		grpcAddr = flag.String("grpc", "127.0.0.1:9090", "gRPC listen address")
		redisURL = flag.String("redis", envOr("REDIS_URL", "redis://127.0.0.1:6379"), "Redis URL ($REDIS_URL when set)")
		sqlite   = flag.String("sqlite", "recharge.db", "SQLite database file")
		pgDSN    = flag.String("postgres", "", "PostgreSQL DSN; replaces -sqlite")
		seed     = flag.Int("seed", 0, "create this many unpaid orders (over 10 accounts) when the database has none")
		unsafe   = flag.Bool("unsafe", false, "run WITHOUT the lock and the write's token and status checks: duplicate requests credit an order more than once")
		wait     = flag.Duration("wait", recharge.DefaultWait, "how long a request waits for its order's lock (0: a single attempt, 409 at once while it is held)")
		work     = flag.Duration("work", 10*time.Millisecond, "simulated payment processing time per credit")
	)
	flag.Parse()
	switch {
	case *seed < 0:
		return fmt.Errorf("-seed %d: a count of orders cannot be negative", *seed)
	case *work < 0:
		return fmt.Errorf("-work %s: a processing time cannot be negative", *work)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.Default()

	var (
		store *recharge.Store
		err   error
	)
	if *pgDSN != "" {
		store, err = recharge.OpenPostgres(ctx, *pgDSN)
	} else {
		store, err = recharge.OpenSQLite(ctx, *sqlite)
	}
	if err != nil {
		return err
	}
	defer store.Close()
	if *seed > 0 {
		// Only an empty database is seeded: run again on the same file, the
		// orders it has (paid ones included) are kept as they are.
		var n int64
		if err := store.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM orders`).Scan(&n); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		if n > 0 {
			log.Info("the database already has orders: -seed left it as it is", "orders", n)
		} else if err := store.Seed(ctx, 10, *seed, func(i int) int64 { return int64(1000 + 10*i) }); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}

	cfg := recharge.Config{
		Service: &recharge.Service{Store: store, Unsafe: *unsafe, Work: recharge.RandomWork(*work/2, *work*3/2)},
		Wait:    *wait,
		// A zero wait is a single attempt, not the default wait.
		NoWait: *wait == 0,
		Logger: log,
	}
	opt, err := rueidis.ParseURL(*redisURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// The parser's message quotes the URL, password included.
			return errors.New("-redis: the URL does not parse (percent-encode : @ / ? # % in a user name or password)")
		}
		return fmt.Errorf("-redis: %w", err)
	}
	opt.DisableCache = true
	rc, err := rueidis.NewClient(opt)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	defer rc.Close()
	if cfg.Idempotency, err = idempotency.NewStore(rc); err != nil {
		return err
	}
	defer cfg.Idempotency.Close()
	if *unsafe {
		log.Warn("running WITHOUT the order lock and the write's checks (-unsafe): concurrent duplicates credit an order more than once")
	} else {
		locks, err := scriptlock.New(rc, scriptlock.WithLogger(log))
		if err != nil {
			return err
		}
		defer locks.Close()
		cfg.Locks = locks
	}
	srv, err := recharge.NewServer(cfg)
	if err != nil {
		return err
	}

	hl, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return err
	}
	gl, err := net.Listen("tcp", *grpcAddr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.HTTPHandler(), ReadHeaderTimeout: 5 * time.Second}
	gs, err := srv.GRPCServer()
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(hl) }()
	go func() { errc <- gs.Serve(gl) }()
	log.Info("recharge service listening", "http", hl.Addr().String(), "grpc", gl.Addr().String(), "unsafe", *unsafe)

	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	gs.GracefulStop()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
