package scriptlock

import (
	"context"
	"log/slog"
)

// unpanickedHandler is the Client's log handler: the user's (WithLogger),
// whose panics it drops with the record. Most of what the Client logs is
// logged on goroutines of its own (the watchdog's rounds, the reporter,
// background undos and counts), where a handler's panic crashed the
// process, or left the work it was logged from half done; and a record a
// call logs must not change its outcome. The panic cannot be logged through
// the handler that panicked.
type unpanickedHandler struct{ h slog.Handler }

func dropPanic() { _ = recover() }

func (u unpanickedHandler) Enabled(ctx context.Context, l slog.Level) (on bool) {
	defer dropPanic()
	return u.h.Enabled(ctx, l)
}

func (u unpanickedHandler) Handle(ctx context.Context, r slog.Record) (err error) {
	defer dropPanic()
	return u.h.Handle(ctx, r)
}

func (u unpanickedHandler) WithAttrs(attrs []slog.Attr) (h slog.Handler) {
	h = u // one that panics there logs without them
	defer dropPanic()
	return unpanickedHandler{u.h.WithAttrs(attrs)}
}

func (u unpanickedHandler) WithGroup(name string) (h slog.Handler) {
	h = u
	defer dropPanic()
	return unpanickedHandler{u.h.WithGroup(name)}
}
