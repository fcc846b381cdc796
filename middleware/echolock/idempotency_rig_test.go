package echolock_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// plainStore is an idempotency store with opts on a server of its own,
// with no scriptlock Client beside it, closed at test end.
func plainStore(t *testing.T, opts ...idempotency.Option) *idempotency.Store {
	t.Helper()
	node := redistest.Server(t)
	store, err := idempotency.NewStore(node.Client(t), append([]idempotency.Option{idempotency.WithPrefix(redistest.Prefix(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	return store
}

// waitReturned waits up to d for a handler to say it returned on returned;
// failing that, the test fails with msg.
func waitReturned(t *testing.T, returned <-chan struct{}, d time.Duration, msg string) {
	t.Helper()
	select {
	case <-returned:
	case <-time.After(d):
		t.Fatal(msg)
	}
}

// leaveMidStream posts to path with key, reads the first line of the
// streamed answer, and goes away.
func leaveMidStream(t *testing.T, srv *httptest.Server, path, key string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(echolock.HeaderIdempotencyKey, key)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel() // the client goes away mid-stream
	resp.Body.Close()
}

// leaveWhen posts to path with key under ctx, and cancels it (the client
// goes away) once when says so, or after 5 s: the request must fail.
func leaveWhen(t *testing.T, ctx context.Context, cancel context.CancelFunc, srv *httptest.Server, path, key string, when <-chan struct{}) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(echolock.HeaderIdempotencyKey, key)
	go func() {
		select {
		case <-when:
		case <-time.After(5 * time.Second):
		}
		cancel()
	}()
	if _, err := srv.Client().Do(req); err == nil {
		t.Fatal("request not canceled")
	}
}

// readAndLeave sends method to path with key, reads the whole answer and
// closes the connection, as a client that goes once it has its answer:
// the answer's status, body, and the error reading it.
func readAndLeave(t *testing.T, srv *httptest.Server, method, path, key string) (int, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(echolock.HeaderIdempotencyKey, key)
	req.Close = true // the client closes its connection once it has read the answer
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b, err
}
