// Package scenario runs the recharge example's duplicate-request scenario: a
// fresh database of unpaid orders, a recharge service on loopback ports, and
// bursts of concurrent duplicate recharge requests per order over HTTP or
// gRPC. It reports what was credited, so a run can be checked for
// exactly-once crediting. cmd/demo and the end-to-end tests use it.
package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// Transport selects the front end the requests go to.
type Transport string

const (
	HTTP Transport = "HTTP"
	GRPC Transport = "gRPC"
	// Both alternates each order's duplicates between HTTP and gRPC, on one
	// service and database: the two front ends share the order locks.
	Both Transport = "HTTP+gRPC"
)

// Config describes one run.
type Config struct {
	// Transport the requests use. Required.
	Transport Transport
	// Locks is the lock client; nil with Unsafe.
	Locks *scriptlock.Client
	// LockOptions apply to every order lock.
	LockOptions []scriptlock.LockOption
	// Idempotency, when set, enables Idempotency-Key support on the server
	// (the scenario's requests carry no key).
	Idempotency *idempotency.Store
	// Unsafe runs the service without the lock and the write's checks
	// (Service.Unsafe).
	Unsafe bool
	// Dir holds the SQLite database (a new file per run). Required unless
	// OpenStore is set.
	Dir string
	// OpenStore, when set, opens the run's database instead of a new SQLite
	// file in Dir: it must return an empty store (for example a new
	// PostgreSQL database), which Run seeds and closes.
	OpenStore func(ctx context.Context) (*recharge.Store, error)
	// Orders is the number of unpaid orders (default 100) and Duplicates the
	// number of concurrent recharge requests sent for each (default 10).
	Orders, Duplicates int
	// Parallel is how many orders' bursts run at once (default 25).
	Parallel int
	// Wait is the server's lock wait (default recharge.DefaultWait).
	Wait time.Duration
	// Work is the service's processing step (default 5–15 ms).
	Work recharge.WorkFunc
	// MaxAttempts bounds the attempts of one request: 409 / Aborted answers
	// are retried after a short pause (default 20).
	MaxAttempts int
	// Progress, when set, gets a line per second while the run lasts.
	Progress io.Writer
	// Label names the run in progress lines.
	Label string
	// OnRequest, when set, is called after each request with its order and
	// final answer (tests use it to stop Redis mid-run).
	OnRequest func(order int64, a Answer)
	// Logger for the server. Default: discards.
	Logger *slog.Logger
}

// Answer is the final answer to one logical request (after retries).
type Answer struct {
	// Code is the HTTP status, or the gRPC code as a string ("OK",
	// "Unavailable", ...); "error" for a transport failure.
	Code     string
	Outcome  string // "credited" or "already processed" on success
	Attempts int
	Latency  time.Duration
	Err      string
}

// Report is the result of one run.
type Report struct {
	Label      string
	Transport  Transport
	Unsafe     bool
	Orders     int
	Requests   int
	Attempts   int   // including retries
	Retries    int   // retried 409 / Aborted answers
	Credits    int64 // "credited" outcomes answered
	Already    int64 // "already processed" outcomes answered
	Stale      int64 // writes refused by the fencing guard
	PaidOrders int64
	PaidAmount int64 // sum of the paid orders' amounts
	// Expected is the sum of all order amounts: the balance when every
	// order is credited exactly once. Actual is the sum of the balances.
	Expected, Actual int64
	// CreditsPerOrder counts "credited" answers per order id.
	CreditsPerOrder map[int64]int
	Codes           map[string]int // final answers by code
	Lock            recharge.LockStats
	P50, P99        time.Duration
	Elapsed         time.Duration
}

// ExactlyOnce reports whether every order was credited exactly once: each
// order paid, one credit answered per order, and the balances adding up.
func (r *Report) ExactlyOnce() bool {
	if r.PaidOrders != int64(r.Orders) || r.Credits != int64(r.Orders) || r.Actual != r.Expected {
		return false
	}
	for _, n := range r.CreditsPerOrder {
		if n != 1 {
			return false
		}
	}
	return len(r.CreditsPerOrder) == r.Orders
}

// Amount is order i's amount, in cents.
func Amount(i int) int64 { return int64(1000 + 10*i) }

const accounts = 10

func (c *Config) defaults() error {
	if c.Transport != HTTP && c.Transport != GRPC && c.Transport != Both {
		return fmt.Errorf("scenario: unknown transport %q", c.Transport)
	}
	if c.Locks == nil && !c.Unsafe {
		return errors.New("scenario: Locks required unless Unsafe")
	}
	if c.Dir == "" && c.OpenStore == nil {
		return errors.New("scenario: Dir or OpenStore required")
	}
	if c.Orders <= 0 {
		c.Orders = 100
	}
	if c.Duplicates <= 0 {
		c.Duplicates = 10
	}
	if c.Parallel <= 0 {
		c.Parallel = 25
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 20
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Label == "" {
		c.Label = string(c.Transport)
	}
	return nil
}

var runSeq atomic.Int64

// Run seeds a fresh database (cfg.OpenStore, else SQLite in cfg.Dir), starts the service on a
// loopback port, sends cfg.Duplicates concurrent recharge requests for each
// of cfg.Orders orders, stops the service and reports.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	open := cfg.OpenStore
	if open == nil {
		open = func(ctx context.Context) (*recharge.Store, error) {
			return recharge.OpenSQLite(ctx, filepath.Join(cfg.Dir, fmt.Sprintf("recharge-%d.db", runSeq.Add(1))))
		}
	}
	store, err := open(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	if err := store.Seed(ctx, accounts, cfg.Orders, Amount); err != nil {
		return nil, err
	}
	svc := &recharge.Service{Store: store, Work: cfg.Work, Unsafe: cfg.Unsafe}
	srv, err := recharge.NewServer(recharge.Config{
		Service: svc, Locks: cfg.Locks, LockOptions: cfg.LockOptions, Wait: cfg.Wait,
		Idempotency: cfg.Idempotency, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	var callers []caller
	for _, tr := range []Transport{HTTP, GRPC} {
		if cfg.Transport != tr && cfg.Transport != Both {
			continue
		}
		c, stop, err := serve(srv, tr)
		if err != nil {
			return nil, err
		}
		defer stop()
		callers = append(callers, c)
	}

	rep := &Report{Label: cfg.Label, Transport: cfg.Transport, Unsafe: cfg.Unsafe, Orders: cfg.Orders,
		CreditsPerOrder: map[int64]int{}, Codes: map[string]int{}}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		done      atomic.Int64
	)
	record := func(id int64, a Answer) {
		mu.Lock()
		rep.Requests++
		rep.Attempts += a.Attempts
		rep.Retries += a.Attempts - 1
		rep.Codes[a.Code]++
		switch a.Outcome {
		case "credited":
			rep.Credits++
			rep.CreditsPerOrder[id]++
		case "already processed":
			rep.Already++
		}
		latencies = append(latencies, a.Latency)
		mu.Unlock()
		done.Add(1)
		if cfg.OnRequest != nil {
			cfg.OnRequest(id, a)
		}
	}

	start := time.Now()
	stopProgress := progress(cfg, &done, start)
	sem := make(chan struct{}, cfg.Parallel)
	var wg sync.WaitGroup
	for id := int64(1); id <= int64(cfg.Orders); id++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			// The duplicates of one order leave together, as a client
			// retrying impatiently (or several clients) would send them.
			gate := make(chan struct{})
			var burst sync.WaitGroup
			for j := range cfg.Duplicates {
				send := callers[j%len(callers)]
				burst.Go(func() {
					<-gate
					record(id, call(ctx, send, id, cfg.MaxAttempts))
				})
			}
			close(gate)
			burst.Wait()
		}()
	}
	wg.Wait()
	rep.Elapsed = time.Since(start)
	stopProgress()
	if err := ctx.Err(); err != nil {
		return rep, err
	}

	slices.Sort(latencies)
	rep.P50, rep.P99 = percentile(latencies, 50), percentile(latencies, 99)
	rep.Stale = svc.Counts().Stale
	rep.Lock = srv.LockStats()
	for i := 1; i <= cfg.Orders; i++ {
		rep.Expected += Amount(i)
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	rep.Actual, rep.PaidAmount, rep.PaidOrders, err = store.Totals(tctx)
	return rep, err
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p+99)/100 - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func progress(cfg Config, done *atomic.Int64, start time.Time) func() {
	if cfg.Progress == nil {
		return func() {}
	}
	total := cfg.Orders * cfg.Duplicates
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fmt.Fprintf(cfg.Progress, "  %s: %d/%d requests answered (%.0fs)\n",
					cfg.Label, done.Load(), total, time.Since(start).Seconds())
			}
		}
	})
	return func() { close(stop); wg.Wait() }
}

// caller sends one recharge attempt.
type caller func(ctx context.Context, id int64) (code, outcome string, retry bool, err error)

// call sends one logical request, retrying 409 / Aborted answers.
func call(ctx context.Context, send caller, id int64, maxAttempts int) Answer {
	start := time.Now()
	var a Answer
	for a.Attempts < maxAttempts {
		a.Attempts++
		code, outcome, retry, err := send(ctx, id)
		a.Code, a.Outcome = code, outcome
		a.Err = ""
		if err != nil {
			a.Err = err.Error()
		}
		if !retry || ctx.Err() != nil {
			break
		}
		time.Sleep(20*time.Millisecond + rand.N(20*time.Millisecond))
	}
	a.Latency = time.Since(start)
	return a
}

// serve starts srv's front end for transport on a loopback port.
func serve(srv *recharge.Server, transport Transport) (caller, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	switch transport {
	case HTTP:
		hs := &http.Server{Handler: srv.HTTPHandler(), ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(ln)
		hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			MaxIdleConnsPerHost: 512, IdleConnTimeout: 30 * time.Second,
		}}
		base := "http://" + ln.Addr().String()
		stop := func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(ctx)
			hc.CloseIdleConnections()
		}
		return httpCaller(hc, base), stop, nil
	default:
		gs, err := srv.GRPCServer()
		if err != nil {
			ln.Close()
			return nil, nil, err
		}
		go gs.Serve(ln)
		cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			gs.Stop()
			return nil, nil, err
		}
		stop := func() {
			cc.Close()
			gs.GracefulStop()
		}
		return grpcCaller(rechargepb.NewOrdersClient(cc)), stop, nil
	}
}

func httpCaller(hc *http.Client, base string) caller {
	return func(ctx context.Context, id int64) (string, string, bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/orders/"+strconv.FormatInt(id, 10)+"/recharge", nil)
		if err != nil {
			return "error", "", false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "error", "", false, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		code := strconv.Itoa(resp.StatusCode)
		switch resp.StatusCode {
		case http.StatusOK:
			return code, outcomeOf(body), false, nil
		case http.StatusConflict:
			return code, "", true, nil
		}
		return code, "", false, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(body))
	}
}

// outcomeOf reads "outcome" from a RechargeJSON body without a full decode.
func outcomeOf(body []byte) string {
	switch {
	case bytes.Contains(body, []byte(`"outcome":"credited"`)):
		return "credited"
	case bytes.Contains(body, []byte(`"outcome":"already processed"`)):
		return "already processed"
	}
	return "?"
}

func grpcCaller(c rechargepb.OrdersClient) caller {
	return func(ctx context.Context, id int64) (string, string, bool, error) {
		resp, err := c.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: id})
		if err != nil {
			st := status.Convert(err)
			return st.Code().String(), "", st.Code() == codes.Aborted, err
		}
		switch resp.GetOutcome() {
		case rechargepb.RechargeResponse_CREDITED:
			return "OK", "credited", false, nil
		case rechargepb.RechargeResponse_ALREADY_PROCESSED:
			return "OK", "already processed", false, nil
		}
		return "OK", "?", false, nil
	}
}
