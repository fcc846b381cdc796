package grpclock

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// ServiceInfoProvider is what Validate needs of a server: *grpc.Server
// implements it.
type ServiceInfoProvider interface {
	GetServiceInfo() map[string]grpc.ServiceInfo
}

// ErrConfig is wrapped by the errors of Validate and ValidateIdempotency.
var ErrConfig = errors.New("grpclock: configuration does not match the server")

// Validate checks the options of the lock interceptors against the services
// registered on srv, so that a typo fails startup instead of leaving a method
// unlocked or failing every call: each WithMethod names a registered method,
// and each Field path exists in that method's request message (found through
// the service descriptors in protoregistry.GlobalFiles, where generated code
// registers them) and ends in a string or integer field; WithAllMethods with a
// Field is checked against every registered method. Call it after registering
// the services and before Serve:
//
//	opts := []grpclock.Option{grpclock.WithMethod(pb.Orders_Pay_FullMethodName, grpclock.Field("order_id"))}
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(grpclock.UnaryServerInterceptor(locks, opts...)))
//	pb.RegisterOrdersServer(srv, impl)
//	if err := grpclock.Validate(srv, opts...); err != nil {
//		log.Fatal(err)
//	}
func Validate(srv ServiceInfoProvider, opts ...Option) error {
	o := evaluateOptions(opts)
	infos := srv.GetServiceInfo()
	var errs []error
	for _, m := range slices.Sorted(maps.Keys(o.methods)) {
		if _, err := lookupMethod(infos, m); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := checkSource(m, o.methods[m]); err != nil {
			errs = append(errs, err)
		}
	}
	if o.all != nil && o.all.check() != nil {
		errs = append(errs, fmt.Errorf("all methods: %w", o.all.check()))
	} else if o.all != nil && !o.all.fromMetadataOrFunc() {
		for _, m := range allMethods(infos) {
			if _, ok := o.methods[m]; !ok {
				if err := checkSource(m, *o.all); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return joinConfig(errs)
}

// ValidateIdempotency checks the options of the idempotency interceptor
// against srv: each WithIdempotentMethods entry names a registered unary
// method (the interceptor covers unary calls only), and each
// WithFingerprintMetadata key is a metadata key.
func ValidateIdempotency(srv ServiceInfoProvider, opts ...IdempotencyOption) error {
	o := evaluateIdem(opts)
	infos := srv.GetServiceInfo()
	var errs []error
	if err := o.check(); err != nil {
		errs = append(errs, err)
	}
	for _, m := range slices.Sorted(maps.Keys(o.methods)) {
		mi, err := lookupMethod(infos, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if mi.IsClientStream || mi.IsServerStream {
			errs = append(errs, fmt.Errorf("idempotent method %s is a streaming method; idempotency covers unary methods", m))
		}
	}
	return joinConfig(errs)
}

func joinConfig(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
}

func (s KeySource) fromMetadataOrFunc() bool { return s.metadata != "" || s.fn != nil }

func allMethods(infos map[string]grpc.ServiceInfo) []string {
	var out []string
	for svc, info := range infos {
		for _, m := range info.Methods {
			out = append(out, "/"+svc+"/"+m.Name)
		}
	}
	slices.Sort(out)
	return out
}

// splitMethod splits a full method name "/package.Service/Method", the form
// gRPC hands interceptors; any other never matches a call.
func splitMethod(full string) (svc, name string, err error) {
	svc, name, ok := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	if !ok || !strings.HasPrefix(full, "/") || svc == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("method %q is not a full method name (/package.Service/Method)", full)
	}
	return svc, name, nil
}

func lookupMethod(infos map[string]grpc.ServiceInfo, full string) (grpc.MethodInfo, error) {
	svc, name, err := splitMethod(full)
	if err != nil {
		return grpc.MethodInfo{}, err
	}
	if info, ok := infos[svc]; ok {
		for _, m := range info.Methods {
			if m.Name == name {
				return m, nil
			}
		}
	}
	return grpc.MethodInfo{}, fmt.Errorf("method %s is not registered on the server (registered: %s)", full, strings.Join(allMethods(infos), ", "))
}

// checkSource checks that a Field source fits method's request message.
func checkSource(method string, src KeySource) error {
	if err := src.check(); err != nil {
		return fmt.Errorf("method %s: %w", method, err)
	}
	if src.fromMetadataOrFunc() {
		return nil
	}
	svc, name, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if err != nil || !ok {
		return fmt.Errorf("method %s: service descriptor %s not registered in protoregistry.GlobalFiles, so Field(%q) cannot be checked", method, svc, strings.Join(src.field, "."))
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		return fmt.Errorf("method %s: not in the descriptor of %s", method, svc)
	}
	m := md.Input()
	for i, p := range src.field {
		fields := m.Fields()
		fd := fields.ByName(protoreflect.Name(p))
		if fd == nil {
			fd = fields.ByJSONName(p)
		}
		switch {
		case fd == nil:
			return fmt.Errorf("method %s: %s has no field %q", method, m.FullName(), p)
		case fd.IsList() || fd.IsMap():
			return fmt.Errorf("method %s: field %s is repeated", method, fd.FullName())
		case i < len(src.field)-1:
			if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
				return fmt.Errorf("method %s: field %s is not a message", method, fd.FullName())
			}
			m = fd.Message()
		case !keyKind(fd.Kind()):
			return fmt.Errorf("method %s: field %s is a %s, not a string or integer", method, fd.FullName(), fd.Kind())
		}
	}
	return nil
}

func keyKind(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.StringKind,
		protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return true
	}
	return false
}
