package recharge

import (
	"context"
	"errors"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// GRPCServer returns a gRPC server with the Orders service registered,
// behind the idempotency interceptor (when configured) and the lock
// interceptor on order:<order_id>. opts are passed to grpc.NewServer.
//
// A retry of a call whose process paid the order and died before its answer
// was stored gets that answer again, with response header
// "idempotent-replayed: true".
//
// Status codes: InvalidArgument for an order_id that is not positive;
// NotFound for an unknown order; FailedPrecondition for an order neither
// unpaid nor paid (cancelled, ...) or whose credit would overflow the
// account's balance; Aborted while the order's lock stays held for
// the whole wait (with RetryInfo), while a call with the same idempotency-key
// runs, or when this call's lock expired and a newer holder took the order over
// (nothing was written: retry); Unavailable when Redis or the database
// cannot be reached.
// The interceptors' configuration is checked against the registered service
// (grpclock.Validate): a mismatch is an error here.
func (s *Server) GRPCServer(opts ...grpc.ServerOption) (*grpc.Server, error) {
	idemOpts := []grpclock.IdempotencyOption{
		grpclock.WithIdempotentMethods(rechargepb.Orders_Recharge_FullMethodName),
		grpclock.WithIdempotencyLogger(s.cfg.Logger),
	}
	lockOpts := []grpclock.Option{
		grpclock.WithMethod(rechargepb.Orders_Recharge_FullMethodName, grpclock.Func(orderKey)),
		grpclock.WithKeyPrefix(LockPrefix),
		grpclock.WithWait(s.cfg.Wait),
		grpclock.WithLogger(s.cfg.Logger),
	}
	var chain []grpc.UnaryServerInterceptor
	if s.cfg.Idempotency != nil {
		chain = append(chain, grpclock.IdempotencyUnaryServerInterceptor(s.cfg.Idempotency, idemOpts...))
	}
	if !s.cfg.Service.Unsafe {
		chain = append(chain, grpclock.UnaryServerInterceptor(s.locks.lock, lockOpts...))
	}
	srv := grpc.NewServer(append(opts, grpc.ChainUnaryInterceptor(chain...))...)
	rechargepb.RegisterOrdersServer(srv, &ordersServer{s: s})
	// A method or field name that does not match the service fails here, not
	// by leaving the method unlocked.
	if err := errors.Join(grpclock.Validate(srv, lockOpts...), grpclock.ValidateIdempotency(srv, idemOpts...)); err != nil {
		return nil, err
	}
	return srv, nil
}

// orderKey is the lock key of a call: the canonical order id.
func orderKey(_ context.Context, _ string, req any) (string, error) {
	r, ok := req.(*rechargepb.RechargeRequest)
	if !ok {
		return "", status.Errorf(codes.Internal, "unexpected request %T", req)
	}
	if r.GetOrderId() <= 0 {
		return "", status.Error(codes.InvalidArgument, "order_id must be a positive integer")
	}
	return strconv.FormatInt(r.GetOrderId(), 10), nil
}

type ordersServer struct {
	rechargepb.UnimplementedOrdersServer
	s *Server
}

func (o *ordersServer) Recharge(ctx context.Context, req *rechargepb.RechargeRequest) (*rechargepb.RechargeResponse, error) {
	if req.GetOrderId() <= 0 {
		return nil, status.Error(codes.InvalidArgument, "order_id must be a positive integer")
	}
	res, err := o.s.cfg.Service.Recharge(ctx, req.GetOrderId())
	switch {
	case errors.Is(err, ErrOrderNotFound):
		return nil, status.Errorf(codes.NotFound, "order %d not found", req.GetOrderId())
	case errors.Is(err, ErrNotPayable):
		return nil, status.Errorf(codes.FailedPrecondition, "order %d is not payable (neither unpaid nor paid)", req.GetOrderId())
	case errors.Is(err, ErrBalanceOverflow):
		return nil, status.Errorf(codes.FailedPrecondition, "order %d: credit would overflow the account balance; nothing was changed", req.GetOrderId())
	case errors.Is(err, ErrStaleFence):
		return nil, status.Error(codes.Aborted, "lock expired before the write; nothing was changed, retry")
	case errors.Is(err, ErrDatabaseUnavailable) && ctx.Err() == nil:
		o.s.cfg.Logger.WarnContext(ctx, "recharge: database unavailable", "order", req.GetOrderId(), "err", err)
		return nil, status.Error(codes.Unavailable, "database unavailable, retry later")
	case err != nil:
		if !endedByContext(ctx, err) {
			o.s.cfg.Logger.ErrorContext(ctx, "recharge failed", "order", req.GetOrderId(), "err", err)
		}
		if ctx.Err() != nil {
			return nil, status.FromContextError(context.Cause(ctx)).Err()
		}
		return nil, status.Error(codes.Internal, "internal error") // the detail stays in the log
	}
	out := &rechargepb.RechargeResponse{
		OrderId:   req.GetOrderId(),
		AccountId: res.Order.AccountID,
		Fence:     res.Fence,
		Outcome:   rechargepb.RechargeResponse_ALREADY_PROCESSED,
	}
	if res.Outcome == Credited {
		out.Outcome = rechargepb.RechargeResponse_CREDITED
		out.Amount = res.Order.Amount
	}
	if res.Replayed {
		// The first run's answer, rebuilt: marked like the interceptor's replays.
		_ = grpc.SetHeader(ctx, metadata.Pairs(grpclock.MetadataIdempotentReplayed, "true"))
	}
	return out, nil
}

// endedByContext reports whether err only says that ctx ended (the lock was
// lost, the client left) and so stopped the recharge before it wrote. An
// error of its own, such as a payment that failed after the lock was lost
// (the write runs regardless of ctx), is not, and is logged.
func endedByContext(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, ctx.Err()) || errors.Is(err, context.Cause(ctx)))
}
