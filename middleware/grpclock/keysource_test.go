package grpclock_test

import (
	"errors"
	"testing"

	"google.golang.org/grpc"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestEmptyKeySource: a key source that names nothing (Func(nil),
// Metadata(""), Field("") or an empty path element) is refused when the
// interceptor is built and by Validate, instead of answering every call of
// the method InvalidArgument "lock key missing" as if the client had left
// the key out.
func TestEmptyKeySource(t *testing.T) {
	t.Parallel()
	lock := grpclock.LockFunc(func(string) (scriptlock.Locker, error) { return nil, errors.New("unused") })
	srv := grpc.NewServer()
	srv.RegisterService(&serviceDesc, &server{})
	for name, src := range map[string]grpclock.KeySource{
		"Func(nil)":    grpclock.Func(nil),
		`Metadata("")`: grpclock.Metadata(""),
		`Field("")`:    grpclock.Field(""),
		`Field("a..")`: grpclock.Field("order.."),
		"zero":         {},
	} {
		for _, opt := range []grpclock.Option{grpclock.WithMethod(svc+"Pay", src), grpclock.WithAllMethods(src)} {
			for kind, build := range map[string]func(){
				"unary":  func() { grpclock.UnaryServerInterceptor(lock, opt) },
				"stream": func() { grpclock.StreamServerInterceptor(lock, opt) },
			} {
				if p := panics(build); p == nil {
					t.Errorf("%s interceptor with key source %s: built", kind, name)
				}
			}
			if err := grpclock.Validate(srv, opt); !errors.Is(err, grpclock.ErrConfig) {
				t.Errorf("Validate with key source %s: %v, want ErrConfig", name, err)
			}
		}
	}
}

func panics(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// TestMetadataKeySourceInvalidName: a Metadata key source whose name is no
// metadata key (a space, a colon other than :authority's) can be carried by
// no call, so every call would be answered "lock key missing". It is refused
// as an empty one is.
func TestMetadataKeySourceInvalidName(t *testing.T) {
	t.Parallel()
	lock := grpclock.LockFunc(func(string) (scriptlock.Locker, error) { return nil, errors.New("unused") })
	srv := grpc.NewServer()
	srv.RegisterService(&serviceDesc, &server{})
	for _, name := range []string{"x order id", "x-order-id:", "x-order-id\n", "ключ"} {
		opt := grpclock.WithMethod(svc+"Refund", grpclock.Metadata(name))
		if p := panics(func() { grpclock.UnaryServerInterceptor(lock, opt) }); p == nil {
			t.Errorf("unary interceptor with Metadata(%q): built", name)
		}
		if p := panics(func() { grpclock.StreamServerInterceptor(lock, opt) }); p == nil {
			t.Errorf("stream interceptor with Metadata(%q): built", name)
		}
		if err := grpclock.Validate(srv, opt); !errors.Is(err, grpclock.ErrConfig) {
			t.Errorf("Validate with Metadata(%q): %v, want ErrConfig", name, err)
		}
	}
	for _, name := range []string{"X-Order-Id", "x_order.id", ":authority", "x-order-bin"} {
		opt := grpclock.WithMethod(svc+"Refund", grpclock.Metadata(name))
		if p := panics(func() { grpclock.UnaryServerInterceptor(lock, opt) }); p != nil {
			t.Errorf("Metadata(%q) refused: %v", name, p)
		}
		if err := grpclock.Validate(srv, opt); err != nil {
			t.Errorf("Validate with Metadata(%q): %v", name, err)
		}
	}
}
