// Package exampleredis starts redis-servers for Example functions, which,
// unlike tests, have no *testing.T to start one with. A package's TestMain
// calls Main; its examples read the addresses with Addrs.
package exampleredis

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

	"github.com/scriptlock/scriptlock/internal/portclaim"
)

// env holds the addresses, comma-separated, for the examples of this process.
const env = "SCRIPTLOCK_EXAMPLE_REDIS"

// Main starts n redis-servers on free loopback ports, runs m's tests and
// examples, stops the servers (by their pids), then fails the run if a
// goroutine leaked (goleak, with leakOpts), and exits.
func Main(m *testing.M, n int, leakOpts ...goleak.Option) {
	var addrs []string
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	for range n {
		addr, stop, err := start()
		if err != nil {
			stopAll()
			fmt.Fprintln(os.Stderr, "exampleredis:", err)
			os.Exit(1)
		}
		addrs, stops = append(addrs, addr), append(stops, stop)
	}
	os.Setenv(env, strings.Join(addrs, ","))
	code := m.Run()
	stopAll()
	if code == 0 {
		if err := goleak.Find(leakOpts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Addrs returns the addresses of the servers Main started.
func Addrs() []string { return strings.Split(os.Getenv(env), ",") }

// start starts one redis-server without persistence and returns its
// address and the function that stops it.
func start() (addr string, stop func(), err error) {
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
		// Claimed, not only free: a port another test process's killed
		// server left must not answer as this one.
		claim, err := portclaim.Free()
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		port := claim.Port
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--loglevel", "warning")
		cmd.SysProcAttr = sysProcAttr()
		if err := cmd.Start(); err != nil {
			claim.Release()
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
			claim.Release()
			os.RemoveAll(dir)
		}
		addr = "127.0.0.1:" + strconv.Itoa(port)
		if lastErr = waitPing(addr, exited); lastErr == nil {
			return addr, stop, nil
		}
		_ = cmd.Process.Kill()
		<-exited
		claim.Release()
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
