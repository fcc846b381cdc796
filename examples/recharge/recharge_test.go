package recharge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

const amount = 1000 // every test order's amount

// env is one service with both front ends on loopback ports.
type env struct {
	store *recharge.Store
	svc   *recharge.Service
	url   string
	grpc  rechargepb.OrdersClient
	locks *scriptlock.Client // the order locks, when newEnv made them
}

func newEnv(t *testing.T, b backend, orders int, work recharge.WorkFunc, lockOpts []scriptlock.LockOption, idem bool) *env {
	t.Helper()
	ctx := t.Context()
	store := b.open(t)
	if err := store.Seed(ctx, 2, orders, func(int) int64 { return amount }); err != nil {
		t.Fatal(err)
	}
	node := redistest.Server(t)
	rc := node.Client(t)
	prefix := redistest.Prefix(t)
	locks, err := scriptlock.New(rc, scriptlock.WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locks.Close() })
	svc := &recharge.Service{Store: store, Work: work}
	cfg := recharge.Config{Service: svc, Locks: locks, LockOptions: lockOpts}
	if idem {
		if cfg.Idempotency, err = idempotency.NewStore(rc, idempotency.WithPrefix(prefix+"idem:")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cfg.Idempotency.Close)
	}
	srv, err := recharge.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url, gc := serve(t, srv)
	return &env{store: store, svc: svc, url: url, grpc: gc, locks: locks}
}

// serve runs srv's HTTP and gRPC front ends on loopback ports until the test
// ends.
func serve(t *testing.T, srv *recharge.Server) (string, rechargepb.OrdersClient) {
	t.Helper()
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs, err := srv.GRPCServer()
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return hs.URL, rechargepb.NewOrdersClient(cc)
}

type httpAnswer struct {
	code     int
	body     string
	replayed bool
	out      recharge.RechargeJSON
	// retryAfter is the Retry-After header.
	retryAfter string
}

func (e *env) post(t *testing.T, id, idemKey string) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/orders/"+id+"/recharge", nil)
	if err != nil {
		t.Fatal(err)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return httpAnswer{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := httpAnswer{code: resp.StatusCode, body: string(b), replayed: resp.Header.Get("Idempotent-Replayed") == "true",
		retryAfter: resp.Header.Get("Retry-After")}
	if a.code == http.StatusOK {
		if err := json.Unmarshal(b, &a.out); err != nil {
			t.Errorf("body %q: %v", b, err)
		}
	}
	return a
}

func (e *env) balance(t *testing.T) int64 {
	t.Helper()
	b, _, _, err := e.store.Totals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A holder whose lease runs out while it works is refused by the fencing
// guard, whichever way its write interleaves with the next holder's: after
// the next holder has paid, or after the next holder has claimed the order
// but before it pays. The order is credited once, by the newer holder.
func TestFencingRejectsStaleHolder(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testFencingRejectsStaleHolder(t, b)
		})
	}
}

func testFencingRejectsStaleHolder(t *testing.T, b backend) {
	const lease = 300 * time.Millisecond
	for _, tc := range []struct {
		name string
		// staleWritesBeforeNewerPays: the stale holder writes while the
		// newer holder is between its claim and its payment.
		staleWritesBeforeNewerPays bool
	}{
		{"stale write after the newer holder paid", false},
		{"stale write between the newer holder's claim and payment", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var (
				mu          sync.Mutex
				calls       int
				staleInWork = make(chan struct{})
				staleGo     = make(chan struct{})
				newerInWork = make(chan struct{})
				newerGo     = make(chan struct{})
			)
			// The first call works (ignoring its context, as a paused process
			// would) until the test lets it go; the second call's work is
			// held only in the second case.
			work := func(ctx context.Context, o recharge.Order) error {
				mu.Lock()
				calls++
				n := calls
				mu.Unlock()
				switch n {
				case 1:
					close(staleInWork)
					<-staleGo
				case 2:
					close(newerInWork)
					<-newerGo
				}
				return nil
			}
			e := newEnv(t, b, 1, work, []scriptlock.LockOption{scriptlock.WithLease(lease)}, false)
			// The newer holder is another instance of the service, on the
			// same database and locks, whose lock the watchdog keeps: only
			// the stale holder's lease is short, so the newer one cannot
			// lose its own lock while the test holds its work, however
			// loaded the machine.
			newerSrv, err := recharge.NewServer(recharge.Config{Service: e.svc, Locks: e.locks})
			if err != nil {
				t.Fatal(err)
			}
			_, newerGRPC := serve(t, newerSrv)

			staleDone := make(chan httpAnswer, 1)
			// A first request whose 300 ms lease ran out before it reached
			// its work (a loaded machine) answers 503, lock lost, having
			// paid nothing: it is sent again, as its client would. Any
			// other answer before its work fails the test instead of
			// hanging it.
		stale:
			for attempt := 1; ; attempt++ {
				go func() { staleDone <- e.post(t, "1", "") }()
				select {
				case <-staleInWork:
					break stale
				case a := <-staleDone:
					if a.code == http.StatusServiceUnavailable && attempt < 10 {
						t.Logf("first request, attempt %d: %d %s before its work began; again", attempt, a.code, strings.TrimSpace(a.body))
						continue
					}
					t.Fatalf("first request answered %d %s before its work began; want it to hold the lock", a.code, strings.TrimSpace(a.body))
				case <-time.After(time.Minute):
					t.Fatal("first request's work did not begin within a minute")
				}
			}
			staleFence, err := e.store.Order(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}

			// The newer holder comes over gRPC; it waits for the lease to run out.
			type grpcAnswer struct {
				resp *rechargepb.RechargeResponse
				err  error
			}
			newerDone := make(chan grpcAnswer, 1)
			go func() {
				resp, err := newerGRPC.Recharge(context.Background(), &rechargepb.RechargeRequest{OrderId: 1})
				newerDone <- grpcAnswer{resp, err}
			}()

			var newer grpcAnswer
			var stale httpAnswer
			if tc.staleWritesBeforeNewerPays {
				select { // newer holder has claimed the order
				case <-newerInWork:
				case n := <-newerDone:
					t.Fatalf("newer holder answered %v, %v before its work began", n.resp, n.err)
				case <-time.After(time.Minute):
					t.Fatal("newer holder's work did not begin within a minute")
				}
				close(staleGo)
				stale = <-staleDone
				close(newerGo)
				newer = <-newerDone
			} else {
				close(newerGo)
				newer = <-newerDone
				close(staleGo)
				stale = <-staleDone
			}

			if newer.err != nil || newer.resp.GetOutcome() != rechargepb.RechargeResponse_CREDITED {
				t.Fatalf("newer holder: %v, %v; want CREDITED", newer.resp, newer.err)
			}
			if newer.resp.GetFence() <= staleFence.Fence {
				t.Fatalf("newer holder's token %d not above the stale holder's %d", newer.resp.GetFence(), staleFence.Fence)
			}
			// The stale holder's lock context was cancelled when its lease ran
			// out, but its write ran anyway (as a paused process's would): what
			// kept it out is the fence, counted by the service. The answer is
			// the handler's 409, or echolock's 503 for a lost lock.
			if stale.code != http.StatusServiceUnavailable && stale.code != http.StatusConflict {
				t.Fatalf("stale holder answered %d %s; want 503 (lock lost) or 409 (stale)", stale.code, stale.body)
			}
			t.Logf("stale holder (token %d): %d %s; newer holder: token %d, %v",
				staleFence.Fence, stale.code, strings.TrimSpace(stale.body), newer.resp.GetFence(), newer.resp.GetOutcome())
			if c := e.svc.Counts(); c.Credited != 1 || c.Stale != 1 {
				t.Fatalf("service counts %+v; want 1 credited, 1 stale write refused", c)
			}
			if b := e.balance(t); b != amount {
				t.Fatalf("balance %d; want %d (credited once)", b, amount)
			}
			o, err := e.store.Order(t.Context(), 1)
			if err != nil || o.Status != recharge.StatusPaid || o.Fence != newer.resp.GetFence() {
				t.Fatalf("order %+v, %v; want paid with the newer token %d", o, err, newer.resp.GetFence())
			}
		})
	}
}

// The store's guards on their own: a claim with a token not above the
// recorded one, and a payment by a holder whose claim was overtaken, write
// nothing.
func TestStoreFencing(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testStoreFencing(t, b)
		})
	}
}

func testStoreFencing(t *testing.T, b backend) {
	ctx := t.Context()
	store := b.open(t)
	if err := store.Seed(ctx, 1, 1, func(int) int64 { return amount }); err != nil {
		t.Fatal(err)
	}
	old, err := store.Claim(ctx, 1, 5)
	if err != nil || old.Status != recharge.StatusUnpaid {
		t.Fatalf("claim 5: %+v %v", old, err)
	}
	if _, err := store.Claim(ctx, 1, 5); !errors.Is(err, recharge.ErrStaleFence) {
		t.Fatalf("second claim with the same token: %v; want ErrStaleFence", err)
	}
	if _, err := store.Claim(ctx, 2, 9); !errors.Is(err, recharge.ErrOrderNotFound) {
		t.Fatalf("claim of a missing order: %v; want ErrOrderNotFound", err)
	}
	newer, err := store.Claim(ctx, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Pay(ctx, old, 5, ""); !errors.Is(err, recharge.ErrStaleFence) {
		t.Fatalf("pay with the overtaken token: %v; want ErrStaleFence", err)
	}
	if b, _, paid, _ := store.Totals(ctx); b != 0 || paid != 0 {
		t.Fatalf("stale payment wrote: balance %d, %d paid", b, paid)
	}
	if err := store.Pay(ctx, newer, 7, ""); err != nil {
		t.Fatal(err)
	}
	if b, _, paid, _ := store.Totals(ctx); b != amount || paid != 1 {
		t.Fatalf("balance %d, %d paid; want %d, 1", b, paid, amount)
	}
}

// Idempotency-Key on both front ends: the first request runs, a completed
// duplicate gets the stored answer replayed, the key reused for another order
// is refused, and concurrent duplicates with one key credit once.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testIdempotencyKey(t, b)
		})
	}
}

func testIdempotencyKey(t *testing.T, b backend) {
	e := newEnv(t, b, 4, recharge.RandomWork(20*time.Millisecond, 30*time.Millisecond), nil, true)

	t.Run("HTTP", func(t *testing.T) {
		first := e.post(t, "1", "key-1")
		if first.code != http.StatusOK || first.out.Outcome != "credited" || first.replayed {
			t.Fatalf("first: %d %s replayed=%v", first.code, first.body, first.replayed)
		}
		again := e.post(t, "1", "key-1")
		if again.code != http.StatusOK || !again.replayed || again.body != first.body {
			t.Fatalf("duplicate: %d %q replayed=%v; want the first answer %q replayed", again.code, again.body, again.replayed, first.body)
		}
		if other := e.post(t, "2", "key-1"); other.code != http.StatusUnprocessableEntity {
			t.Fatalf("key reused for order 2: %d %s; want 422", other.code, other.body)
		}
		if fresh := e.post(t, "1", "key-2"); fresh.out.Outcome != "already processed" {
			t.Fatalf("new key for a paid order: %d %s; want already processed", fresh.code, fresh.body)
		}
	})

	t.Run("HTTP concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		answers := make([]httpAnswer, 8)
		for i := range answers {
			wg.Go(func() { answers[i] = e.post(t, "3", "key-3") })
		}
		wg.Wait()
		credited := 0
		for _, a := range answers {
			switch {
			case a.code == http.StatusOK && a.out.Outcome == "credited":
				credited++ // the run itself, or its replay
			case a.code == http.StatusConflict: // in flight: retry later
			default:
				t.Errorf("answer %d %s", a.code, a.body)
			}
		}
		if credited == 0 {
			t.Fatal("no request credited order 3")
		}
	})

	t.Run("gRPC", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(t.Context(), "idempotency-key", "g-1")
		var hdr metadata.MD
		first, err := e.grpc.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 4}, grpc.Header(&hdr))
		if err != nil || first.GetOutcome() != rechargepb.RechargeResponse_CREDITED {
			t.Fatalf("first: %v %v", first, err)
		}
		hdr = nil
		again, err := e.grpc.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 4}, grpc.Header(&hdr))
		if err != nil || again.GetOutcome() != rechargepb.RechargeResponse_CREDITED || again.GetFence() != first.GetFence() {
			t.Fatalf("duplicate: %v %v; want the first answer %v replayed", again, err, first)
		}
		if strings.Join(hdr.Get("idempotent-replayed"), "") != "true" {
			t.Fatalf("duplicate not marked replayed: header %v", hdr)
		}
		_, err = e.grpc.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 2})
		if status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("key reused for order 2: %v; want FailedPrecondition", err)
		}
	})

	if c := e.svc.Counts(); c.Credited != 3 {
		t.Fatalf("service counts %+v; want 3 credits (orders 1, 3, 4)", c)
	}
	if b := e.balance(t); b != 3*amount {
		t.Fatalf("balance %d; want %d", b, 3*amount)
	}
}

// Bad ids are refused before any lock is taken; unknown orders are 404 /
// NotFound.
func TestBadRequests(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testBadRequests(t, b)
		})
	}
}

func testBadRequests(t *testing.T, b backend) {
	e := newEnv(t, b, 1, nil, nil, false)
	for _, id := range []string{"abc", "0", "-3", "1%7B2%7D"} {
		// The answer says what is wrong with the id, as the gRPC front end's
		// does, and as the handler's own check does without the lock.
		if a := e.post(t, id, ""); a.code != http.StatusBadRequest || !strings.Contains(a.body, "order id must be a positive integer") {
			t.Errorf("id %q: %d %s; want 400, order id must be a positive integer", id, a.code, a.body)
		}
	}
	if a := e.post(t, "99", ""); a.code != http.StatusNotFound {
		t.Errorf("unknown order: %d %s; want 404", a.code, a.body)
	}
	if a := e.post(t, "001", ""); a.code != http.StatusOK || a.out.OrderID != 1 {
		t.Errorf("id 001: %d %s; want order 1", a.code, a.body)
	}
	_, err := e.grpc.Recharge(t.Context(), &rechargepb.RechargeRequest{OrderId: 0})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "order_id must be a positive integer") {
		t.Errorf("order_id 0: %v; want InvalidArgument, order_id must be a positive integer", err)
	}
	_, err = e.grpc.Recharge(t.Context(), &rechargepb.RechargeRequest{OrderId: 99})
	if status.Code(err) != codes.NotFound {
		t.Errorf("unknown order: %v; want NotFound", err)
	}
}
