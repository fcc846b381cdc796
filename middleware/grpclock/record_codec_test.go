package grpclock_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// lenientCodec is a codec registered for its own content-subtype that
// sends a string field not valid UTF-8 with each bad byte as U+FFFD, where
// gRPC's proto codec refuses the message.
type lenientCodec struct{}

func (lenientCodec) Name() string { return "grpclocktest-lenient" }

func (lenientCodec) Marshal(v any) ([]byte, error) {
	m := v.(proto.Message)
	if b, err := proto.Marshal(m); err == nil {
		return b, nil
	}
	c := proto.Clone(m)
	r := c.ProtoReflect()
	r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() == protoreflect.StringKind && !fd.IsList() && !fd.IsMap() {
			r.Set(fd, protoreflect.ValueOfString(strings.ToValidUTF8(v.String(), "\uFFFD")))
		}
		return true
	})
	return proto.Marshal(c)
}

func (lenientCodec) Unmarshal(b []byte, v any) error { return proto.Unmarshal(b, v.(proto.Message)) }

func init() { encoding.RegisterCodec(lenientCodec{}) }

// TestIdempotencyResponseCallCodec: whether gRPC can send a response is
// decided with the codec the call is answered with, the one registered for
// its content-subtype. A response the proto codec refuses but that codec
// sends reaches the client as OK: the call ran and answered, and its retry
// must not run it again. It was taken for the Internal the proto codec
// would have answered, the key released, and the retry ran the call again.
func TestIdempotencyResponseCallCodec(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return order("", "", 0, "charged \xff"+field(r, "note").String()), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	sub := grpc.CallContentSubtype(lenientCodec{}.Name())
	first, err := call(withKey("k"), conn, "Pay", order("1", "", 0, "a"), sub)
	if err != nil || field(first, "note").String() != "charged \uFFFDa" {
		t.Fatalf("first call: %v, %v; want OK, as the call's codec sends the response", first, err)
	}
	_, err = call(withKey("k"), conn, "Pay", order("1", "", 0, "a"), sub)
	if runs.Load() != 1 {
		t.Fatalf("retry: %v, handler ran %d times; want it run once: the first call was answered OK", err, runs.Load())
	}
	// The proto codec cannot store it: the key is marked used, as for a
	// response over WithMaxStoredResponse.
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("retry: %v; want AlreadyExists, the response not stored", err)
	}
}
