package grpclock_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// storedRecord returns the key and encoded response of the one completed
// idempotency record in node.
func storedRecord(t *testing.T, node *redistest.Node) (string, []byte) {
	t.Helper()
	keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	var key string
	var resp []byte
	for _, k := range keys {
		if typ, _ := node.Do(t, "TYPE", k).ToString(); typ != "hash" {
			continue
		}
		if v, err := node.Do(t, "HGET", k, "resp").ToString(); err == nil {
			if key != "" {
				t.Fatalf("two records: %s, %s", key, k)
			}
			key, resp = k, []byte(v)
		}
	}
	if key == "" {
		t.Fatalf("no stored response among %v", keys)
	}
	return key, resp
}

// TestIdempotencyRecordVersions: what a mixed-version fleet sees. A call
// whose handler set no metadata is stored in the format of the versions
// before metadata was stored (version 1, no flags, an empty header list), so
// they replay it. A record from a later version that this one cannot read (an
// unknown version, or an unknown flag that changes the layout) answers
// Unavailable, so the client retries (an instance that reads it replays it)
// and the call never runs twice; one that only adds optional sections after
// those this version knows is replayed without them.
func TestIdempotencyRecordVersions(t *testing.T) {
	t.Parallel()
	store, node := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return order("", "", 7, "ok"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	first, err := call(withKey("v"), conn, "Pay", order("1", "", 0, ""))
	if err != nil {
		t.Fatal(err)
	}
	key, rec := storedRecord(t, node)
	// version 1, flags 0, status OK, no header fields, the message (whose
	// field order proto.Marshal does not fix for a dynamic message).
	var body []byte
	if len(rec) > 5 {
		body = rec[5:]
	}
	old := binary.AppendUvarint([]byte{1, 0, 0, 0}, uint64(len(body)))
	old = append(old, body...)
	got := dynamicpb.NewMessage(orderDesc)
	if !bytes.Equal(rec, old) || proto.Unmarshal(body, got) != nil || !proto.Equal(got, first) {
		t.Errorf("record without metadata: % x, want the earlier format % x holding %v", rec, old, first)
	}

	for _, c := range []struct {
		name   string
		record []byte
		want   codes.Code
	}{
		{"later version", append([]byte{2}, old[1:]...), codes.Unavailable},
		{"unknown layout flag", append([]byte{1, 4}, old[2:]...), codes.Unavailable},
		{"unknown optional section", append(append([]byte{1, 0x10}, old[2:]...), 0xde, 0xad), codes.OK},
		{"optional section after trailers", append(append([]byte{1, 0x12}, old[2:]...), 1, 1, 't', 1, 'v', 0xbe, 0xef), codes.OK},
	} {
		node.Do(t, "HSET", key, "resp", string(c.record))
		r, err := call(withKey("v"), conn, "Pay", order("1", "", 0, ""))
		if status.Code(err) != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		} else if err == nil && !proto.Equal(r, first) {
			t.Errorf("%s: replayed %v, want %v", c.name, r, first)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times for one key", n)
	}
}
