package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// runMainEnv makes the test binary run the demo's main instead of the tests,
// so the tests below run the demo as its own process: its flags, environment,
// output and exit code, as `go run ./examples/recharge/cmd/demo` would.
const runMainEnv = "SCRIPTLOCK_DEMO_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// runDemo runs the demo with args and env, and returns its output and exit code.
func runDemo(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), append(env, runMainEnv+"=1")...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
		code = exit.ExitCode()
	default:
		t.Fatalf("demo %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), code
}

// row is one line of the demo's result table.
type row struct {
	mode, transport                string
	orders, requests, credits      int
	expectedBalance, actualBalance string
}

// resultRows reads the table the demo prints: one row per mode and transport.
func resultRows(t *testing.T, out string) map[string]row {
	t.Helper()
	rows := map[string]row{}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) != 12 || (f[0] != "locked" && f[0] != "unsafe") {
			continue
		}
		var r row
		r.mode, r.transport = f[0], f[1]
		var err error
		for i, p := range []*int{&r.orders, &r.requests, &r.credits} {
			if *p, err = strconv.Atoi(f[2+i]); err != nil {
				t.Fatalf("table row %q: column %d: %v", line, 3+i, err)
			}
		}
		r.expectedBalance, r.actualBalance = f[5], f[6]
		rows[r.mode+" "+r.transport] = r
	}
	return rows
}

// checkRun asserts what the demo promises: a row per mode and transport,
// every order credited exactly once by the locked runs, and the OK line.
func checkRun(t *testing.T, out string, orders, dups int) {
	t.Helper()
	rows := resultRows(t, out)
	for _, mode := range []string{"locked", "unsafe"} {
		for _, tr := range []string{"HTTP", "gRPC"} {
			r, ok := rows[mode+" "+tr]
			if !ok {
				t.Fatalf("no %s %s row in the demo's table:\n%s", mode, tr, out)
			}
			if r.orders != orders || r.requests != orders*dups {
				t.Errorf("%s %s: %d orders, %d requests; want %d and %d", mode, tr, r.orders, r.requests, orders, orders*dups)
			}
			if mode == "locked" && (r.credits != orders || r.actualBalance != r.expectedBalance) {
				t.Errorf("locked %s: %d credits for %d orders, balance %s, expected %s",
					tr, r.credits, orders, r.actualBalance, r.expectedBalance)
			}
		}
	}
	if !strings.Contains(out, "OK    locked: every order credited exactly once, over HTTP and over gRPC.") {
		t.Errorf("no OK line in the demo's output:\n%s", out)
	}
}

func TestDemoRedisURL(t *testing.T) {
	srv := redistest.Server(t)
	url := "redis://" + srv.Addr
	const orders, dups = 20, 5
	out, errOut, code := runDemo(t, []string{"REDIS_URL=" + url},
		"-orders", strconv.Itoa(orders), "-duplicates", strconv.Itoa(dups))
	if code != 0 {
		t.Fatalf("demo exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if want := "Redis:  REDIS_URL " + url + "\n"; !strings.Contains(out, want) {
		t.Errorf("the demo did not use REDIS_URL: want %q in\n%s", want, out)
	}
	checkRun(t, out, orders, dups)
	// The demo works under a key prefix of its own and deletes its keys at
	// the end, so a shared Redis is left as it was.
	if n, err := srv.Do(t, "DBSIZE").AsInt64(); err != nil || n != 0 {
		keys, _ := srv.Do(t, "KEYS", "*").AsStrSlice()
		t.Errorf("DBSIZE after the demo = %d (%v), want 0; keys: %q", n, err, keys)
	}
}

func TestDemoEmbedded(t *testing.T) {
	const orders, dups = 10, 4
	out, errOut, code := runDemo(t, []string{"REDIS_URL=redis://127.0.0.1:1"}, // -embedded wins over REDIS_URL
		"-embedded", "-orders", strconv.Itoa(orders), "-duplicates", strconv.Itoa(dups))
	if code != 0 {
		t.Fatalf("demo -embedded exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "using EMBEDDED miniredis") {
		t.Errorf("the demo did not say it uses the embedded server:\n%s", out)
	}
	// It was asked for: the demo must not claim that REDIS_URL is unset or
	// redis-server missing.
	if redisLine, _, _ := strings.Cut(out, "\n"); !strings.Contains(redisLine, "-embedded") || strings.Contains(redisLine, "not set") {
		t.Errorf("with -embedded and REDIS_URL set, the demo says %q; want it to name -embedded, not an unset REDIS_URL", redisLine)
	}
	checkRun(t, out, orders, dups)
	checkDocSamples(t, out)
}

func TestDemoUnreachableRedis(t *testing.T) {
	// Port 1 on loopback: nothing listens there, so the connection is refused.
	out, errOut, code := runDemo(t, []string{"REDIS_URL=redis://127.0.0.1:1"}, "-orders", "1")
	if code != 2 {
		t.Fatalf("demo with an unreachable REDIS_URL exited %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "demo: REDIS_URL redis://127.0.0.1:1") {
		t.Errorf("stderr does not name REDIS_URL: %q", errOut)
	}
	// The message says how to run the demo anyway: REDIS_URL wins over a
	// redis-server on PATH and the embedded server, so a stale one in the
	// environment would otherwise stop every run.
	if !strings.Contains(errOut, "unset REDIS_URL") || !strings.Contains(errOut, "-embedded") {
		t.Errorf("stderr does not say how to run without that REDIS_URL: %q", errOut)
	}
	if strings.Contains(out, "OK") {
		t.Errorf("an unreachable Redis printed OK:\n%s", out)
	}
}

func TestDemoRedisServerFails(t *testing.T) {
	// A redis-server on PATH that exits at once: the demo says how to run
	// without it.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "redis-server"), []byte("#!/bin/sh\necho broken >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runDemo(t, []string{"REDIS_URL=", "PATH=" + dir}, "-orders", "1")
	if code != 2 {
		t.Fatalf("demo with a failing redis-server exited %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "broken") || !strings.Contains(errOut, "-embedded") {
		t.Errorf("stderr %q: want the server's output and how to run with the embedded server", errOut)
	}
}

func TestDemoMalformedRedisURL(t *testing.T) {
	out, errOut, code := runDemo(t, []string{"REDIS_URL=localhost:6390"}, "-orders", "1")
	if code != 2 {
		t.Fatalf("demo with a malformed REDIS_URL exited %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"demo: REDIS_URL: ", "redis://host:port", "unset REDIS_URL", "-embedded"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q: %q", want, errOut)
		}
	}

	// A URL that does not parse: the parser's message would quote it, password
	// included.
	out, errOut, code = runDemo(t, []string{"REDIS_URL=redis://u:secret%zz@127.0.0.1:1"}, "-orders", "1")
	if code != 2 {
		t.Fatalf("demo with an unparsable REDIS_URL exited %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "secret") || !strings.Contains(errOut, "REDIS_URL does not parse") {
		t.Errorf("stderr for an unparsable REDIS_URL: %q; want it to say so without the password", errOut)
	}
}
