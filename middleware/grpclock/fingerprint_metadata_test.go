package grpclock_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestIdempotencyFingerprintMetadata: with WithFingerprintMetadata, the same
// key and message with another value of a listed metadata key (or the key
// left out) gets FailedPrecondition, as another message does; here the lock
// key of Refund comes from metadata, so without it a call for order 43
// would get order 42's stored answer. The same values replay.
func TestIdempotencyFingerprintMetadata(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		return order(strings.Join(md.Get("x-order-id"), ","), "", runs.Add(1), "refunded"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithFingerprintMetadata("X-Order-Id", "x-tenant", "x-order-id")))})
	with := func(kv ...string) context.Context { return metadata.AppendToOutgoingContext(withKey("r"), kv...) }

	first, err := call(with("x-order-id", "42", "x-tenant", "a"), conn, "Refund", order("", "", 0, ""))
	if err != nil {
		t.Fatal(err)
	}
	for name, kv := range map[string][]string{
		"other order":    {"x-order-id", "43", "x-tenant", "a"},
		"other tenant":   {"x-order-id", "42", "x-tenant", "b"},
		"order missing":  {"x-tenant", "a"},
		"order empty":    {"x-order-id", "", "x-tenant", "a"},
		"order repeated": {"x-order-id", "42", "x-order-id", "42", "x-tenant", "a"},
	} {
		if r, err := call(with(kv...), conn, "Refund", order("", "", 0, "")); status.Code(err) != codes.FailedPrecondition {
			t.Errorf("%s: %v %v, want FailedPrecondition", name, r, err)
		}
	}
	var hdr metadata.MD
	again, err := call(with("x-tenant", "a", "x-order-id", "42", "x-other", "1"), conn, "Refund", order("", "", 0, ""), grpc.Header(&hdr))
	if err != nil || !proto.Equal(first, again) || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 1 {
		t.Errorf("same metadata: %v %v %v, want the replay of %v", again, err, hdr, first)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
}

// TestFingerprintMetadataValidated: a key that is not a metadata key makes
// the server interceptor panic and fails ValidateIdempotency.
func TestFingerprintMetadataValidated(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	srv := grpc.NewServer()
	srv.RegisterService(&serviceDesc, &server{})
	for _, keys := range [][]string{{""}, {"x-ok", "bad key"}, {"x:y"}, {":path"}, {"x-\u00e9"}} {
		opt := grpclock.WithFingerprintMetadata(keys...)
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), "WithFingerprintMetadata") {
					t.Errorf("keys %q: panic %v, want one naming WithFingerprintMetadata", keys, p)
				}
			}()
			grpclock.IdempotencyUnaryServerInterceptor(store, opt)
		}()
		if err := grpclock.ValidateIdempotency(srv, opt); !errors.Is(err, grpclock.ErrConfig) {
			t.Errorf("ValidateIdempotency keys %q: %v, want ErrConfig", keys, err)
		}
	}
	if err := grpclock.ValidateIdempotency(srv, grpclock.WithFingerprintMetadata(":authority", "X-Tenant-Id", "x.y_z")); err != nil {
		t.Errorf("valid keys: %v", err)
	}
}
