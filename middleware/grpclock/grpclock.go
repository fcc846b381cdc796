// Package grpclock provides gRPC server interceptors that run calls under a
// distributed lock named after a value taken from the call: a request field
// (through protoreflect), incoming metadata, or a func.
//
//	locks := grpclock.Mutexes(client) // or FairMutexes, or any func(key) scriptlock.Locker
//	srv := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(locks,
//			grpclock.WithMethod("/shop.Orders/Pay", grpclock.Field("order.id")),
//			grpclock.WithMethod("/shop.Orders/Refund", grpclock.Metadata("x-order-id")),
//			grpclock.WithWait(time.Second))),
//		grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks, ...)))
//
// After registering the services, Validate(srv, opts...) checks that every
// configured method exists and every Field path exists in its request
// message, so a typo fails startup instead of leaving a method unlocked.
//
// Only configured methods are locked; the others pass through untouched
// (WithAllMethods locks every method; for a computed subset, compose with
// go-grpc-middleware's selector interceptors).
//
// The handler's context is the lock's context: it is cancelled when the lock
// is lost, scriptlock.Fence gives the fencing token, and nested code locking
// the same key with it re-enters. Outcomes: key missing or invalid →
// InvalidArgument; still contended after the wait → Aborted with a RetryInfo
// detail (WithRetryAfter, 1 s by default); Redis unreachable → Unavailable
// with a RetryInfo detail too (unless WithFailOpen); lock lost while the
// handler ran → Aborted (with RetryInfo) if the handler failed, unless an
// idempotency interceptor further in stored that failure (the loss came
// after it; the retry is replayed it), its response if it returned one (it
// finished all the same, and Aborted would say nothing was done). Statuses carry no Redis addresses or error text:
// the detail is logged (WithLogger).
// The lock is released when the handler returns, panics included. A panic
// of the call beneath a stream's SendMsg or RecvMsg made under the lock (an
// outer interceptor's stream wrapper, a codec) goes on on the handler's
// goroutine with its own value, as without the lock, and is logged with the
// stack where it was raised, which the handler's goroutine does not show.
//
// Streams: with a Metadata key the lock is taken before the handler runs.
// With a Field or Func key it is taken when the handler receives the first
// message (for server-streaming methods, before the method body runs); the
// stream's Context then reports the lock's values and cancellation. A stream
// whose lock is lost ends as gRPC ends a cancelled one: SendMsg and RecvMsg
// fail with Aborted from then on, a RecvMsg already waiting for the client's
// next message and a SendMsg waiting for the client to read included, so a
// handler looping on them stops; errors.Is
// reports that error as scriptlock.ErrLockLost. Once one of them has failed
// so, a message was dropped and the call ends Aborted, also when the handler
// ignored the error and returned nil. A
// stream whose lock is refused ends with the refusal (Aborted when contended,
// InvalidArgument for a bad key, ...): SendMsg and RecvMsg fail with it, and
// the call ends with it even if the handler ignored it and returned nil. A
// later message naming another key than the first (a different order id in
// a client stream) is refused the same way, with InvalidArgument: the lock
// guards the first message's key only. A later message whose key the key
// source refuses is refused as a first message would be (a Func's own
// status, such as PermissionDenied, as it returned it). Later messages
// without a key are received as usual. Such a stream holds no lock before
// its first message is received, so a SendMsg before it fails and ends the
// call with Internal (a
// handler that sends first needs a Metadata key), or with InvalidArgument
// when the client closed the stream without sending any message; nothing is
// sent, and both are reported to WithOutcome as key_invalid. A SendMsg on another goroutine once the first message was received,
// while its lock is being taken, waits for the lock and is then sent under
// it, or fails with the refusal. SendHeader is not held back: a client may
// wait for the headers before it sends its first message.
//
// # Idempotency-Key
//
// IdempotencyUnaryServerInterceptor replays a completed call's stored
// response to a retry that carries the same idempotency-key metadata, through
// an idempotency.Store; chain it before the lock interceptor (a replay needs
// no lock). On the client, IdempotencyUnaryClientInterceptor attaches one key
// per logical call and keeps it across retries.
//
//	store, err := idempotency.NewStore(rc) // rc: a rueidis.Client; store.Close() on shutdown
//	idem := []grpclock.IdempotencyOption{grpclock.WithIdempotentMethods("/shop.Orders/Pay")}
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(
//		grpclock.IdempotencyUnaryServerInterceptor(store, idem...),
//		grpclock.UnaryServerInterceptor(locks, opts...)))
//	// after registering: grpclock.ValidateIdempotency(srv, idem...)
//
// A duplicate while the first call runs gets Aborted; the same key with
// another request gets FailedPrecondition. Records are scoped to the caller's
// credentials (CredentialScope: authorization metadata and TLS client
// certificate, hashed), and only final codes are stored (WithStoredCodes).
package grpclock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// UnaryServerInterceptor locks configured unary methods. It panics if the
// options are invalid (a key prefix too long for lock names, a key source
// that names nothing, a WithMethod name that is no full method name).
func UnaryServerInterceptor(lock LockFunc, opts ...Option) grpc.UnaryServerInterceptor {
	o := mustOptions(lock, opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		src, ok := o.methods[info.FullMethod]
		if !ok {
			if o.all == nil {
				return handler(ctx, req)
			}
			src = *o.all
		}
		key, err := o.key(ctx, src, info.FullMethod, req)
		if err != nil {
			markLockAnswer(ctx)
			return nil, err
		}
		// info is the call's, shared by the interceptors in its chain: a
		// call made in process with this context gets an owner of its own.
		lctx, release, err := core.Acquire(ctx, lock, key, o.wait, info)
		if err != nil {
			if o.failOpen && mayFailOpen(ctx, err) {
				o.outcome.Report(ctx, scriptlock.RequestFailOpen)
				o.logger.WarnContext(ctx, "grpclock: lock unavailable, running without it (fail open)", "method", info.FullMethod, "key", key, "err", err)
				clearLockAnswer(ctx)
				return handler(ctx, req)
			}
			o.outcome.Report(ctx, core.LockOutcome(ctx, err))
			markLockAnswer(ctx)
			return nil, o.acquireError(ctx, info.FullMethod, key, err)
		}
		defer o.release(ctx, release, info.FullMethod, key)
		clearLockAnswer(ctx)
		returned := false
		defer func() {
			if !returned {
				// The handler panicked: the call held the lock all the
				// same, and WithOutcome gets every call locked.
				o.outcome.Report(ctx, core.HeldOutcome(lctx))
			}
		}()
		hctx, stored := withStoredAnswer(lctx)
		resp, err := handler(hctx, req)
		returned = true
		if core.LockLost(lctx) {
			o.outcome.Report(ctx, scriptlock.RequestLockLost)
			// A failure an idempotency interceptor further in stored was
			// returned before it saw the loss, so under the lock: it is
			// the answer, the one the retry is replayed.
			if err != nil && !stored.set.Load() {
				markLockAnswer(ctx)
				return nil, lostError(context.Cause(lctx), o.retryAfter)
			}
			// The handler saw its context end and still finished: its
			// response says what it did, as an HTTP response already sent
			// does. Aborted would tell the client that nothing was done.
			return resp, err
		}
		o.outcome.Report(ctx, scriptlock.RequestLocked)
		return resp, err
	}
}

// StreamServerInterceptor locks configured streaming methods. It panics if the
// options are invalid.
func StreamServerInterceptor(lock LockFunc, opts ...Option) grpc.StreamServerInterceptor {
	o := mustOptions(lock, opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		src, ok := o.methods[info.FullMethod]
		if !ok {
			if o.all == nil {
				return handler(srv, ss)
			}
			src = *o.all
		}
		ctx := ss.Context()
		ls := &lockedStream{ServerStream: ss, o: o, lock: lock, src: src, method: info.FullMethod, scope: info, decidedCh: make(chan struct{})}
		base, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		ls.ctx = &streamCtx{Context: base, carried: carriedPanics{scope: info}}
		// A grpclock stream this one wraps (a second lock on the stream)
		// tells through its context which panics it carried on, logged.
		// Only one of this call's chain: a stream a handler opens in
		// process with its context (an in-process channel passing context
		// values) is another call, and carries nothing of the handler's.
		if c, _ := ctx.Value(carriedKey{}).(*carriedPanics); c != nil && c.scope == info {
			ls.wrappedCarried = c
		}
		ls.cancel = cancel
		if !src.fromMessage() {
			if err := ls.acquire(nil); err != nil {
				if errors.Is(err, errFailOpen) {
					return handler(srv, ss)
				}
				return err
			}
		}
		defer ls.releaseHeld()
		returned := false
		defer func() {
			// A handler that panicked under the lock is reported as one
			// that returned is (a refusal was reported when it was made).
			if held := ls.end(); !returned && held != nil && ls.refusal() == nil {
				o.outcome.Report(ctx, core.HeldOutcome(held))
			}
		}()
		err := handler(srv, ls)
		returned = true
		held := ls.end()
		if rerr := ls.refusal(); rerr != nil {
			// The lock was refused: the call fails with that answer, also
			// when the handler went on without the lock and returned nil.
			return rerr
		}
		if held != nil && core.LockLost(held) {
			o.outcome.Report(ctx, scriptlock.RequestLockLost)
			if err != nil || ls.lossSeen.Load() {
				// A message the handler sent or received after the loss
				// was dropped: OK would tell the client the stream was
				// whole.
				return lostError(context.Cause(held), o.retryAfter)
			}
			return nil // finished despite the loss, as a unary handler's response stands
		}
		if held != nil {
			o.outcome.Report(ctx, scriptlock.RequestLocked)
		}
		return err
	}
}

var errFailOpen = errors.New("grpclock: fail open")

// lockedStream takes the lock before the handler (metadata keys) or on the
// first message received (field and func keys).
type lockedStream struct {
	grpc.ServerStream
	o      *options
	lock   LockFunc
	src    KeySource
	method string
	// scope: the call's StreamServerInfo, which interceptors in its chain
	// share (core.Acquire keeps their owner only within one call).
	scope  *grpc.StreamServerInfo
	ctx    *streamCtx
	cancel context.CancelCauseFunc
	// wrappedCarried: the panics carried on by the grpclock stream this
	// one wraps, if it wraps one (see carriedPanics).
	wrappedCarried *carriedPanics

	once    sync.Once
	decided atomic.Bool // the first message was received and the lock taken, refused or failed open
	// received: the first message was received and its lock is being
	// decided; decidedCh is closed once it is.
	received  atomic.Bool
	decidedCh chan struct{}
	empty     atomic.Bool // the client closed the stream before sending a first message
	mu        sync.Mutex
	refused   error // the lock's refusal, once the first message was received
	ended     bool  // the call returned: a lock granted from now on is given back
	key       string
	lctx      context.Context
	release   func() error
	stop      func() bool

	// lossSeen: a SendMsg or RecvMsg failed with the lock's loss, so a
	// message was dropped; the call ends Aborted even if the handler
	// ignored that and returned nil.
	lossSeen atomic.Bool
}

func (s *lockedStream) Context() context.Context { return s.ctx }

// endedByLoss reports whether the lock was lost: gRPC ends a stream whose
// context is done, and its Send and Recv then fail, which is what handlers
// that loop on them rely on to stop. The stream's context ends with the
// lock's cause, also for a SendMsg on another goroutine than RecvMsg.
func (s *lockedStream) endedByLoss() bool { return core.LockLost(s.ctx.Context) }

// SendMsg fails once the lock was lost or refused: a handler that went on
// after RecvMsg reported the refusal sends nothing without the lock. It also
// fails, and ends the call, before the first message of a stream keyed by
// it was received: that answer would be produced outside the lock.
func (s *lockedStream) SendMsg(m any) error {
	if s.endedByLoss() {
		return s.lostError()
	}
	if s.src.fromMessage() && !s.decided.Load() && s.received.Load() {
		// Another goroutine received the first message and is taking its
		// lock: a bidirectional handler's sender waits for it rather than
		// fail, and then sends under the lock or fails with its refusal.
		select {
		case <-s.decidedCh:
		case <-s.ctx.Done():
			if err := s.refusal(); err != nil {
				return err
			}
			return status.FromContextError(s.ctx.Err()).Err()
		}
		if s.endedByLoss() {
			return s.lostError()
		}
	}
	if s.src.fromMessage() && !s.decided.Load() && s.refusal() == nil {
		// Either way the call is refused for want of the key its answer
		// needed: reported as key_invalid, once, by the SendMsg that
		// refused it.
		if s.empty.Load() {
			// The client sent no message, so no key: refused as a first
			// message without one is.
			if s.refuse(&lockError{st: status.New(codes.InvalidArgument, "lock key missing")}) {
				s.o.outcome.Report(s.ctx.Context, scriptlock.RequestKeyInvalid)
			}
		} else if s.refuse(&lockError{st: status.New(codes.Internal, "stream sent a message before receiving the one that names its lock")}) {
			s.o.logger.ErrorContext(s.ctx.Context, "grpclock: stream handler sent a message before receiving the first one, which names its lock", "method", s.method)
			s.o.outcome.Report(s.ctx.Context, scriptlock.RequestKeyInvalid)
		}
	}
	if err := s.refusal(); err != nil {
		return err
	}
	return s.send(m)
}

// send sends m. While the lock is held it returns as soon as the lock is
// lost, with the loss: gRPC's SendMsg waits while the client reads nothing
// (flow control), and its context is not the lock's. As recv does, it sends
// on a goroutine that ends when gRPC's SendMsg returns, at the latest when
// the call ends; meanwhile every SendMsg returns the loss without sending,
// so gRPC's SendMsg never runs twice at once. gRPC forbids changing m after
// SendMsg, so sending it after returning is within its rules.
func (s *lockedStream) send(m any) error {
	return s.untilLoss(func() error { return s.ServerStream.SendMsg(m) })
}

// untilLoss runs call, gRPC's SendMsg or RecvMsg. While the lock is held it
// runs it on a goroutine and returns as soon as the lock is lost, with the
// loss (gRPC waits on the client, under a context that is not the lock's);
// the goroutine ends when call returns, at the latest when the call ends.
// When the call itself ends, call's own answer is returned.
// A panic of call (an outer interceptor's stream, a codec) goes on on the
// caller's goroutine, the handler's, with its own value, as it would
// without the lock (on call's own it crashed the process, past any
// recovery interceptor): a recovery handler may compare it. It is logged
// with the stack where it was raised, which the handler's goroutine does
// not show, once (one carried on by a grpclock stream beneath, a second
// lock on the stream, was logged by it); one after the caller has returned
// at the loss is logged as let go (without a stack when one beneath logged
// it).
// A call that ends its goroutine (runtime.Goexit: a test's t.FailNow in a
// stream wrapper) ends the handler's too.
func (s *lockedStream) untilLoss(call func() error) error {
	s.mu.Lock()
	held := s.lctx != nil
	s.mu.Unlock()
	if !held {
		return call()
	}
	type outcome struct {
		err      error
		caught   any
		panicked bool
		exited   bool // call ended its goroutine (runtime.Goexit)
	}
	done := make(chan outcome, 1)
	var mu sync.Mutex
	left := false // the caller returned at the loss, without call's outcome
	go func() {
		var o outcome
		var stack []byte
		returned := false
		defer func() {
			// Neither returned nor recovered below: call ended its
			// goroutine, and this runs as it unwinds.
			o.exited = !returned && !o.panicked
			mu.Lock()
			gone := left
			done <- o
			mu.Unlock()
			// On this goroutine a log handler's panic would crash the
			// process: the record is dropped instead.
			defer func() { _ = recover() }()
			if !o.panicked {
				return
			}
			// One carried on by a grpclock stream beneath was logged there
			// with the stack where it was raised; this one names only its
			// hand-off.
			beneath := s.wrappedCarried != nil && s.wrappedCarried.take(o.caught)
			switch {
			case gone && beneath:
				s.o.logger.ErrorContext(s.ctx, "grpclock: panic recovered in a stream call let go at its lock's loss", "method", s.method, "panic", o.caught)
			case gone:
				s.o.logger.ErrorContext(s.ctx, "grpclock: panic recovered in a stream call let go at its lock's loss", "method", s.method, "panic", o.caught, "stack", string(stack))
			case !beneath:
				s.o.logger.ErrorContext(s.ctx, "grpclock: panic recovered in a stream call made under the lock, gone on on the handler's goroutine", "method", s.method, "panic", o.caught, "stack", string(stack))
			}
		}()
		func() {
			defer func() {
				if !returned {
					// A panic, or Goexit, which recover does not stop. The
					// value is not the test: under GODEBUG=panicnil=1 a
					// panic(nil) recovers as nil. The stack is taken here,
					// where the panic's frames are still on it.
					o.caught, stack = recover(), debug.Stack()
				}
			}()
			o.err = call()
			returned = true
		}()
		// Only a return or a recovered panic comes this far.
		o.panicked = !returned
	}()
	var o outcome
	select {
	case o = <-done:
	case <-s.ctx.Done():
		if s.endedByLoss() {
			mu.Lock()
			select {
			case o = <-done: // ended meanwhile: its panic goes on
			default:
				left = true
			}
			mu.Unlock()
			if !o.panicked && !o.exited {
				return s.lostError()
			}
		} else {
			o = <-done // the call itself ended: gRPC's call returns with it
		}
	}
	if o.panicked {
		s.ctx.carried.add(o.caught)
		panic(o.caught)
	}
	if o.exited {
		// Neither sent nor received: nil would report a message that was
		// not. The handler's goroutine ends as it would without the lock.
		runtime.Goexit()
	}
	return o.err
}

func (s *lockedStream) RecvMsg(m any) error {
	if s.endedByLoss() {
		return s.lostError()
	}
	if err := s.refusal(); err != nil {
		return err
	}
	if err := s.recv(m); err != nil {
		if errors.Is(err, io.EOF) && !s.decided.Load() {
			s.empty.Store(true)
		}
		return err
	}
	// The lock may have been lost while RecvMsg waited for the message:
	// it is not handed over to be handled without the lock.
	if s.endedByLoss() {
		return s.lostError()
	}
	if !s.src.fromMessage() {
		return nil
	}
	first := false
	s.once.Do(func() {
		first = true
		s.received.Store(true)
		// A SendMsg may have refused the call while this message was on
		// its way: no lock is taken for it, nor a second outcome reported.
		if s.refusal() == nil {
			if err := s.acquire(m); err != nil && !errors.Is(err, errFailOpen) {
				s.refuse(err)
			}
		}
		s.decided.Store(true)
		close(s.decidedCh)
	})
	if !first && s.lctx != nil {
		s.sameKey(m)
	}
	return s.refusal()
}

// recv receives the next message into m. While the lock is held it returns
// as soon as the lock is lost, with the loss: gRPC's RecvMsg waits for the
// client (its context is not the lock's), so the receive runs on a goroutine
// and the handler is not kept waiting. That goroutine ends when gRPC's
// RecvMsg returns, at the latest when the call ends; meanwhile every RecvMsg
// returns the loss without receiving, so gRPC's RecvMsg never runs twice at
// once. It receives into a message of its own, copied into m only when it
// is handed over, so a message arriving after the loss is never written into
// m, which the handler owns again.
func (s *lockedStream) recv(m any) error {
	s.mu.Lock()
	held := s.lctx != nil
	s.mu.Unlock()
	if !held {
		return s.ServerStream.RecvMsg(m)
	}
	dst, commit := privateMessage(m)
	err := s.untilLoss(func() error { return s.ServerStream.RecvMsg(dst) })
	if err == nil {
		commit()
	}
	return err
}

// privateMessage returns a fresh message of m's type to receive into and the
// func that copies it into m. A message that is neither a proto.Message nor
// a pointer is received into m itself.
func privateMessage(m any) (dst any, commit func()) {
	if pm, ok := m.(proto.Message); ok {
		fresh := pm.ProtoReflect().New().Interface()
		return fresh, func() {
			proto.Reset(pm)
			proto.Merge(pm, fresh)
		}
	}
	if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer && !v.IsNil() {
		fresh := reflect.New(v.Type().Elem())
		return fresh.Interface(), func() { v.Elem().Set(fresh.Elem()) }
	}
	return m, func() {}
}

// lostError is the answer of SendMsg and RecvMsg once the lock was lost:
// Aborted, and errors.Is reports the lock's cause (scriptlock.ErrLockLost).
func (s *lockedStream) lostError() error {
	s.lossSeen.Store(true)
	return lostError(context.Cause(s.ctx.Context), s.o.retryAfter)
}

// sameKey refuses a message after the first that names another key than the
// lock held: the lock guards the first message's key only, so the message
// would be handled without its own. A message without a key (a stream whose
// first message names the resource and the rest carry data) is fine.
func (s *lockedStream) sameKey(m any) {
	raw, err := s.src.key(s.ctx.Context, s.method, m)
	if err == nil && raw == "" {
		return
	}
	if err == nil {
		var key string
		if key, err = core.Key(s.o.prefix, raw, s.o.maxKeyLen); err == nil && key == s.key {
			return
		}
	}
	if core.KeyCanceled(s.ctx.Context, err) {
		// The stream ended while a Func looked the key up: no bad key,
		// and the call's outcome is already reported.
		s.refuse(&lockError{st: contextStatus(s.ctx.Context, err)})
		return
	}
	s.o.outcome.Report(s.ctx.Context, scriptlock.RequestKeyInvalid)
	if err != nil {
		// Answered as the first message's would be: a Func's own status
		// (PermissionDenied for another account's order) says more than
		// that the key differs.
		s.refuse(s.o.keyError(s.ctx.Context, s.method, err))
		return
	}
	s.refuse(&lockError{st: status.New(codes.InvalidArgument, "lock key differs from the one the stream's first message locked")})
}

// refuse records the call's refusal and reports whether it was the first.
func (s *lockedStream) refuse(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = err
		return true
	}
	return false
}

func (s *lockedStream) refusal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

func (s *lockedStream) acquire(req any) error {
	parent := s.ctx.Context
	key, err := s.o.key(parent, s.src, s.method, req)
	if err != nil {
		return err
	}
	s.key = key
	lctx, release, err := core.Acquire(parent, s.lock, key, s.o.wait, s.scope)
	if err != nil {
		if s.o.failOpen && mayFailOpen(parent, err) {
			s.o.outcome.Report(parent, scriptlock.RequestFailOpen)
			s.o.logger.WarnContext(parent, "grpclock: lock unavailable, running without it (fail open)", "method", s.method, "key", key, "err", err)
			return errFailOpen
		}
		s.o.outcome.Report(parent, core.LockOutcome(parent, err))
		return s.o.acquireError(parent, s.method, key, err)
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		// The handler returned while another goroutine's RecvMsg was
		// taking the lock: nothing would release it, and the watchdog
		// would renew it for as long as the process runs.
		s.o.release(parent, release, s.method, key)
		return &lockError{st: status.New(codes.Canceled, "stream ended while its lock was being taken")}
	}
	s.lctx, s.release = lctx, release
	s.ctx.locked.Store(&lctx)
	s.stop = context.AfterFunc(lctx, func() { s.cancel(context.Cause(lctx)) })
	s.mu.Unlock()
	return nil
}

// end marks the call as returned and gives the lock context it holds (nil
// for none): a lock granted later is given back by acquire.
func (s *lockedStream) end() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	return s.lctx
}

func (s *lockedStream) releaseHeld() {
	s.end() // also after a panic of the handler
	if s.release == nil {
		return
	}
	s.stop()
	s.o.release(s.ctx.Context, s.release, s.method, s.key)
}

// streamCtx is the stream's context: cancellable by the lock, and reporting
// the lock context's values (owner, fencing token) once the lock is held.
type streamCtx struct {
	context.Context
	locked  atomic.Pointer[context.Context]
	carried carriedPanics // the panics this stream carried on
}

func (c *streamCtx) Value(k any) any {
	if _, ok := k.(carriedKey); ok {
		return &c.carried
	}
	if p := c.locked.Load(); p != nil {
		return (*p).Value(k)
	}
	return c.Context.Value(k)
}

func mustOptions(lock LockFunc, opts []Option) *options {
	if lock == nil {
		panic("grpclock: nil LockFunc")
	}
	o := evaluateOptions(opts)
	if err := core.CheckPrefix(o.prefix, o.maxKeyLen, scriptlock.MaxNameLen); err != nil {
		panic("grpclock: " + err.Error())
	}
	// The lock may put a key prefix of its own first (Mutexes of a Client
	// with WithKeyPrefix), which CheckPrefix does not see.
	if err := core.CheckLockPrefix(lock, o.prefix); err != nil {
		panic("grpclock: " + err.Error())
	}
	if o.wait < 0 {
		panic(fmt.Sprintf("grpclock: negative wait %s", o.wait))
	}
	for m, src := range o.methods {
		// A name no call has would leave the method meant unlocked.
		if _, _, err := splitMethod(m); err != nil {
			panic("grpclock: WithMethod: " + err.Error())
		}
		if err := src.check(); err != nil {
			panic(fmt.Sprintf("grpclock: method %s: %v", m, err))
		}
	}
	if o.all != nil {
		if err := o.all.check(); err != nil {
			panic("grpclock: all methods: " + err.Error())
		}
	}
	return o
}

func (o *options) key(ctx context.Context, src KeySource, method string, req any) (string, error) {
	raw, err := src.key(ctx, method, req)
	if err == nil {
		var key string
		if key, err = core.Key(o.prefix, raw, o.maxKeyLen); err == nil {
			return key, nil
		}
	}
	if core.KeyCanceled(ctx, err) {
		// The client went away while a Func looked the key up: no bad
		// key, ended as a call canceled while waiting for its lock is.
		o.outcome.Report(ctx, scriptlock.RequestCanceled)
		return "", &lockError{st: contextStatus(ctx, err)}
	}
	o.outcome.Report(ctx, scriptlock.RequestKeyInvalid)
	return "", o.keyError(ctx, method, err)
}

// keyError answers a key that a key source or core.Key refused with err.
// Every answer here is a lockError: the call never ran, so the idempotency
// interceptor stores none of them and bad input leaves nothing in Redis.
func (o *options) keyError(ctx context.Context, method string, err error) *lockError {
	switch {
	case errors.Is(err, errConfig):
		o.logger.ErrorContext(ctx, "grpclock: key source does not fit the request", "method", method, "err", err)
		return &lockError{st: status.New(codes.Internal, "internal error")}
	case errors.Is(err, core.ErrKeyMissing):
		return &lockError{st: status.New(codes.InvalidArgument, "lock key missing")}
	case errors.Is(err, core.ErrKeyInvalid):
		// The detail describes the caller's own input.
		return &lockError{st: status.New(codes.InvalidArgument, "lock "+strings.TrimPrefix(err.Error(), "request "))}
	default:
		if st, ok := status.FromError(err); ok {
			return &lockError{st: st} // a status from a Func key source
		}
		o.logger.WarnContext(ctx, "grpclock: key source failed", "method", method, "err", err)
		return &lockError{st: status.New(codes.InvalidArgument, "lock key invalid")}
	}
}

func (o *options) release(ctx context.Context, release func() error, method, key string) {
	if err := release(); err != nil && !errors.Is(err, scriptlock.ErrNotHeld) {
		o.logger.WarnContext(ctx, "grpclock: release failed", "method", method, "key", key, "err", err)
	}
}

func mayFailOpen(ctx context.Context, err error) bool {
	f, _ := core.ClassifyLockError(ctx, err)
	return f == core.Unavailable && core.MayFailOpen(err)
}

// lockAnswer, placed in the context by the idempotency interceptor, is set
// when the lock interceptor answers a call itself (with a lockError). An
// interceptor between the two may rebuild the error (status.Convert(err).Err())
// and so lose its type; the flag survives that.
type lockAnswer struct{ set atomic.Bool }

type lockAnswerKey struct{}

func withLockAnswer(ctx context.Context) (context.Context, *lockAnswer) {
	a := new(lockAnswer)
	return context.WithValue(ctx, lockAnswerKey{}, a), a
}

func markLockAnswer(ctx context.Context) {
	if a, ok := ctx.Value(lockAnswerKey{}).(*lockAnswer); ok {
		a.set.Store(true)
	}
}

// clearLockAnswer is called as a call goes on to its handler. An
// interceptor between the idempotency interceptor and this one may have
// called the chain again with the context (a retry) after an answer of a
// lock interceptor: that answer no longer describes the call, whose outcome
// is now the handler's to store.
func clearLockAnswer(ctx context.Context) {
	if a, ok := ctx.Value(lockAnswerKey{}).(*lockAnswer); ok {
		a.set.Store(false)
	}
}

// storedAnswer, placed in the context by the lock interceptor, is set by an
// idempotency interceptor further in that stored the failure it returns:
// that failure is what a retry is replayed, so a loss of the lock noticed
// after it was stored must not answer the call Aborted instead.
type storedAnswer struct{ set atomic.Bool }

type storedAnswerKey struct{}

func withStoredAnswer(ctx context.Context) (context.Context, *storedAnswer) {
	a := new(storedAnswer)
	return context.WithValue(ctx, storedAnswerKey{}, a), a
}

func markStoredAnswer(ctx context.Context) {
	if a, ok := ctx.Value(storedAnswerKey{}).(*storedAnswer); ok {
		a.set.Store(true)
	}
}

// lockError is a status produced by the lock interceptor itself: a bad key,
// contention, a lost lock, Redis unavailable. The idempotency interceptor
// never stores it. cause, when set, is what errors.Is and errors.As see
// behind it (a lost lock's cause).
type lockError struct {
	st    *status.Status
	cause error
}

func (e *lockError) Error() string              { return e.st.Err().Error() }
func (e *lockError) GRPCStatus() *status.Status { return e.st }
func (e *lockError) Unwrap() error              { return e.cause }

// acquireError turns an acquisition error into a status; the detail of a
// Redis error is logged, not sent.
func (o *options) acquireError(ctx context.Context, method, key string, err error) error {
	switch f, remaining := core.ClassifyLockError(ctx, err); f {
	case core.Invalid:
		return &lockError{st: status.New(codes.InvalidArgument, "lock key invalid")}
	case core.Contended:
		st := status.New(codes.Aborted, "resource locked by another call")
		return &lockError{st: withRetryInfo(st, core.RetryHint(o.retryAfter, o.wait, remaining))}
	case core.Canceled:
		return &lockError{st: contextStatus(ctx, err)}
	default:
		o.logger.ErrorContext(ctx, "grpclock: lock service unavailable", "method", method, "key", key, "err", err)
		// Says when to try again, as echolock's 503 does (Retry-After).
		return &lockError{st: withRetryInfo(status.New(codes.Unavailable, "lock service unavailable"), o.retryAfter)}
	}
}

// withRetryInfo is st with a RetryInfo detail suggesting a retry after d.
func withRetryInfo(st *status.Status, d time.Duration) *status.Status {
	if ds, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)}); err == nil {
		return ds
	}
	return st
}

// contextStatus is the status of a call whose context ended (or whose
// deadline passed a moment before its timer fired) while err was met.
func contextStatus(ctx context.Context, err error) *status.Status {
	if cerr := ctx.Err(); cerr != nil {
		return status.FromContextError(cerr)
	}
	return status.FromContextError(err)
}

// lostError is the answer to a call whose lock was lost, with cause (the
// lock context's cause, scriptlock.ErrLockLost) behind it, suggesting a
// retry after retry, as echolock's 503 does (Retry-After).
func lostError(cause error, retry time.Duration) error {
	return &lockError{st: withRetryInfo(status.New(codes.Aborted, "lock lost while handling the call"), retry), cause: cause}
}
