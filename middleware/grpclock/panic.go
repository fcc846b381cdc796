package grpclock

import (
	"reflect"
	"sync"

	"google.golang.org/grpc"
)

// carriedKey is the context key under which a locked stream's context
// answers its carriedPanics.
type carriedKey struct{}

// carriedLimit bounds the panics a carriedPanics remembers.
const carriedLimit = 8

// carriedPanics are the panics a locked stream carried on from its call's
// goroutine to its caller's, each logged there with the stack where it was
// raised: a grpclock stream wrapping it (a second lock on the stream),
// whose own goroutine recovers such a panic again, does not log it a
// second time with a stack naming only the hand-off beneath.
type carriedPanics struct {
	// scope: the call's StreamServerInfo, which the interceptors of its
	// chain share, to tell a stream of the same call from another's.
	scope *grpc.StreamServerInfo
	mu    sync.Mutex
	vs    []any
}

// add remembers v, about to be carried on.
func (c *carriedPanics) add(v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.vs) == carriedLimit {
		c.vs = c.vs[1:]
	}
	c.vs = append(c.vs, v)
}

// take reports whether v was carried on, and forgets it.
func (c *carriedPanics) take(v any) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range c.vs {
		if samePanic(k, v) {
			c.vs = append(c.vs[:i], c.vs[i+1:]...)
			return true
		}
	}
	return false
}

// samePanic reports whether a and b are the same panic value. Values of a
// type == cannot compare (a slice, a map: an error gathering several) are
// compared deeply: the one carried on is the very one recovered again, so
// that they are equal even then, and such a panic is logged once too.
func samePanic(a, b any) (same bool) {
	defer func() {
		if recover() != nil {
			same = reflect.DeepEqual(a, b)
		}
	}()
	return a == b
}
