package grpclock_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestIdempotencyRecordMetadataMalformed: a stored record whose header or
// trailer metadata this interceptor could not have stored (a key that is no
// metadata key, a value gRPC may not send) is a malformed record: Internal,
// reported as a store failure, nothing of it sent, and the call not run
// again.
func TestIdempotencyRecordMetadataMalformed(t *testing.T) {
	t.Parallel()
	store, node := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return order("", "", 7, "ok"), nil
	}}
	var mu sync.Mutex
	var got []scriptlock.RequestOutcome
	report := func(_ context.Context, o scriptlock.RequestOutcome) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, o)
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithIdempotencyOutcome(report)))})
	if _, err := call(withKey("md"), conn, "Pay", order("1", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	key, _ := storedRecord(t, node)
	body, err := proto.Marshal(order("", "", 7, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	bad := []idempotency.HeaderField{
		{Name: "x evil", Value: "v"},
		{Name: "x-evil\r\nset-cookie", Value: "v"},
		{Name: ":status", Value: "200"},
		{Name: "x-value", Value: "a\r\nb"},
		{Name: "x-value", Value: "caf\xc3\xa9"},
	}
	for _, trailer := range []bool{false, true} {
		for _, f := range bad {
			sr := idempotency.StoredResponse{Status: int(codes.OK), Body: body}
			if trailer {
				sr.Trailer = []idempotency.HeaderField{f}
			} else {
				sr.Header = []idempotency.HeaderField{f}
			}
			node.Do(t, "HSET", key, "resp", string(sr.Encode()))
			var hdr metadata.MD
			_, err := call(withKey("md"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr))
			if status.Code(err) != codes.Internal || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 0 {
				t.Errorf("record with %s %q: %q: %v %v, want Internal without a replay", map[bool]string{false: "header", true: "trailer"}[trailer], f.Name, f.Value, err, hdr)
			}
		}
	}
	// Binary metadata holds any bytes.
	sr := idempotency.StoredResponse{Status: int(codes.OK), Body: body, Header: []idempotency.HeaderField{{Name: "x-data-bin", Value: "\x00\r\n\xff"}}}
	node.Do(t, "HSET", key, "resp", string(sr.Encode()))
	var hdr metadata.MD
	if _, err := call(withKey("md"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr)); err != nil || hdr.Get("x-data-bin")[0] != "\x00\r\n\xff" {
		t.Errorf("record with binary metadata: %v %v, want it replayed", err, hdr)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted}
	for range 2 * len(bad) {
		want = append(want, scriptlock.RequestRedisDown)
	}
	want = append(want, scriptlock.RequestReplayed)
	if !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}

// TestIdempotencyStoredMetadataSendable: metadata a handler set that gRPC may
// not send (a non-ASCII value under a key without "-bin", which the unary
// transport passes unchecked) is not stored, so the record stays one a
// replay accepts: the duplicate gets the replay with the rest.
func TestIdempotencyStoredMetadataSendable(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		_ = grpc.SetHeader(ctx, metadata.MD{"x-ok": {"v"}, "x-bad": {"caf\xc3\xa9"}})
		return order("", "", 7, "ok"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	if _, err := call(withKey("sendable"), conn, "Pay", order("1", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	var hdr metadata.MD
	if _, err := call(withKey("sendable"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr)); err != nil ||
		len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 1 || !slices.Equal(hdr.Get("x-ok"), []string{"v"}) {
		t.Errorf("duplicate: %v %v, want the replay with x-ok", err, hdr)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
}
