package recharge_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// A process that pays an order and dies before its Idempotency-Key record is
// completed leaves the key claimed until the claim TTL runs out; the client's
// retry with the same key then runs the request again. It must get the answer
// the first run gave (credited, the amount, the paying run's fence), over
// HTTP and gRPC, not "already processed" with another fence; the order stays
// credited once, and a request with another key still gets "already
// processed".
func TestRetryAfterCrashGetsFirstAnswer(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testRetryAfterCrash(t, b)
		})
	}
}

func testRetryAfterCrash(t *testing.T, b backend) {
	const claimTTL = 600 * time.Millisecond
	ctx := t.Context()
	store := b.open(t)
	if err := store.Seed(ctx, 2, 2, func(int) int64 { return amount }); err != nil {
		t.Fatal(err)
	}
	node := redistest.Server(t)
	prefix := redistest.Prefix(t)

	// process is one instance of the service on the shared database and
	// Redis. Its idempotency store has a Redis client of its own: closing it
	// in work cuts the process off from its records, as a crash would, so
	// the records of the request running are never completed, released or
	// renewed.
	process := func(work func(idem rueidis.Client) recharge.WorkFunc) *env {
		rc := node.Client(t)
		locks, err := scriptlock.New(rc, scriptlock.WithKeyPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { locks.Close() })
		idemRC := node.Client(t)
		idem, err := idempotency.NewStore(idemRC, idempotency.WithPrefix(prefix+"idem:"), idempotency.WithClaimTTL(claimTTL))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(idem.Close)
		svc := &recharge.Service{Store: store, Work: func(context.Context, recharge.Order) error { return nil }}
		if work != nil {
			svc.Work = work(idemRC)
		}
		srv, err := recharge.NewServer(recharge.Config{Service: svc, Locks: locks, Idempotency: idem})
		if err != nil {
			t.Fatal(err)
		}
		url, gc := serve(t, srv)
		return &env{store: store, svc: svc, url: url, grpc: gc}
	}
	crash := func(idem rueidis.Client) recharge.WorkFunc {
		return func(context.Context, recharge.Order) error {
			idem.Close()
			return nil
		}
	}
	restarted := process(nil)

	// retry repeats a call until the crashed process's claim has expired
	// (in flight until then).
	retry := func(t *testing.T, inFlight func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * claimTTL)
		for inFlight() {
			if time.Now().After(deadline) {
				t.Fatalf("key still in flight %s after the crash", 10*claimTTL)
			}
			time.Sleep(claimTTL / 10)
		}
	}

	t.Run("HTTP", func(t *testing.T) {
		crashing := process(crash)
		first := crashing.post(t, "1", "crash-1")
		if first.code != http.StatusOK || first.out.Outcome != "credited" || first.out.Amount != amount {
			t.Fatalf("first: %d %s; want credited", first.code, first.body)
		}
		var again httpAnswer
		retry(t, func() bool { again = restarted.post(t, "1", "crash-1"); return again.code == http.StatusConflict })
		if again.code != first.code || again.body != first.body {
			t.Fatalf("retry after the crash: %d %s; want the first answer %d %s", again.code, strings.TrimSpace(again.body), first.code, strings.TrimSpace(first.body))
		}
		if !again.replayed {
			t.Errorf("retry after the crash not marked Idempotent-Replayed")
		}
		if replay := restarted.post(t, "1", "crash-1"); !replay.replayed || replay.body != first.body {
			t.Errorf("second retry: %d %s replayed=%v; want the first answer replayed", replay.code, replay.body, replay.replayed)
		}
		if other := restarted.post(t, "1", "crash-1-other"); other.out.Outcome != "already processed" || other.out.Amount != 0 {
			t.Errorf("another key: %d %s; want already processed", other.code, other.body)
		}
		if c := crashing.svc.Counts(); c.Credited != 1 {
			t.Errorf("crashed process's counts %+v; want 1 credit", c)
		}
	})

	t.Run("gRPC", func(t *testing.T) {
		crashing := process(crash)
		kctx := metadata.AppendToOutgoingContext(ctx, "idempotency-key", "crash-g")
		req := &rechargepb.RechargeRequest{OrderId: 2}
		first, err := crashing.grpc.Recharge(kctx, req)
		if err != nil || first.GetOutcome() != rechargepb.RechargeResponse_CREDITED || first.GetAmount() != amount {
			t.Fatalf("first: %v %v; want CREDITED", first, err)
		}
		var (
			again *rechargepb.RechargeResponse
			hdr   metadata.MD
		)
		retry(t, func() bool {
			hdr = nil
			again, err = restarted.grpc.Recharge(kctx, req, grpc.Header(&hdr))
			return status.Code(err) == codes.Aborted
		})
		if err != nil || !proto.Equal(again, first) {
			t.Fatalf("retry after the crash: %v %v; want the first answer %v", again, err, first)
		}
		if strings.Join(hdr.Get("idempotent-replayed"), "") != "true" {
			t.Errorf("retry after the crash not marked replayed: header %v", hdr)
		}
		other, err := restarted.grpc.Recharge(metadata.AppendToOutgoingContext(ctx, "idempotency-key", "crash-g-other"), req)
		if err != nil || other.GetOutcome() != rechargepb.RechargeResponse_ALREADY_PROCESSED || other.GetAmount() != 0 {
			t.Errorf("another key: %v %v; want ALREADY_PROCESSED", other, err)
		}
		if c := crashing.svc.Counts(); c.Credited != 1 {
			t.Errorf("crashed process's counts %+v; want 1 credit", c)
		}
	})

	if c := restarted.svc.Counts(); c.Credited != 0 {
		t.Errorf("restarted process's counts %+v; want no credit", c)
	}
	if bal := restarted.balance(t); bal != 2*amount {
		t.Fatalf("balance %d; want %d (each order credited once)", bal, 2*amount)
	}
}
