package echolock_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestLockLostAfterHijack: a handler that took the connection over (a
// WebSocket upgrade) has answered on it: a lock lost afterwards ends its
// context, and the middleware then returns what the handler returned, not
// a 503 that Echo would try to write on the connection it no longer owns.
func TestLockLostAfterHijack(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	got := make(chan error, 1)
	e := echo.New()
	e.GET("/ws/:id", func(c echo.Context) error {
		conn, buf, err := http.NewResponseController(c.Response()).Hijack()
		if err != nil {
			return err
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n")
		_ = buf.Flush()
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
		<-c.Request().Context().Done() // the lock is lost
		return nil
	}, func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			got <- err
			return err
		}
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	srv := serve(t, e)

	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("GET /ws/1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("middleware returned %v after the handler answered on its hijacked connection, want the handler's nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler did not see the loss")
	}
}
