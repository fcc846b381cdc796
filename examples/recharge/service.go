package recharge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// Outcome of one recharge call.
type Outcome int

const (
	// Credited: this call marked the order paid and credited the account.
	Credited Outcome = iota + 1
	// AlreadyProcessed: the order was already paid; nothing changed.
	AlreadyProcessed
)

func (o Outcome) String() string {
	switch o {
	case Credited:
		return "credited"
	case AlreadyProcessed:
		return "already processed"
	}
	return "unknown"
}

// Result is what a recharge call did.
type Result struct {
	Order   Order
	Outcome Outcome
	Fence   int64 // token the write carried; 0 without the lock
	// Replayed: an earlier run of this same idempotent request (same
	// idempotency.RequestID) paid the order, and its answer was never stored
	// (its process died first). Outcome is Credited and Fence that run's
	// token: the answer it gave. Nothing changed in this call.
	Replayed bool
}

// WorkFunc is the processing between reading the order and paying it (in a
// real service: confirming the payment with the provider). It should return
// early with ctx's error when ctx ends.
type WorkFunc func(ctx context.Context, o Order) error

// RandomWork sleeps between min and max, or until ctx ends.
func RandomWork(min, max time.Duration) WorkFunc {
	return func(ctx context.Context, _ Order) error {
		d := min
		if max > min {
			d += rand.N(max - min)
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// dbTimeout bounds every database call of a recharge (the payment's
// transaction as a whole): a database that stops answering (a network
// partition, where nothing is refused and nothing answered) fails the
// request as unavailable, rather than hold it, with its order's lock and
// its Idempotency-Key claim, for as long as its client waits.
const dbTimeout = 10 * time.Second

// Service is the recharge flow shared by the HTTP and gRPC front ends, which
// run it under the lock order:<id>.
type Service struct {
	Store *Store
	// Work runs between reading the order and paying it. Default: 5–15 ms.
	Work WorkFunc
	// Unsafe runs without the lock: no fencing token, and a write that does
	// not check the order is unpaid.
	Unsafe bool

	credited, already, stale atomic.Int64

	// unconfirmed maps an order to this service's payment of it whose
	// COMMIT got no reply (its token and request): made or not, the
	// database alone knows, and a later recharge of the order here finds
	// out. At most one entry per order.
	mu          sync.Mutex
	unconfirmed map[int64]Payment
}

// Counts are the service's outcome counters since it started.
type Counts struct {
	// Credited counts the credits this service made and knows of: a
	// payment whose commit got no reply counts here once a later recharge
	// of the order in this service finds it was made (by its token, or
	// with Unsafe by its request's Idempotency-Key: without one it cannot
	// be told from another's payment, and is dropped from Unconfirmed).
	Credited int64
	// AlreadyProcessed counts answers for orders already paid, by an
	// earlier recharge: nothing changed. An answer with Result.Replayed
	// counts here too, unless it is the one that finds out an Unconfirmed
	// payment of this service was made (Credited then).
	AlreadyProcessed int64
	// Stale counts payments refused because a newer lock holder had
	// claimed the order (ErrStaleFence).
	Stale int64
	// Unconfirmed counts this service's payments whose commit got no reply
	// (answered unavailable): each may have been made (a commit the
	// database answered with a refusal was not, and is not counted). A
	// later recharge of the order in this service settles it, moving it to
	// Credited when it was made; until then the balances may hold credits
	// Credited does not count.
	Unconfirmed int64
}

// Counts returns the outcome counters.
func (s *Service) Counts() Counts {
	// Read under the lock settle moves a payment from Unconfirmed to
	// Credited under: counted in one of them, never both nor neither.
	s.mu.Lock()
	defer s.mu.Unlock()
	return Counts{s.credited.Load(), s.already.Load(), s.stale.Load(), int64(len(s.unconfirmed))}
}

// settle learns what became of order's unconfirmed payment, if this service
// has one: paid is the payment the order now records (the zero Payment for
// none, or not paid). It reports whether that payment is this service's
// unconfirmed one, now counted as credited: the same token, or without the
// lock (Unsafe: no token) the same request; a payment without either
// cannot be told from another's.
func (s *Service) settle(order int64, paid Payment) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.unconfirmed[order]
	if !ok {
		return false
	}
	delete(s.unconfirmed, order)
	if u.Fence != 0 && u.Fence == paid.Fence || u.Fence == 0 && u.Request != "" && u.Request == paid.Request {
		s.credited.Add(1)
		return true
	}
	return false
}

// hasUnconfirmed reports whether this service has an unconfirmed payment of order.
func (s *Service) hasUnconfirmed(order int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.unconfirmed[order]
	return ok
}

// Recharge runs the recharge flow for one order. ctx is the lock's context
// (the middleware's): its fencing token guards the writes.
//
//  1. Claim the order with the token (UPDATE ... SET fence = token WHERE
//     fence < token) and read it. Neither unpaid nor paid (cancelled, ...):
//     ErrNotPayable. Paid: answer AlreadyProcessed, or, when
//     the payment was made by this same idempotent request
//     (idempotency.RequestID in ctx) whose answer was lost, that request's
//     answer again (Credited, its fence, Replayed).
//  2. Work (confirm the payment).
//  3. One transaction: mark the order paid where it still carries the token,
//     credit the account and record the payment (token, RequestID). A newer
//     holder's claim in between means this holder's lock expired:
//     ErrStaleFence, nothing written. This step runs to completion even when
//     ctx ends meanwhile; the token decides.
//
// With Unsafe there is no lock and no token: read and check, work, mark paid
// and credit — the check-then-act that credits an order once per concurrent
// duplicate. An order neither unpaid nor paid is refused there too.
//
// An error saying the database is out of reach wraps ErrDatabaseUnavailable.
func (s *Service) Recharge(ctx context.Context, orderID int64) (Result, error) {
	res, err := s.recharge(ctx, orderID)
	// A context error is the request's own (lock lost, client gone) while
	// ctx has ended; otherwise it is the write's timeout: a database that
	// does not answer.
	if err != nil && (databaseDown(err) || ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)) {
		err = fmt.Errorf("%w: %w", ErrDatabaseUnavailable, err)
	}
	return res, err
}

func (s *Service) recharge(ctx context.Context, orderID int64) (Result, error) {
	var (
		o     Order
		token int64
		err   error
	)
	rctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	if s.Unsafe {
		o, err = s.Store.Order(rctx, orderID)
	} else {
		var ok bool
		if token, ok = scriptlock.Fence(ctx); !ok {
			return Result{}, errors.New("recharge: no fencing token in the context: the handler is not running under the lock")
		}
		o, err = s.Store.Claim(rctx, orderID, token)
	}
	if err != nil {
		s.count(err)
		return Result{Order: o, Fence: token}, err
	}
	request, _ := idempotency.RequestID(ctx)
	if o.Status == StatusPaid {
		var (
			p    Payment
			ok   bool
			mine bool
		)
		if request != "" || s.hasUnconfirmed(orderID) {
			if p, ok, err = s.Store.Payment(rctx, orderID); err != nil {
				return Result{Order: o, Fence: token}, err
			}
			// Whoever paid it, this service's unconfirmed payment of the
			// order, if any, is settled now: made when it is the one recorded.
			mine = s.settle(orderID, p)
		}
		replay := ok && request != "" && p.Request == request
		if !mine || !replay {
			// Not the answer of this service's unconfirmed payment itself,
			// which settle counted as the credit it is.
			s.already.Add(1)
		}
		if replay {
			// A retry of the request that paid, whose answer was lost
			// (its process died, or its commit's reply never came): give
			// that answer again, not "already processed".
			return Result{Order: o, Outcome: Credited, Fence: p.Fence, Replayed: true}, nil
		}
		return Result{Order: o, Outcome: AlreadyProcessed, Fence: token}, nil
	}
	// Unpaid: a payment of it this service could not confirm was not made.
	s.settle(orderID, Payment{})
	if o.Status != StatusUnpaid {
		return Result{Order: o, Fence: token}, fmt.Errorf("%w: order %d is %q", ErrNotPayable, orderID, o.Status)
	}
	work := s.Work
	if work == nil {
		work = RandomWork(5*time.Millisecond, 15*time.Millisecond)
	}
	if err := work(ctx, o); err != nil {
		return Result{Order: o, Fence: token}, err
	}
	// The write is not tied to ctx. Once the payment is confirmed it is
	// recorded even if the client has gone, and the lock's context can only
	// report a loss this process has noticed: a process paused past its lease
	// notices nothing. What keeps a stale holder out is the fencing token
	// checked by the database, not the context.
	wctx, cancelWrite := context.WithTimeout(context.WithoutCancel(ctx), dbTimeout)
	defer cancelWrite()
	if err := s.Store.Pay(wctx, o, token, request); err != nil {
		s.count(err)
		if errors.Is(err, errCommitUnanswered) {
			s.mu.Lock()
			if s.unconfirmed == nil {
				s.unconfirmed = make(map[int64]Payment)
			}
			s.unconfirmed[orderID] = Payment{OrderID: orderID, Fence: token, Request: request}
			s.mu.Unlock()
		}
		return Result{Order: o, Fence: token}, err
	}
	s.credited.Add(1)
	o.Status = StatusPaid
	return Result{Order: o, Outcome: Credited, Fence: token}, nil
}

func (s *Service) count(err error) {
	if errors.Is(err, ErrStaleFence) {
		s.stale.Add(1)
	}
}
