package scriptlock

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// exampleRedisEnv holds the addresses, comma-separated, of the redis-servers
// the Example functions run against (the RedLock example needs three
// independent ones); TestMain starts them.
const exampleRedisEnv = "SCRIPTLOCK_EXAMPLE_REDIS"

// Every Client a test creates is closed at its end, and Close must stop every
// goroutine the Client started: watchdog, subscriptions, guard refreshes.
func TestMain(m *testing.M) {
	var addrs []string
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	for range 3 {
		addr, stop, err := startExampleRedis()
		if err != nil {
			stopAll()
			fmt.Fprintln(os.Stderr, "examples:", err)
			os.Exit(1)
		}
		addrs, stops = append(addrs, addr), append(stops, stop)
	}
	os.Setenv(exampleRedisEnv, strings.Join(addrs, ","))
	code := m.Run()
	stopAll()
	if code == 0 {
		if err := goleak.Find(append(redistest.LeakOptions(),
			// The harness reaps restarted servers from a goroutine of its own.
			goleak.IgnoreAnyFunction("github.com/scriptlock/scriptlock/internal/redistest.(*Node).startOnce.func1"),
		)...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// startExampleRedis starts a redis-server on a free loopback port for the
// Example functions (which have no *testing.T to start one with) and
// returns the function that stops it, by its pid.
func startExampleRedis() (addr string, stop func(), err error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, errors.New("redis-server not found in PATH: run `make test` (installs it with apt-get as root) or `sudo apt-get install -y redis-server`")
	}
	dir, err := os.MkdirTemp("", "scriptlock-examples-")
	if err != nil {
		return "", nil, err
	}
	var lastErr error
	for range 5 { // another process may take the free port before the server binds it
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--loglevel", "warning")
		if err := cmd.Start(); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop = func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
			os.RemoveAll(dir)
		}
		addr = "127.0.0.1:" + strconv.Itoa(port)
		if lastErr = waitPing(addr, exited); lastErr == nil {
			return addr, stop, nil
		}
		_ = cmd.Process.Kill()
		<-exited
	}
	os.RemoveAll(dir)
	return "", nil, fmt.Errorf("redis-server for the examples did not start: %w", lastErr)
}

// waitPing waits until the server answers PING. It speaks RESP on a plain
// connection: a rueidis client dialled before the server listens keeps a
// reconnection timer running after Close, which goleak would report.
func waitPing(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(15 * time.Second) // generous: -race builds on loaded cores
	for {
		err := ping(addr)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("redis-server exited")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on %s: %w", addr, err)
		}
	}
}

func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(conn, buf); err != nil {
		return err
	}
	if string(buf) != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", buf)
	}
	return nil
}
