package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// runMainEnv makes the test binary run the service's main instead of the
// tests, so the test below runs the service as its own process, with its
// flags, log output, signal handling and exit code.
const runMainEnv = "SCRIPTLOCK_RECHARGE_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// service is the recharge command running in a child process.
type service struct {
	cmd           *exec.Cmd
	httpURL, gRPC string
	exited        chan struct{}
	stderr        strings.Builder // the log, once exited is closed
	waitErr       error
}

// startService runs the command with args and waits for its "listening" log
// line, which names the addresses it bound.
func startService(t *testing.T, args ...string) *service {
	t.Helper()
	s := &service{exited: make(chan struct{})}
	s.cmd = exec.Command(os.Args[0], args...)
	s.cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.WriteString(line + "\n")
			if strings.Contains(line, "recharge service listening") {
				listening <- line
			}
		}
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() { // stop it if the test failed before doing so
		select {
		case <-s.exited:
		default:
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	select {
	case line := <-listening:
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "http="); ok {
				s.httpURL = "http://" + v
			}
			if v, ok := strings.CutPrefix(f, "grpc="); ok {
				s.gRPC = v
			}
		}
		if s.httpURL == "" || s.gRPC == "" {
			t.Fatalf("no addresses in the listening line %q", line)
		}
	case <-s.exited:
		t.Fatalf("recharge exited before listening (%v):\n%s", s.waitErr, s.stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("recharge did not log that it listens within a minute")
	}
	return s
}

func post(t *testing.T, url, idemKey string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

func decode(t *testing.T, body []byte) recharge.RechargeJSON {
	t.Helper()
	var r recharge.RechargeJSON
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	return r
}

// TestRechargeService starts the command on a real redis-server and SQLite,
// recharges over HTTP and gRPC, and stops it with SIGTERM.
func TestRechargeService(t *testing.T) {
	srv := redistest.Server(t)
	db := filepath.Join(t.TempDir(), "recharge.db")
	s := startService(t, "-redis", "redis://"+srv.Addr, "-sqlite", db, "-seed", "3",
		"-http", "127.0.0.1:0", "-grpc", "127.0.0.1:0", "-work", "2ms")

	// Order i of the seed costs 1000 + 10*i cents.
	code, hdr, body := post(t, s.httpURL+"/orders/1/recharge", "key-1")
	first := decode(t, body)
	if code != http.StatusOK || first.Outcome != "credited" || first.OrderID != 1 || first.Amount != 1010 || first.Fence <= 0 {
		t.Fatalf("first recharge of order 1: %d %s; want 200, credited 1010 with a fencing token", code, body)
	}
	if hdr.Get("Idempotent-Replayed") != "" {
		t.Errorf("the first request was marked replayed")
	}

	code, hdr, replay := post(t, s.httpURL+"/orders/1/recharge", "key-1")
	if code != http.StatusOK || string(replay) != string(body) || hdr.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry with the same Idempotency-Key: %d %q (Idempotent-Replayed %q); want the first answer replayed",
			code, replay, hdr.Get("Idempotent-Replayed"))
	}

	code, _, body = post(t, s.httpURL+"/orders/1/recharge", "key-2")
	if r := decode(t, body); code != http.StatusOK || r.Outcome != "already processed" || r.Amount != 0 {
		t.Errorf("a new request for the paid order: %d %s; want 200, already processed", code, body)
	}

	if code, _, body = post(t, s.httpURL+"/orders/99/recharge", ""); code != http.StatusNotFound {
		t.Errorf("unknown order: %d %s; want 404", code, body)
	}

	conn, err := grpc.NewClient(s.gRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	orders := rechargepb.NewOrdersClient(conn)
	for i, want := range []rechargepb.RechargeResponse_Outcome{
		rechargepb.RechargeResponse_CREDITED, rechargepb.RechargeResponse_ALREADY_PROCESSED,
	} {
		r, err := orders.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 2})
		if err != nil {
			t.Fatalf("gRPC recharge %d of order 2: %v", i+1, err)
		}
		if r.Outcome != want || (want == rechargepb.RechargeResponse_CREDITED && r.Amount != 1020) {
			t.Errorf("gRPC recharge %d of order 2: %v amount %d; want %v", i+1, r.Outcome, r.Amount, want)
		}
	}

	// Exactly one lock was taken per request and released: no lock key is
	// left, only the fencing counters.
	keys, err := srv.Do(t, "KEYS", "order:*").AsStrSlice()
	if err != nil || len(keys) != 0 {
		t.Errorf("lock keys left after the requests: %q (%v)", keys, err)
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("recharge did not exit within 20s of SIGTERM:\n%s", s.stderr.String())
	}
	if s.waitErr != nil {
		t.Fatalf("recharge exited with %v after SIGTERM, want 0:\n%s", s.waitErr, s.stderr.String())
	}
}

// TestRechargeBadRedisURL: a malformed -redis is refused at start with exit
// status 1 and a message naming the flag.
func TestRechargeBadRedisURL(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-redis", "mysql://nope", "-sqlite", filepath.Join(t.TempDir(), "r.db"),
		"-http", "127.0.0.1:0", "-grpc", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("recharge -redis mysql://nope: %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "recharge: -redis:") {
		t.Errorf("the error does not name -redis:\n%s", out)
	}

	// A URL that does not parse, from REDIS_URL: the parser's message would
	// quote it, password included.
	cmd = exec.Command(os.Args[0], "-sqlite", filepath.Join(t.TempDir(), "r.db"), "-http", "127.0.0.1:0", "-grpc", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "REDIS_URL=redis://u:secret%zz@127.0.0.1:1")
	out, err = cmd.CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("recharge with an unparsable REDIS_URL: %v, want exit status 1\n%s", err, out)
	}
	if strings.Contains(string(out), "secret") || !strings.Contains(string(out), "does not parse") {
		t.Errorf("recharge with an unparsable REDIS_URL printed:\n%s\nwant that it does not parse, without the password", out)
	}
}
