package grpclock

import (
	"fmt"
	"runtime/debug"
)

// StreamPanic is the value a stream's SendMsg or RecvMsg panics with, on the
// handler's goroutine, when the call beneath it (an outer interceptor's
// stream wrapper, a codec) panicked while the stream's lock was held. That
// call runs on a goroutine of its own, so that it returns at the lock's
// loss: a recovery interceptor's debug.Stack() would name only grpclock's
// hand-off, and Stack is the panicking goroutine's stack instead, taken
// where the panic was recovered. It prints as Value does (Error), and
// errors.Is and errors.As see Value when it is an error. A panic of the
// handler itself, or of a call made without the lock, is not wrapped.
type StreamPanic struct {
	Value any    // the value the call panicked with
	Stack []byte // the stack of the goroutine that panicked (debug.Stack)
}

func (p *StreamPanic) Error() string { return fmt.Sprint(p.Value) }

// Unwrap returns Value if it is an error, else nil.
func (p *StreamPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// newStreamPanic wraps v, recovered on the current goroutine, with its
// stack. A StreamPanic already (an inner grpclock stream's, carried on)
// is kept as it is: its stack is the original one.
func newStreamPanic(v any) *StreamPanic {
	if p, ok := v.(*StreamPanic); ok && p != nil {
		return p
	}
	return &StreamPanic{Value: v, Stack: debug.Stack()}
}
