package scriptlock

import (
	"testing"
	"time"
)

// Close while a waiter's SUBSCRIBE is on its way (sent, not yet confirmed)
// must not leave the subscription on the server: rueidis keeps the
// connection, so the server would go on sending that channel's messages to
// a Client that is gone.
func TestCloseBeforeSubscribeConfirmed(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	defer func() { p.c.subs.testHookReceive = nil }()
	l := mustLatch(t, p.c, "close-unconfirmed")
	if _, err := l.TrySetCount(testCtx(t, 5*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	p.c.subs.testHookReceive = func(channel string) {
		if channel == l.channel {
			p.px.FreezeReplies() // the SUBSCRIBE reaches the server, its reply does not come back
		}
	}
	waited := make(chan error, 1)
	go func() { waited <- l.Await(testCtx(t, 10*time.Second)) }()
	if !eventually(3*time.Second, func() bool { return subscribers(t, p.node, false, l.channel) == 1 }) {
		p.px.Thaw()
		t.Fatal("waiter not subscribed on the server")
	}
	closed := make(chan struct{})
	go func() { p.c.Close(); close(closed) }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		p.px.Thaw()
		t.Fatal("Await did not end after Close")
	}
	p.px.Thaw()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if !eventually(2*time.Second, func() bool { return subscribers(t, p.node, false, l.channel) == 0 }) {
		t.Fatalf("%d subscribed to %s 2s after Close", subscribers(t, p.node, false, l.channel), l.channel)
	}
}
