// Package netproxy is a loopback TCP proxy for fault tests: it forwards to a
// target address and can freeze all traffic (a network partition as the
// client sees it, without stopping the server), slow it down (Delay) and drop
// every connection.
package netproxy

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/portclaim"
)

// Proxy forwards connections from Addr to a target.
type Proxy struct {
	Addr   string
	target string
	ln     net.Listener

	mu     sync.Mutex
	cond   *sync.Cond
	frozen bool
	// replies held back: requests reach the server, answers do not
	repliesFrozen bool
	held          map[net.Conn]bool // connections HoldOpen holds back
	refusing      bool              // Refuse: new connections are closed at once
	closed        bool              // Close: a connection accepted is closed, not forwarded
	delay         time.Duration     // Delay: how long each chunk is held back
	holdOn        []byte            // HoldOn: the request bytes that hold their connection
	heldOn        bool              // HoldOn's bytes came and hold their connection
	conns         map[net.Conn]struct{}
	clients       map[net.Conn]bool // the client's side of each connection
	cut           map[net.Conn]bool // client sides CutHeld closed
	wg            sync.WaitGroup
}

// New starts a proxy on a free loopback port; it is closed at test end.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, claim, err := listen()
	if err != nil {
		t.Fatalf("netproxy: listen: %v", err)
	}
	// Held past Close, to the test's end: a test closes a proxy to take its
	// node away, and another process's server on the port would answer.
	t.Cleanup(claim.Release)
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}, clients: map[net.Conn]bool{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// listen listens on a free loopback port that no test process has claimed
// (portclaim), and claims it.
func listen() (net.Listener, *portclaim.Claim, error) {
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		c, err := portclaim.Take(ln.Addr().(*net.TCPAddr).Port)
		if err == nil {
			return ln, c, nil
		}
		ln.Close()
		if !errors.Is(err, portclaim.ErrClaimed) {
			return nil, nil, err
		}
	}
	return nil, nil, errors.New("no unclaimed loopback port found")
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refusing := p.refusing
		p.mu.Unlock()
		if refusing {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if testHookDialed != nil {
			testHookDialed()
		}
		p.mu.Lock()
		if p.refusing || p.closed {
			// Refuse or Close came while the target was dialed: its
			// DropAll did not see this connection, which would live on
			// (and Close would wait for its pipes).
			p.mu.Unlock()
			c.Close()
			s.Close()
			continue
		}
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.clients[c] = true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c, false)
		go p.pipe(c, s, true)
	}
}

// testHookDialed, when set (by tests only), runs once a connection accepted
// has its own to the target.
var testHookDialed func()

// pipe copies src to dst, holding data back while the proxy is frozen (or,
// for the server's replies, while replies are frozen), and each chunk for
// the delay (Delay) in force when it was read.
func (p *Proxy) pipe(dst, src net.Conn, replies bool) {
	defer p.wg.Done()
	q, done := make(chan chunk, 256), make(chan struct{})
	go p.write(dst, src, replies, q, done)
	defer func() {
		close(q)
		<-done
		dst.Close()
		src.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if !replies && p.holdOn != nil && bytes.Contains(buf[:n], p.holdOn) {
				if p.held == nil {
					p.held = map[net.Conn]bool{}
				}
				p.held[src], p.holdOn, p.heldOn = true, nil, true
			}
			p.waitFlowing(dst, src, replies)
			_, open := p.conns[dst]
			at := time.Now().Add(p.delay)
			p.mu.Unlock()
			if !open {
				return
			}
			q <- chunk{b: bytes.Clone(buf[:n]), at: at}
		}
		if err != nil {
			return
		}
	}
}

// chunk is data read from one side, to be written to the other at 'at'.
type chunk struct {
	b  []byte
	at time.Time
}

// write writes the chunks of q to dst, each at its time, until q is closed;
// a write that fails closes both sides, which ends the reading pipe.
func (p *Proxy) write(dst, src net.Conn, replies bool, q <-chan chunk, done chan<- struct{}) {
	defer close(done)
	failed := false
	for c := range q {
		if failed {
			continue
		}
		if d := time.Until(c.at); d > 0 {
			time.Sleep(d)
		}
		p.mu.Lock()
		// Frozen while the chunk was delayed: held back too.
		p.waitFlowing(dst, src, replies)
		_, open := p.conns[dst]
		p.mu.Unlock()
		if !open {
			failed = true
			dst.Close()
			src.Close()
			continue
		}
		if _, err := dst.Write(c.b); err != nil {
			failed = true
			p.mu.Lock()
			cut := p.cut[dst]
			p.mu.Unlock()
			if cut {
				// A reply held back for a client CutHeld cut off: the
				// requests held with it still go to the server, and their
				// pipe closes the server's side once they are written.
				continue
			}
			dst.Close()
			src.Close()
		}
	}
}

// waitFlowing waits, with p.mu held, until traffic from src to dst may flow.
func (p *Proxy) waitFlowing(dst, src net.Conn, replies bool) {
	for p.frozen || (replies && p.repliesFrozen) || p.held[src] || p.held[dst] {
		p.cond.Wait()
	}
}

// Delay holds back every chunk of data read from now on, in either
// direction, for d before it is forwarded (0: none), in order: a slow link,
// each round trip taking 2d more. Data read before keeps its own delay.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Freeze holds back all traffic in both directions until Thaw.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// FreezeReplies lets requests through to the server but holds back its
// replies until Thaw: a command runs, and its caller never hears back (with
// DropAll, the reply is lost for good).
func (p *Proxy) FreezeReplies() {
	p.mu.Lock()
	p.repliesFrozen = true
	p.mu.Unlock()
}

// HoldOpen holds back the traffic of the connections open now, in both
// directions, until Thaw, while connections opened later flow: a request
// written on a connection its client then gives up on reaches the server
// after the client's later requests on a new connection.
func (p *Proxy) HoldOpen() {
	p.mu.Lock()
	p.held = map[net.Conn]bool{}
	for c := range p.conns {
		p.held[c] = true
	}
	p.mu.Unlock()
}

// HoldOn holds back, as HoldOpen does, the first connection that carries a
// request containing b (from that request on), until Thaw: that one call
// hangs, and reaches the server after its client's later calls on other
// connections.
func (p *Proxy) HoldOn(b string) {
	p.mu.Lock()
	p.holdOn, p.heldOn = []byte(b), false
	p.mu.Unlock()
}

// HeldOn reports whether the request HoldOn waits for came (and its
// connection is held back until Thaw).
func (p *Proxy) HeldOn() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.heldOn
}

// Refuse drops every open connection and closes new ones as soon as they
// are accepted, until Thaw: the server is down as the client sees it, and
// every reconnection fails at once (Freeze would hold its handshake).
func (p *Proxy) Refuse() {
	p.mu.Lock()
	p.refusing = true
	p.mu.Unlock()
	p.DropAll()
}

// CutHeld closes the client's side of the connections held back (HoldOpen,
// HoldOn): the client sees its connection break under its call, while the
// request the proxy holds back still reaches the server at Thaw, after
// the client's later requests on other connections.
func (p *Proxy) CutHeld() {
	p.mu.Lock()
	for c := range p.held {
		if p.clients[c] {
			if p.cut == nil {
				p.cut = map[net.Conn]bool{}
			}
			p.cut[c] = true
			c.Close()
		}
	}
	p.mu.Unlock()
}

// Thaw lets traffic flow again.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	p.frozen, p.repliesFrozen, p.held, p.refusing, p.holdOn = false, false, nil, false, nil
	p.cond.Broadcast()
	p.mu.Unlock()
}

// DropAll closes every open connection (new ones are still accepted).
func (p *Proxy) DropAll() {
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	clear(p.clients)
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	p.frozen, p.repliesFrozen, p.held = false, false, nil
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// Client returns a rueidis client that reaches the target through the proxy
// on one connection, opened here (closed at test end): a connection rueidis
// opened lazily while the proxy is frozen would stall in its handshake, not
// in the call under test.
func (p *Proxy) Client(t testing.TB) rueidis.Client {
	t.Helper()
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{p.Addr}, DisableCache: true, PipelineMultiplex: -1})
	if err != nil {
		t.Fatalf("netproxy: client: %v", err)
	}
	t.Cleanup(rc.Close)
	return rc
}
