// Package chaos is a process-level fault suite for scriptlock: worker
// processes (cmd-style binaries, not goroutines) lock a Mutex, read a counter
// from a store, and commit an increment fenced by their token, while a
// nemesis pauses workers past their lease (a GC pause), kills waiting
// workers with SIGKILL and restarts them, pauses the Redis server shorter
// and longer than the lease, and kills and restarts it with AOF. The store is an HTTP service in the test process that checks tokens
// (or, to prove the faults bite, does not) and records every write and every
// event the workers report.
//
// Run it with `make chaos` (CHAOS_DURATION, default 2m) for a summary of the
// faults injected and invariants checked; `go test ./internal/chaos` runs one
// short round of every fault.
package chaos

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Event is one thing a worker reported.
type Event struct {
	Worker int
	Kind   string // see the worker's report calls
	Detail string
	At     time.Time
}

// Store is the fenced counter the workers commit to, served over HTTP on a
// loopback port.
type Store struct {
	Addr string

	check bool

	mu       sync.Mutex
	value    int64
	last     int64
	tokens   []int64
	accepted int64
	refused  int64
	lost     int64
	stop     bool
	events   []Event
	hook     func(Event)
	srv      *http.Server
	done     chan struct{}
}

// NewStore starts the store; with check it refuses a write whose token is not
// above the last accepted one. hook, when not nil, sees every event before
// the reporting worker gets its answer, so it can act on the worker at that
// exact point (the nemesis pauses a holder there).
func NewStore(check bool, hook func(Event)) (*Store, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Store{Addr: ln.Addr().String(), check: check, hook: hook, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /read", s.read)
	mux.HandleFunc("POST /write", s.write)
	mux.HandleFunc("POST /event", s.event)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Events returns the workers' reports so far, in arrival order.
func (s *Store) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Close stops the server.
func (s *Store) Close() {
	_ = s.srv.Close()
	<-s.done
}

// Stop tells the workers to exit after their current iteration.
func (s *Store) Stop() {
	s.mu.Lock()
	s.stop = true
	s.mu.Unlock()
}

// Totals is the store's state.
type Totals struct {
	Value, Accepted, Refused, Lost int64
	// Increasing reports whether accepted tokens strictly increased.
	Increasing bool
}

// Totals returns the store's counters.
func (s *Store) Totals() Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := Totals{Value: s.value, Accepted: s.accepted, Refused: s.refused, Lost: s.lost, Increasing: true}
	for i := 1; i < len(s.tokens); i++ {
		if s.tokens[i] <= s.tokens[i-1] {
			t.Increasing = false
		}
	}
	return t
}

func (s *Store) read(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	v, stop := s.value, s.stop
	s.mu.Unlock()
	fmt.Fprintf(w, "%d %v", v, stop)
}

// write commits base+1 under token. A write accepted on top of a value other
// than the one it read overwrote another's increment: a lost update.
func (s *Store) write(w http.ResponseWriter, r *http.Request) {
	token, err1 := strconv.ParseInt(r.FormValue("token"), 10, 64)
	base, err2 := strconv.ParseInt(r.FormValue("base"), 10, 64)
	if err1 != nil || err2 != nil {
		http.Error(w, "bad token or base", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.check && token <= s.last {
		s.refused++
		fmt.Fprint(w, "refused")
		return
	}
	if base != s.value {
		s.lost++
	}
	s.value = base + 1
	s.last = max(s.last, token)
	s.tokens = append(s.tokens, token)
	s.accepted++
	fmt.Fprint(w, "ok")
}

func (s *Store) event(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.FormValue("worker"))
	ev := Event{Worker: id, Kind: r.FormValue("kind"), Detail: r.FormValue("detail"), At: time.Now()}
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
	if s.hook != nil {
		s.hook(ev)
	}
	w.WriteHeader(http.StatusNoContent)
}
