package grpclock_test

import (
	"context"
	"sync/atomic"
	"testing"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestIdempotencyRecordStatusCodeMalformed: a stored error outcome whose
// status holds another code than the record (OK in a record of an error,
// whose replay would answer nothing at all; or the record an HTTP front end
// stored in a shared store, status 201 with its body) is malformed:
// Internal without a replay, and the call does not run again.
func TestIdempotencyRecordStatusCodeMalformed(t *testing.T) {
	t.Parallel()
	store, node := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return order("", "", 7, "ok"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	if _, err := call(withKey("k"), conn, "Pay", order("1", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	key, _ := storedRecord(t, node)
	okStatus, err := proto.Marshal(&spb.Status{Code: int32(codes.OK), Message: "fine"})
	if err != nil {
		t.Fatal(err)
	}
	notFound, err := proto.Marshal(&spb.Status{Code: int32(codes.NotFound), Message: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sr   idempotency.StoredResponse
	}{
		{"OK inside an error record", idempotency.StoredResponse{Status: int(codes.Internal), Body: okStatus}},
		{"another code", idempotency.StoredResponse{Status: int(codes.Aborted), Body: notFound}},
		{"an HTTP status", idempotency.StoredResponse{Status: 201, Body: []byte{}}},
	} {
		node.Do(t, "HSET", key, "resp", string(c.sr.Encode()))
		var hdr metadata.MD
		resp, err := call(withKey("k"), conn, "Pay", order("1", "", 0, ""), grpc.Header(&hdr))
		if status.Code(err) != codes.Internal || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 0 {
			t.Errorf("%s: %v, %v %v; want Internal without a replay", c.name, resp, err, hdr)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
}
