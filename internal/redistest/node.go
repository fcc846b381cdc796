package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/portclaim"
)

const (
	startTimeout = 15 * time.Second // generous: -race builds on 2 loaded cores
	stopGrace    = 5 * time.Second  // SIGTERM → SIGKILL
	bindRetries  = 8
	logTailLines = 20
)

// Node is one redis-server process started by the harness. Addr, Port and
// Dir stay the same for the node's whole life, across Kill and Restart.
type Node struct {
	Addr string // "127.0.0.1:<Port>"
	Port int
	Dir  string // the node's working directory (a t.TempDir), holding redis.conf, redis.log and data files
	// With WithTLS: the TLS listener ("127.0.0.1:<TLSPort>") and the PEM
	// files a client needs for it. Empty and nil otherwise.
	TLSAddr string
	TLSPort int
	TLS     *TLSFiles

	tb        testing.TB // owner: its Cleanup stops the node
	cfg       config
	cluster   bool
	busPort   int    // cluster bus port, cluster nodes only
	tlsRepl   bool   // replication and sentinel links on TLS (tls-replication yes)
	password  string // requirepass, sentinels only (WithSentinelPassword)
	replicaOf string // "host port" of the primary, replicas only
	monitor   string // "<master name> <host> <port> <quorum>", sentinels only

	mu     sync.Mutex
	proc   *proc
	paused bool
	// claims keep the node's ports from other test processes for the
	// node's whole life: killed, its port must not answer as another
	// package's server.
	claims []*portclaim.Claim
}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped
	err  error         // Wait's result, readable after done
}

// Server starts one standalone redis-server and waits until it answers PING.
// It is stopped when the test ends.
func Server(t testing.TB, opts ...Option) *Node {
	t.Helper()
	return Servers(t, 1, opts...)[0]
}

// Servers starts n independent standalone redis-servers in parallel (for
// RedLock-style tests) and waits until each answers PING.
func Servers(t testing.TB, n int, opts ...Option) []*Node {
	t.Helper()
	if n < 0 {
		t.Fatalf("redistest: Servers(%d): negative count", n)
	}
	cfg := newConfig(opts)
	nodes := make([]*Node, n)
	for i := range nodes {
		nodes[i] = newNode(t, cfg)
	}
	startAll(t, nodes)
	return nodes
}

// newNode prepares a node and registers its cleanup; it starts nothing.
func newNode(t testing.TB, cfg config) *Node {
	t.Helper()
	RequireBinaries(t)
	n := &Node{Dir: t.TempDir(), tb: t, cfg: cfg}
	// Registered after t.TempDir, so it runs before the directory is removed.
	t.Cleanup(n.cleanup)
	if cfg.tls {
		n.TLS = mustTLSFiles(t, n.Dir)
	}
	return n
}

// startAll launches nodes in parallel and fails the test if any does not
// become ready. Nodes already started are stopped by their cleanup.
func startAll(t testing.TB, nodes []*Node) {
	t.Helper()
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.mu.Lock()
			defer n.mu.Unlock()
			errs[i] = n.launch(false)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("redistest: %v", err)
	}
}

// Pid returns the process id of the running redis-server, or 0 when the node
// is not running.
func (n *Node) Pid() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return 0
	}
	return n.proc.cmd.Process.Pid
}

// Client returns a rueidis client connected to this node only
// (ForceSingleClient, DisableCache). opts may change the option before the
// client is built. The client is closed when the test ends.
func (n *Node) Client(t testing.TB, opts ...func(*rueidis.ClientOption)) rueidis.Client {
	t.Helper()
	opt := rueidis.ClientOption{
		InitAddress:       []string{n.Addr},
		DisableCache:      true,
		ForceSingleClient: true,
	}
	for _, o := range opts {
		o(&opt)
	}
	return newClient(t, opt)
}

func newClient(t testing.TB, opt rueidis.ClientOption) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(opt)
	// A connection lifetime shorter than the handshake takes on a loaded
	// machine (a Sentinel client asks the sentinels first) ends the first
	// connection before NewClient returns: such a client is made again.
	for try := 0; err != nil && opt.ConnLifetime > 0 && err.Error() == "connection is expired" && try < 5; try++ {
		if c != nil {
			c.Close()
		}
		c, err = rueidis.NewClient(opt)
	}
	if err != nil {
		if c != nil {
			c.Close()
		}
		t.Fatalf("redistest: client for %v: %v", opt.InitAddress, err)
	}
	t.Cleanup(c.Close)
	return c
}

// Do runs one command on this node through a private client that lives only
// for the call, without retries and with a 5 s timeout. Connection failures
// come back as the result's error, so fault tests can assert on them.
func (n *Node) Do(t testing.TB, args ...string) rueidis.RedisResult {
	t.Helper()
	return n.DoMulti(t, args)[0]
}

// DoMulti sends cmds, each a command and its arguments, in one pipeline on
// one new connection (as Do does for one command): a test reading many keys
// then costs the server one connection, not one per key.
func (n *Node) DoMulti(t testing.TB, cmds ...[]string) []rueidis.RedisResult {
	t.Helper()
	for _, args := range cmds {
		if len(args) == 0 {
			t.Fatalf("redistest: Do needs a command")
		}
	}
	out := make([]rueidis.RedisResult, len(cmds))
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{n.Addr},
		DisableCache:      true,
		ForceSingleClient: true,
		DisableRetry:      true,
		Dialer:            net.Dialer{Timeout: 2 * time.Second},
		ConnWriteTimeout:  5 * time.Second,
		Password:          n.password,
	})
	if c != nil {
		defer c.Close()
	}
	if err != nil {
		for i := range out {
			out[i] = rueidis.NewErrorResult(err)
		}
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	built := make(rueidis.Commands, len(cmds))
	for i, args := range cmds {
		built[i] = c.B().Arbitrary(args[0]).Args(args[1:]...).Build()
	}
	return c.DoMulti(ctx, built...)
}

// OutOfMemory makes the node refuse every write that may use memory, as a
// server at its maxmemory with the noeviction policy does, until the
// returned function (or the test's end) gives it memory again.
func (n *Node) OutOfMemory(t testing.TB) (restore func()) {
	t.Helper()
	for _, kv := range [][2]string{{"maxmemory-policy", "noeviction"}, {"maxmemory", "1"}} {
		if err := n.Do(t, "CONFIG", "SET", kv[0], kv[1]).Error(); err != nil {
			t.Fatalf("redistest: CONFIG SET %s %s: %v", kv[0], kv[1], err)
		}
	}
	var once sync.Once
	restore = func() {
		once.Do(func() {
			if err := n.Do(t, "CONFIG", "SET", "maxmemory", "0").Error(); err != nil {
				t.Errorf("redistest: CONFIG SET maxmemory 0: %v", err)
			}
		})
	}
	t.Cleanup(restore)
	return restore
}

// Kill sends SIGKILL to the node and reaps it. The port and directory are
// kept for Restart. Killing a stopped node does nothing.
func (n *Node) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return
	}
	_ = n.proc.cmd.Process.Kill()
	<-n.proc.done
	n.proc, n.paused = nil, false
}

// Restart starts the node again on the same port and directory and waits
// until it answers PING (after loading its AOF, with WithAOF). A running node
// is first stopped with SIGTERM.
func (n *Node) Restart(t testing.TB) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		n.stopLocked()
	}
	if err := n.launch(true); err != nil {
		t.Fatalf("redistest: restart: %v", err)
	}
}

// Pause freezes the node with SIGSTOP: connections stay open and commands
// hang until Resume. Cleanup resumes a paused node before stopping it.
func (n *Node) Pause() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil || n.paused {
		return
	}
	_ = n.proc.cmd.Process.Signal(syscall.SIGSTOP)
	n.paused = true
	waitState(n.proc.cmd.Process.Pid, 'T')
}

// Resume continues a node frozen by Pause.
func (n *Node) Resume() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil || !n.paused {
		return
	}
	_ = n.proc.cmd.Process.Signal(syscall.SIGCONT)
	n.paused = false
}

// waitState waits up to one second until /proc reports the process in the
// given state. Where /proc does not exist it returns at once.
func waitState(pid int, state byte) {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		// Format: pid (comm) state ...; comm may hold spaces or parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == state {
			return
		}
	}
}

func (n *Node) cleanup() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.stopLocked()
	n.releaseClaims()
	if n.tb.Failed() {
		if tail := n.logTail(0); tail != "" {
			n.tb.Logf("redistest: last lines of %s (port %d):\n%s", filepath.Join(n.Dir, "redis.log"), n.Port, tail)
		}
	}
}

// stopLocked stops the running process: SIGCONT (in case it is paused),
// SIGTERM, then SIGKILL after stopGrace. It always reaps the process.
func (n *Node) stopLocked() {
	p := n.proc
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	n.proc, n.paused = nil, false
}

var errAddrInUse = errors.New("address already in use")

// launch starts redis-server and waits until it is ready. With fixedPort it
// reuses n.Port; otherwise it picks free ports and retries when another
// process grabbed one first. On error no process is left running.
func (n *Node) launch(fixedPort bool) error {
	for attempt := 1; ; attempt++ {
		if !fixedPort {
			if err := n.pickPorts(); err != nil {
				return err
			}
		}
		err := n.startOnce()
		if err == nil {
			return nil
		}
		if fixedPort || attempt >= bindRetries || !errors.Is(err, errAddrInUse) {
			return err
		}
	}
}

func (n *Node) pickPorts() error {
	// Ports a launch could not bind are let go: another process holds them.
	n.releaseClaims()
	p, err := n.freePort()
	if err != nil {
		return err
	}
	n.Port, n.Addr = p, net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	if n.cluster {
		if n.busPort, err = n.freePort(); err != nil {
			return err
		}
	}
	if n.TLS != nil {
		if n.TLSPort, err = n.freePort(); err != nil {
			return err
		}
		n.TLSAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(n.TLSPort))
	}
	return nil
}

// freePort claims a free loopback port for the node (portclaim): no other
// node or proxy of any test process gets it while the node lives.
func (n *Node) freePort() (int, error) {
	c, err := portclaim.Free()
	if err != nil {
		return 0, err
	}
	n.claims = append(n.claims, c)
	return c.Port, nil
}

func (n *Node) releaseClaims() {
	for _, c := range n.claims {
		c.Release()
	}
	n.claims = nil
}

func (n *Node) confLines() []string {
	if n.monitor != "" {
		return n.sentinelConfLines()
	}
	lines := []string{
		"port " + strconv.Itoa(n.Port),
		"bind 127.0.0.1",
		"protected-mode no",
		"daemonize no",
		`save ""`,
		"dir " + quoteConf(n.Dir),
		`logfile ""`, // stdout, which goes to redis.log
		// Disk-based full sync: with diskless sync a new replica sees writes
		// only after its first REPLCONF ACK, up to a second later.
		"repl-diskless-sync no",
		"enable-debug-command local",
	}
	if n.cfg.aof {
		lines = append(lines, "appendonly yes", "appendfsync always")
	} else {
		lines = append(lines, "appendonly no")
	}
	if n.cluster {
		lines = append(lines,
			"cluster-enabled yes",
			"cluster-config-file nodes.conf",
			"cluster-node-timeout 2000",
			"cluster-port "+strconv.Itoa(n.busPort),
		)
	}
	if n.replicaOf != "" {
		lines = append(lines, "replicaof "+n.replicaOf)
	}
	if n.TLS != nil {
		lines = append(lines, n.tlsConfLines()...)
	}
	return lines
}

func quoteConf(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// startOnce starts one redis-server process and waits until it is ready.
func (n *Node) startOnce() error {
	conf := filepath.Join(n.Dir, "redis.conf")
	if err := os.WriteFile(conf, []byte(strings.Join(n.confLines(), "\n")+"\n"), 0o600); err != nil {
		return err
	}
	logPath := filepath.Join(n.Dir, "redis.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own copy
	fi, err := logf.Stat()
	if err != nil {
		return err
	}
	logStart := fi.Size()

	bin, args, err := n.command(conf)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = n.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := waitReady(n.Addr, n.password, p); err != nil {
		_ = cmd.Process.Kill()
		<-p.done
		tail := n.logTail(logStart)
		if strings.Contains(tail, "Address already in use") {
			err = fmt.Errorf("%w: %v", errAddrInUse, err)
		}
		return fmt.Errorf("redis-server on port %d: %w\n%s", n.Port, err, tail)
	}
	n.proc, n.paused = p, false
	return nil
}

// command returns the binary and arguments that start the node: redis-server
// with its config, or for a sentinel redis-sentinel (redis-server --sentinel
// where redis-sentinel is not installed), under taskset with WithCPUs.
func (n *Node) command(conf string) (string, []string, error) {
	bin, args, err := n.serverCommand(conf)
	if err != nil || n.cfg.cpus == "" {
		return bin, args, err
	}
	// taskset execs the server, so the pid waitReady checks is the server's.
	ts, err := exec.LookPath("taskset")
	if err != nil {
		return "", nil, fmt.Errorf("WithCPUs: taskset not found in PATH (Debian package util-linux): %w", err)
	}
	return ts, append([]string{"-c", n.cfg.cpus, bin}, args...), nil
}

// serverCommand is command without WithCPUs.
func (n *Node) serverCommand(conf string) (string, []string, error) {
	if n.monitor != "" {
		if bin, err := exec.LookPath("redis-sentinel"); err == nil {
			return bin, []string{conf}, nil
		}
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, fmt.Errorf("redis-server not found in PATH: %s", installHint)
	}
	if n.monitor != "" {
		return bin, []string{conf, "--sentinel"}, nil
	}
	return bin, append([]string{conf}, n.cfg.args...), nil
}

// waitReady polls until the server at addr answers PING and reports p's pid,
// so that a foreign process that holds the port is never taken for ours.
func waitReady(addr, password string, p *proc) error {
	pid := strconv.Itoa(p.cmd.Process.Pid)
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-p.done:
			return fmt.Errorf("exited during start: %v", p.err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v", startTimeout)
		}
		if r, err := rawCmdAuth(addr, password, time.Second, "PING"); err == nil && r == "PONG" {
			info, err := rawCmdAuth(addr, password, time.Second, "INFO", "server")
			if err == nil && infoField(info, "process_id") == pid {
				return nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// logTail returns the last lines of redis.log written from offset on.
func (n *Node) logTail(offset int64) string {
	b, err := os.ReadFile(filepath.Join(n.Dir, "redis.log"))
	if err != nil || offset > int64(len(b)) {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b[offset:]), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return strings.Join(lines, "\n")
}
