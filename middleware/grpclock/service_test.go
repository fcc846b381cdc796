package grpclock_test

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The test service is described at run time (no protoc):
//
//	message Inner { string id = 1; }
//	message Order { string order_id = 1; Inner order = 2; int64 num = 3; string note = 4; }
//	service Orders { rpc Pay(Order) returns (Order); rpc PayNested(Order) returns (Order);
//	  rpc Refund(Order) returns (Order); rpc Ping(Order) returns (Order);
//	  rpc Watch(Order) returns (stream Order); rpc Chat(stream Order) returns (stream Order); }
var orderDesc = func() protoreflect.MessageDescriptor {
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("grpclocktest/orders.proto"),
		Package: proto.String("grpclocktest"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Inner"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("id"), JsonName: proto.String("id"), Number: proto.Int32(1), Type: str, Label: opt},
			}},
			{Name: proto.String("Order"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("order_id"), JsonName: proto.String("orderId"), Number: proto.Int32(1), Type: str, Label: opt},
				{Name: proto.String("order"), JsonName: proto.String("order"), Number: proto.Int32(2), Label: opt,
					Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".grpclocktest.Inner")},
				{Name: proto.String("num"), JsonName: proto.String("num"), Number: proto.Int32(3), Label: opt,
					Type: descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()},
				{Name: proto.String("note"), JsonName: proto.String("note"), Number: proto.Int32(4), Type: str, Label: opt},
			}},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("Orders"), Method: []*descriptorpb.MethodDescriptorProto{
			unaryProto("Pay"), unaryProto("PayNested"), unaryProto("Refund"), unaryProto("Ping"),
			{Name: proto.String("Watch"), InputType: proto.String(".grpclocktest.Order"), OutputType: proto.String(".grpclocktest.Order"), ServerStreaming: proto.Bool(true)},
			{Name: proto.String("Chat"), InputType: proto.String(".grpclocktest.Order"), OutputType: proto.String(".grpclocktest.Order"), ClientStreaming: proto.Bool(true), ServerStreaming: proto.Bool(true)},
		}}},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		panic(err)
	}
	// Registered like generated code registers its files, for Validate.
	if err := protoregistry.GlobalFiles.RegisterFile(fd); err != nil {
		panic(err)
	}
	return fd.Messages().ByName("Order")
}()

func unaryProto(name string) *descriptorpb.MethodDescriptorProto {
	return &descriptorpb.MethodDescriptorProto{Name: proto.String(name), InputType: proto.String(".grpclocktest.Order"), OutputType: proto.String(".grpclocktest.Order")}
}

const svc = "/grpclocktest.Orders/"

// order builds an Order; fields: order_id, order.id, num, note ("" = unset).
func order(orderID, innerID string, num int64, note string) *dynamicpb.Message {
	m := dynamicpb.NewMessage(orderDesc)
	f := orderDesc.Fields()
	if orderID != "" {
		m.Set(f.ByName("order_id"), protoreflect.ValueOfString(orderID))
	}
	if innerID != "" {
		in := dynamicpb.NewMessage(f.ByName("order").Message())
		in.Set(in.Descriptor().Fields().ByName("id"), protoreflect.ValueOfString(innerID))
		m.Set(f.ByName("order"), protoreflect.ValueOfMessage(in))
	}
	if num != 0 {
		m.Set(f.ByName("num"), protoreflect.ValueOfInt64(num))
	}
	if note != "" {
		m.Set(f.ByName("note"), protoreflect.ValueOfString(note))
	}
	return m
}

func field(m proto.Message, name string) protoreflect.Value {
	return m.ProtoReflect().Get(orderDesc.Fields().ByName(protoreflect.Name(name)))
}

// handler answers every unary method; stream answers Watch and Chat.
type server struct {
	unary  func(ctx context.Context, method string, req *dynamicpb.Message) (proto.Message, error)
	stream func(stream grpc.ServerStream) error
}

func unaryDesc(name string) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		req := dynamicpb.NewMessage(orderDesc)
		if err := dec(req); err != nil {
			return nil, err
		}
		s := srv.(*server)
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: svc + name}
		h := func(ctx context.Context, req any) (any, error) {
			return s.unary(ctx, info.FullMethod, req.(*dynamicpb.Message))
		}
		if ic == nil {
			return h(ctx, req)
		}
		return ic(ctx, req, info, h)
	}}
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: "grpclocktest.Orders",
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{unaryDesc("Pay"), unaryDesc("PayNested"), unaryDesc("Refund"), unaryDesc("Ping")},
	Streams: []grpc.StreamDesc{{StreamName: "Watch", ServerStreams: true, Handler: func(srv any, stream grpc.ServerStream) error {
		return srv.(*server).stream(stream)
	}}, {StreamName: "Chat", ClientStreams: true, ServerStreams: true, Handler: func(srv any, stream grpc.ServerStream) error {
		return srv.(*server).stream(stream)
	}}},
}

// start serves s over bufconn with opts and returns a client connection.
func start(t testing.TB, s *server, opts []grpc.ServerOption, dialOpts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer(opts...)
	gs.RegisterService(&serviceDesc, s)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet", append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, dialOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func call(ctx context.Context, conn *grpc.ClientConn, method string, req proto.Message, opts ...grpc.CallOption) (*dynamicpb.Message, error) {
	reply := dynamicpb.NewMessage(orderDesc)
	err := conn.Invoke(ctx, svc+method, req, reply, opts...)
	return reply, err
}
