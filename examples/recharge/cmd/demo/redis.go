package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
)

// redisEnv is the Redis the demo runs against, and how to let go of it.
type redisEnv struct {
	client   rueidis.Client
	describe string
	embedded bool
	closers  []func()
}

func (r *redisEnv) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// startRedis picks the Redis: REDIS_URL, else a redis-server from PATH on a
// free loopback port, else an embedded miniredis.
func startRedis(ctx context.Context, forceEmbedded bool) (*redisEnv, error) {
	if url := os.Getenv("REDIS_URL"); url != "" && !forceEmbedded {
		opt, err := rueidis.ParseURL(url)
		if err != nil {
			var ue *neturl.Error
			if errors.As(err, &ue) {
				// The parser's message quotes the URL, password included.
				return nil, fmt.Errorf("REDIS_URL does not parse as a URL (percent-encode : @ / ? # %% in a user name or password)%s", redisURLHint)
			}
			return nil, fmt.Errorf("REDIS_URL: %w (want redis://host:port/db)%s", err, redisURLHint)
		}
		opt.DisableCache = true
		c, err := rueidis.NewClient(opt)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL %s: %w%s", redactURL(url), err, redisURLHint)
		}
		return &redisEnv{client: c, describe: "REDIS_URL " + redactURL(url), closers: []func(){c.Close}}, nil
	}
	if forceEmbedded {
		return startEmbedded("-embedded", "run without -embedded for a real server")
	}
	if path, err := exec.LookPath("redis-server"); err == nil {
		r, err := startServer(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("%w; run with -embedded (make demo ARGS=-embedded) to use the embedded server instead", err)
		}
		return r, nil
	}
	return startEmbedded("redis-server not found and REDIS_URL not set", "install redis-server or set REDIS_URL for a real server")
}

// redisURLHint follows a REDIS_URL that cannot be used: it wins over the
// other choices, so a stale one in the environment stops every run.
const redisURLHint = "; unset REDIS_URL to use a redis-server on PATH or the embedded server, or run with -embedded"

// redactURL hides the user name and password of a Redis URL. Go's URL
// parser, and so rueidis, takes them up to the last '@' (a password may hold
// a raw one: redis://user:top@secret@host), so everything between "://" and
// the last '@' is hidden; an '@' later in the URL hides more than needed,
// never less.
func redactURL(u string) string {
	i := strings.LastIndex(u, "@")
	if i < 0 {
		return u
	}
	if j := strings.Index(u, "://"); j >= 0 && j < i {
		return u[:j+3] + "***" + u[i:]
	}
	return "***" + u[i:]
}

// startServer runs redis-server on a free loopback port, without
// persistence, and stops it (by its pid) on Close.
func startServer(ctx context.Context, path string) (*redisEnv, error) {
	var lastErr error
	for range 5 { // another process may take the free port before the server binds it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning")
		var log strings.Builder
		cmd.Stdout, cmd.Stderr = &syncWriter{w: &log}, &syncWriter{w: &log}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", path, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(3 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		c, err := waitReady(ctx, addr, exited)
		if err != nil {
			stop()
			lastErr = fmt.Errorf("redis-server on %s: %v; its output: %s", addr, err, strings.TrimSpace(log.String()))
			continue
		}
		version := "redis-server"
		if info, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString(); err == nil {
			for _, line := range strings.Split(info, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
					version += " " + v
				}
			}
		}
		return &redisEnv{
			client:   c,
			describe: fmt.Sprintf("%s on %s (pid %d, started for this run, stopped at exit)", version, addr, cmd.Process.Pid),
			closers:  []func(){stop, c.Close},
		}, nil
	}
	return nil, lastErr
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady connects to addr once the server answers PING.
func waitReady(ctx context.Context, addr string, exited <-chan struct{}) (rueidis.Client, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			err = c.Do(pctx, c.B().Ping().Build()).Error()
			cancel()
			if err == nil {
				return c, nil
			}
			c.Close()
		}
		select {
		case <-exited:
			return nil, errors.New("exited")
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("not ready after 10s: %v", err)
		}
	}
}

// startEmbedded runs miniredis in this process; why it does and how to get
// a real server instead are printed with it.
func startEmbedded(why, real string) (*redisEnv, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("embedded Redis: %w", err)
	}
	// miniredis only counts TTLs down when told to: let them run on the wall
	// clock, so lock leases expire as they would on a real server.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	})
	// RESP2: miniredis refuses other commands on a connection that has
	// subscribed, even under RESP3, so pub/sub needs its own connection.
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{m.Addr()}, DisableCache: true, AlwaysRESP2: true, ForceSingleClient: true})
	if err != nil {
		close(stop)
		wg.Wait()
		m.Close()
		return nil, fmt.Errorf("embedded Redis: %w", err)
	}
	return &redisEnv{
		client:   &shebangless{Client: c},
		describe: why + ": using EMBEDDED miniredis (in-process, Redis-compatible, for this demo only; " + real + ")",
		embedded: true,
		closers:  []func(){func() { close(stop); wg.Wait(); m.Close() }, c.Close},
	}, nil
}

type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w.Len() > 4096 {
		return len(p), nil
	}
	return s.w.Write(p)
}
