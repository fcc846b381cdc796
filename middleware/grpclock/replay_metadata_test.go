package grpclock_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestIdempotencyReplaysMetadata: a replay sends the header and trailer
// metadata the first call's handler set (SetHeader, SendHeader, SetTrailer),
// for a stored response and for a stored error, so that only the replay
// marker tells it from the first call. Metadata gRPC reserves ("grpc-") and
// the replay marker are not stored.
func TestIdempotencyReplaysMetadata(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		must := func(err error) {
			if err != nil {
				t.Errorf("handler: %v", err)
			}
		}
		must(grpc.SetHeader(ctx, metadata.Pairs("x-currency", "EUR", "x-multi", "a", "x-multi", "b")))
		must(grpc.SetTrailer(ctx, metadata.Pairs("x-cost-bin", "\x00\x01", "x-ledger", "L1")))
		must(grpc.SetTrailer(ctx, metadata.Pairs("x-ledger", "L2", "grpc-internal-thing", "no")))
		if field(r, "order_id").String() == "refused" {
			must(grpc.SendHeader(ctx, metadata.Pairs("x-sent", "early", grpclock.MetadataIdempotentReplayed, "spoof")))
			return nil, status.Error(codes.FailedPrecondition, "order closed")
		}
		return order("", "", 1, "ok"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})

	for _, id := range []string{"ok", "refused"} {
		var h1, t1, h2, t2 metadata.MD
		r1, err1 := call(withKey("md-"+id), conn, "Pay", order(id, "", 0, ""), grpc.Header(&h1), grpc.Trailer(&t1))
		r2, err2 := call(withKey("md-"+id), conn, "Pay", order(id, "", 0, ""), grpc.Header(&h2), grpc.Trailer(&t2))
		if status.Code(err1) != status.Code(err2) || (err1 == nil && !proto.Equal(r1, r2)) {
			t.Fatalf("%s: replay %v %v, first %v %v", id, r2, err2, r1, err1)
		}
		if got := h2.Get(grpclock.MetadataIdempotentReplayed); len(got) != 1 || got[0] != "true" {
			t.Errorf("%s: replay marker %q", id, got)
		}
		h2.Delete(grpclock.MetadataIdempotentReplayed)
		h1.Delete(grpclock.MetadataIdempotentReplayed) // the handler's spoofed one
		t1.Delete("grpc-internal-thing")               // reserved for gRPC: not replayed
		if diff := cmp.Diff(h1, h2); diff != "" {
			t.Errorf("%s: replayed header (-first +replay):\n%s", id, diff)
		}
		if diff := cmp.Diff(t1, t2); diff != "" {
			t.Errorf("%s: replayed trailer (-first +replay):\n%s", id, diff)
		}
		if len(h2.Get("x-currency")) != 1 || len(t2.Get("x-ledger")) != 2 || len(t2.Get("x-cost-bin")) != 1 {
			t.Errorf("%s: replay header %v trailer %v", id, h2, t2)
		}
		for k := range t2 {
			if strings.HasPrefix(k, "grpc-") {
				t.Errorf("%s: replay trailer carries %s", id, k)
			}
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("handler ran %d times for 2 keys", n)
	}
}

// TestIdempotencyMetadataCountsAgainstLimit: metadata is stored with the
// response and counts against WithMaxStoredResponse; a response whose
// metadata does not fit is not stored (a duplicate gets AlreadyExists), never
// replayed without it.
func TestIdempotencyMetadataCountsAgainstLimit(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		_ = grpc.SetHeader(ctx, metadata.Pairs("x-big", strings.Repeat("h", 300)))
		return order("", "", 1, "ok"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithMaxStoredResponse(256)))})
	if _, err := call(withKey("big"), conn, "Pay", order("1", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := call(withKey("big"), conn, "Pay", order("1", "", 0, "")); status.Code(err) != codes.AlreadyExists {
		t.Errorf("duplicate of a response whose metadata is over the limit: %v, want AlreadyExists", err)
	}
}
