package grpclock_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestValidate: a misconfigured interceptor fails at startup, naming what is
// wrong, instead of leaving a method unlocked or failing every call.
func TestValidate(t *testing.T) {
	t.Parallel()
	srv := grpc.NewServer()
	srv.RegisterService(&serviceDesc, &server{})
	ok := []grpclock.Option{
		grpclock.WithMethod(svc+"Pay", grpclock.Field("order_id")),
		grpclock.WithMethod(svc+"PayNested", grpclock.Field("order.id")),
		grpclock.WithMethod(svc+"Refund", grpclock.Metadata("x-order-id")),
		grpclock.WithMethod(svc+"Watch", grpclock.Field("orderId")),
		grpclock.WithMethod(svc+"Ping", grpclock.Field("num")),
	}
	if err := grpclock.Validate(srv, ok...); err != nil {
		t.Fatalf("valid configuration: %v", err)
	}
	for name, c := range map[string]struct {
		opt  grpclock.Option
		want string
	}{
		"other service":    {grpclock.WithMethod("/shop.Orders/Recharge", grpclock.Field("order_id")), "/shop.Orders/Recharge is not registered"},
		"bare method name": {grpclock.WithMethod("Pay", grpclock.Field("order_id")), `"Pay" is not a full method name`},
		"method typo":      {grpclock.WithMethod(svc+"Pya", grpclock.Metadata("x")), "Pya is not registered"},
		"field typo":       {grpclock.WithMethod(svc+"Pay", grpclock.Field("order_idd")), `has no field "order_idd"`},
		"nested typo":      {grpclock.WithMethod(svc+"PayNested", grpclock.Field("order.idd")), `grpclocktest.Inner has no field "idd"`},
		"not a message":    {grpclock.WithMethod(svc+"Pay", grpclock.Field("note.id")), "is not a message"},
		"message leaf":     {grpclock.WithMethod(svc+"Pay", grpclock.Field("order")), "not a string or integer"},
		"all methods":      {grpclock.WithAllMethods(grpclock.Field("missing")), `has no field "missing"`},
	} {
		err := grpclock.Validate(srv, c.opt)
		if !errors.Is(err, grpclock.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrConfig mentioning %q", name, err, c.want)
		}
	}

	if err := grpclock.ValidateIdempotency(srv, grpclock.WithIdempotentMethods(svc+"Pay", svc+"Refund")); err != nil {
		t.Errorf("valid idempotent methods: %v", err)
	}
	for name, c := range map[string]struct {
		methods []string
		want    string
	}{
		"unknown":   {[]string{"/shop.Orders/Recharge"}, "is not registered"},
		"streaming": {[]string{svc + "Watch"}, "streaming"},
	} {
		err := grpclock.ValidateIdempotency(srv, grpclock.WithIdempotentMethods(c.methods...))
		if !errors.Is(err, grpclock.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("idempotency %s: %v, want ErrConfig mentioning %q", name, err, c.want)
		}
	}
}
