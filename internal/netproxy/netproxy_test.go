package netproxy

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// A connection the proxy accepted before Refuse, and registered after its
// DropAll (Refuse came while the proxy dialed the target), is closed too:
// it lived on and forwarded, so a client's reconnect that raced Refuse
// reached the server, or hung with its replies frozen.
func TestRefuseWhileDialingTarget(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	go func() { // an echo server
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	proxy, refused := make(chan *Proxy, 1), make(chan struct{})
	testHookDialed = func() {
		(<-proxy).Refuse()
		close(refused)
	}
	defer func() { testHookDialed = nil }()
	p := New(t, target.Addr().String())
	proxy <- p
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-refused
	_, _ = c.Write([]byte("PING\r\n"))
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	if errors.Is(err, os.ErrDeadlineExceeded) || n > 0 {
		t.Fatalf("a connection accepted as Refuse began is still open after it: read %q, %v", buf[:n], err)
	}
}

// Close also closes a connection it found still being set up (the target
// dialed for it as Close began), registered after Close dropped the open
// ones: its two pipes lived on, and Close waited for them as long as the
// client kept its side open, hanging the test's cleanup.
func TestCloseWhileDialingTarget(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	go func() { // an echo server
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	proxy, closed := make(chan *Proxy, 1), make(chan struct{})
	testHookDialed = func() {
		p := <-proxy
		go func() { p.Close(); close(closed) }()
		time.Sleep(100 * time.Millisecond) // Close has dropped what was registered
	}
	defer func() { testHookDialed = nil }()
	p := New(t, target.Addr().String())
	proxy <- p
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not return: a connection accepted as it began is still forwarded")
	}
}

// A request CutHeld holds back reaches the server at Thaw also when a reply
// to an earlier one is held back on the same connection: that reply, which
// fails to reach the client cut off, closed the server's side as well, often
// before the request was written.
func TestCutHeldRequestBesidePendingReply(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	got := make(chan string, 16)
	go func() { // answers "first" late, and reports what it reads
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						got <- string(buf[:n])
						if string(buf[:n]) == "first" {
							go func() { time.Sleep(200 * time.Millisecond); _, _ = c.Write([]byte("reply")) }()
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	p := New(t, target.Addr().String())
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.HoldOn("held")
	if _, err := c.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m != "first" {
		t.Fatalf("the server read %q, want first", m)
	}
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	for !p.HeldOn() {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the reply is held back too
	p.CutHeld()
	p.Thaw()
	select {
	case m := <-got:
		if m != "held" {
			t.Fatalf("the server read %q, want held", m)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the request held back never reached the server")
	}
}
