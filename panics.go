package scriptlock

import (
	"log/slog"
	"runtime/debug"
)

// Whether a call panicked is told by whether the code after it ran, never
// by recover's value: under GODEBUG=panicnil=1 (a program whose go.mod says
// go 1.20 or older, or that sets it) a panic(nil) recovers as nil, and would
// pass for a call that returned. A runtime.Goexit, which recover does not
// stop, is no panic: it goes on ending the goroutine.

// goOnAfter runs f; should f panic, then runs before the panic goes on with
// its value. A panic of a non-nil value goes on from f's frames, still on
// the stack (a crash shows where it was raised); a panic(nil) recovered as
// nil from here. Should f end the goroutine (runtime.Goexit), then runs as
// it unwinds: what then takes over was otherwise left as f left it.
func goOnAfter(f, then func()) {
	returned, ran := false, false
	defer func() {
		if !returned && !ran {
			then() // a Goexit of f: neither returned nor recovered
		}
	}()
	func() {
		defer func() {
			if returned {
				return
			}
			if v := recover(); v != nil {
				ran = true
				then()
				panic(v)
			}
			// A panic(nil) recover stopped (gone on below), or Goexit,
			// which goes on unwinding to the deferred call above.
		}()
		f()
		returned = true
	}()
	if !returned {
		ran = true
		then()
		panic(nil)
	}
}

// catch runs f and reports whether it panicked, with its value and the stack
// where it was recovered (f's frames still on it). A Goexit of f goes on.
func catch(f func()) (v any, stack string, panicked bool) {
	returned := false
	func() {
		defer func() {
			if !returned {
				v, stack = recover(), string(debug.Stack())
			}
		}()
		f()
		returned = true
	}()
	return v, stack, !returned
}

// catchOwn is catch with f run on a goroutine of its own, which the caller
// waits for: a Goexit of f (a client wrapper's, which nothing stops) ends
// that one, not the caller's, and is told (exited). A caller whose
// goroutine must go on to tell the outcome (a count, a renewal round) runs
// the call so.
func catchOwn(f func()) (v any, stack string, panicked, exited bool) {
	done := make(chan struct{})
	exited = true
	go func() {
		defer close(done)
		v, stack, panicked = catch(f)
		exited = false
	}()
	<-done
	return v, stack, panicked, exited
}

// logged is f, background work that no caller waits for, logging its panic
// (even a panic(nil): catch) instead of letting it crash the process.
func logged(log *slog.Logger, what string, f func()) func() {
	return func() {
		if v, stack, panicked := catch(f); panicked {
			log.Error("panic recovered", "in", what, "panic", v, "stack", stack)
		}
	}
}
