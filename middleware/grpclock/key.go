package grpclock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/scriptlock/scriptlock/middleware/internal/core"
)

// KeySource finds the lock key of a call: Field, Metadata or Func.
type KeySource struct {
	field    []string
	metadata string
	fn       func(ctx context.Context, fullMethod string, req any) (string, error)
}

// fromMessage reports whether the key comes from the request message (for
// streams: the first message received).
func (s KeySource) fromMessage() bool { return s.metadata == "" }

// Field takes the key from the request message's field at path: a proto field
// name ("order_id") or a dotted path through singular message fields
// ("order.id"); JSON names work too. The field must be a string or an
// integer; unset means missing.
func Field(path string) KeySource { return KeySource{field: strings.Split(path, ".")} }

// Metadata takes the key from incoming metadata (e.g. "x-order-id"); the
// host in ":authority" is taken in lower case, without a fully qualified
// name's final dot, an empty port, port 80 or 443 or a port's leading
// zeros, as echolock's "header:Host" is. A
// name that is no metadata key (after lower-casing, only a-z, 0-9, '-', '_'
// and '.', or ":authority") makes the interceptor constructors panic and
// fails Validate: no call could carry it.
func Metadata(name string) KeySource { return KeySource{metadata: strings.ToLower(name)} }

// Func takes the key from f. For streams req is the first message received.
// Returning "" with a nil error means the key is missing. An error that
// wraps the context's error once ctx has ended (the client went away) ends
// the call with the context's code and is reported as canceled; an error
// carrying a gRPC status (status.Error) ends the call with that status, for
// a stream's later message too; any other error is an invalid key
// (InvalidArgument). Both are reported as key_invalid.
func Func(f func(ctx context.Context, fullMethod string, req any) (string, error)) KeySource {
	return KeySource{fn: f}
}

// check reports a key source that names nothing: Func(nil), Metadata(""),
// a Metadata name that is no metadata key, Field("") or a Field path with an
// empty element. Such a source finds no key in any call, so every call would
// be refused as if the client had left the key out.
func (s KeySource) check() error {
	switch {
	case s.fn != nil:
		return nil
	case s.metadata != "":
		if !validMetadataKey(s.metadata) {
			return fmt.Errorf("key source Metadata(%q) is not a metadata key", s.metadata)
		}
		return nil
	case len(s.field) == 0:
		return errors.New("key source names nothing: Func(nil), Metadata(\"\") or a zero KeySource")
	case slices.Contains(s.field, ""):
		return fmt.Errorf("key source Field(%q) has an empty field name", strings.Join(s.field, "."))
	}
	return nil
}

// errConfig marks a key source that does not fit the message (a server bug,
// answered Internal rather than InvalidArgument).
var errConfig = errors.New("grpclock: key source does not fit the request message")

func (s KeySource) key(ctx context.Context, fullMethod string, req any) (string, error) {
	switch {
	case s.fn != nil:
		return s.fn(ctx, fullMethod, req)
	case s.metadata != "":
		md, _ := metadata.FromIncomingContext(ctx)
		vs := md.Get(s.metadata)
		if len(vs) == 0 {
			return "", nil
		}
		for _, v := range vs[1:] {
			if v != vs[0] {
				return "", fmt.Errorf("%w: metadata %s has %d different values", core.ErrKeyInvalid, s.metadata, len(vs))
			}
		}
		if s.metadata == ":authority" {
			// Its spellings of one host take one lock, as echolock's
			// "header:Host" does.
			return core.CanonicalHost(vs[0]), nil
		}
		return vs[0], nil
	default:
		m, ok := req.(proto.Message)
		if !ok {
			return "", fmt.Errorf("%w: %T is not a proto message", errConfig, req)
		}
		return fieldValue(m.ProtoReflect(), s.field)
	}
}

func fieldValue(m protoreflect.Message, path []string) (string, error) {
	for i, name := range path {
		fields := m.Descriptor().Fields()
		fd := fields.ByName(protoreflect.Name(name))
		if fd == nil {
			fd = fields.ByJSONName(name)
		}
		if fd == nil {
			return "", fmt.Errorf("%w: %s has no field %q", errConfig, m.Descriptor().FullName(), name)
		}
		if fd.IsList() || fd.IsMap() {
			return "", fmt.Errorf("%w: field %s is repeated", errConfig, fd.FullName())
		}
		if !m.Has(fd) {
			return "", nil
		}
		v := m.Get(fd)
		if i < len(path)-1 {
			if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
				return "", fmt.Errorf("%w: field %s is not a message", errConfig, fd.FullName())
			}
			m = v.Message()
			continue
		}
		switch fd.Kind() {
		case protoreflect.StringKind:
			return v.String(), nil
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
			protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			return strconv.FormatInt(v.Int(), 10), nil
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			return strconv.FormatUint(v.Uint(), 10), nil
		default:
			return "", fmt.Errorf("%w: field %s is a %s, not a string or integer", errConfig, fd.FullName(), fd.Kind())
		}
	}
	return "", nil
}
