package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(m, mode))
	}
	goleak.VerifyTestMain(m, LeakOptions()...)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

func mustSet(t *testing.T, c rueidis.Client, key, val string) {
	t.Helper()
	if err := c.Do(ctxFor(t, 10*time.Second), c.B().Set().Key(key).Value(val).Build()).Error(); err != nil {
		t.Fatalf("SET %s: %v", key, err)
	}
}

func mustGet(t *testing.T, c rueidis.Client, key, want string) {
	t.Helper()
	got, err := c.Do(ctxFor(t, 10*time.Second), c.B().Get().Key(key).Build()).ToString()
	if err != nil || got != want {
		t.Fatalf("GET %s = %q, %v; want %q", key, got, err, want)
	}
}

// processGone reports whether pid no longer runs. A zombie counts as gone:
// it runs no code and holds no port.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return os.IsNotExist(err)
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// runAndCheckGone runs f as a subtest and checks that every pid it reports
// has been stopped and reaped once the subtest has ended.
func runAndCheckGone(t *testing.T, name string, f func(t *testing.T) []int) {
	t.Helper()
	var pids []int
	t.Run(name, func(t *testing.T) { pids = f(t) })
	if len(pids) == 0 {
		t.Fatalf("%s reported no pids", name)
	}
	for _, pid := range pids {
		if pid == 0 {
			t.Errorf("%s: pid 0: node not running", name)
			continue
		}
		// Reaped by the cleanup: not even a zombie is left.
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s: pid %d still exists after cleanup (kill 0: %v)", name, pid, err)
		}
	}
}

func pidsOf(nodes ...*Node) []int {
	var pids []int
	for _, n := range nodes {
		pids = append(pids, n.Pid())
	}
	return pids
}

func TestServer(t *testing.T) {
	t.Parallel()
	runAndCheckGone(t, "ping-set-get", func(t *testing.T) []int {
		start := time.Now()
		n := Server(t)
		t.Logf("node ready in %v at %s", time.Since(start), n.Addr)
		if n.Addr != "127.0.0.1:"+strconv.Itoa(n.Port) || n.Port == 6379 {
			t.Errorf("Addr %q, Port %d", n.Addr, n.Port)
		}
		if _, err := os.Stat(filepath.Join(n.Dir, "redis.conf")); err != nil {
			t.Errorf("config file: %v", err)
		}
		c := n.Client(t)
		if err := c.Do(ctxFor(t, 10*time.Second), c.B().Ping().Build()).Error(); err != nil {
			t.Fatalf("PING: %v", err)
		}
		key := Prefix(t) + "k"
		mustSet(t, c, key, "v")
		mustGet(t, c, key, "v")
		if got, err := n.Do(t, "GET", key).ToString(); err != nil || got != "v" {
			t.Fatalf("Do GET = %q, %v; want v", got, err)
		}
		if got, err := n.Do(t, "CONFIG", "GET", "bind").AsStrMap(); err != nil || got["bind"] != "127.0.0.1" {
			t.Errorf("CONFIG GET bind = %q, %v", got, err)
		}
		return pidsOf(n)
	})
}

// TestWithCPUs: the server runs on the CPUs given, and it is the server
// itself (its pid answers INFO) that is bound, not a wrapper around it.
func TestWithCPUs(t *testing.T) {
	t.Parallel()
	n := Server(t, WithCPUs("0"))
	pid := n.proc.cmd.Process.Pid
	allowed, err := CPUList(pid)
	if err != nil {
		t.Fatal(err)
	}
	if allowed != "0" {
		t.Errorf("server pid %d may run on CPUs %q, want 0", pid, allowed)
	}
	info, err := n.Do(t, "INFO", "server").ToString()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info, "process_id:"+strconv.Itoa(pid)+"\r\n") {
		t.Errorf("INFO server does not name pid %d", pid)
	}
}

func TestServers(t *testing.T) {
	t.Parallel()
	runAndCheckGone(t, "three", func(t *testing.T) []int {
		start := time.Now()
		nodes := Servers(t, 3)
		t.Logf("3 nodes ready in %v", time.Since(start))
		seen := map[string]bool{}
		key := Prefix(t) + "k"
		for i, n := range nodes {
			for _, v := range []string{n.Addr, n.Dir, strconv.Itoa(n.Pid())} {
				if seen[v] {
					t.Errorf("node %d shares %q with another node", i, v)
				}
				seen[v] = true
			}
			mustSet(t, n.Client(t), key, strconv.Itoa(i))
		}
		for i, n := range nodes {
			mustGet(t, n.Client(t), key, strconv.Itoa(i))
		}
		return pidsOf(nodes...)
	})
}

func TestCluster(t *testing.T) {
	t.Parallel()
	runAndCheckGone(t, "three-primaries", func(t *testing.T) []int {
		start := time.Now()
		cl := Cluster(t, 3)
		t.Logf("cluster ready in %v at %v", time.Since(start), cl.Addrs)
		c := cl.Client(t)
		p := Prefix(t)
		const keys = 200
		for i := range keys {
			mustSet(t, c, fmt.Sprintf("%sk%d", p, i), strconv.Itoa(i))
		}
		total := int64(0)
		for _, n := range cl.Nodes {
			size, err := n.Do(t, "DBSIZE").AsInt64()
			if err != nil {
				t.Fatalf("DBSIZE on %s: %v", n.Addr, err)
			}
			if size == 0 {
				t.Errorf("node %s holds no key: slots not spread", n.Addr)
			}
			total += size
		}
		if total != keys {
			t.Errorf("keys over all nodes = %d, want %d", total, keys)
		}
		for i := range keys {
			key := fmt.Sprintf("%sk%d", p, i)
			mustGet(t, c, key, strconv.Itoa(i))
			if got, err := cl.NodeFor(t, key).Do(t, "GET", key).ToString(); err != nil || got != strconv.Itoa(i) {
				t.Fatalf("GET %s on NodeFor = %q, %v", key, got, err)
			}
		}
		return pidsOf(cl.Nodes...)
	})
}

// TestMigration moves a slot holding two keys: while it is half-way a
// command naming one key that is there and one that is not gets TRYAGAIN; at
// the end both keys, with their TTLs, are on the target, which serves the
// slot for every node and for a cluster client.
func TestMigration(t *testing.T) {
	t.Parallel()
	cl := Cluster(t, 3)
	c := cl.Client(t)
	ctx := context.Background()
	p := Prefix(t)
	a, b, missing := "{"+p+"m}a", "{"+p+"m}b", "{"+p+"m}missing"
	mustSet(t, c, a, "1")
	if err := c.Do(ctx, c.B().Set().Key(b).Value("2").PxMilliseconds(60000).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	m := cl.StartMigration(t, a)
	if m.From == m.To || m.From != cl.NodeFor(t, a) {
		t.Fatalf("migration from %s to %s; the key is on %s", m.From.Addr, m.To.Addr, cl.NodeFor(t, a).Addr)
	}
	err := m.From.Do(t, "MGET", a, missing).Error()
	if re, ok := rueidis.IsRedisErr(err); !ok || !re.IsTryAgain() {
		t.Fatalf("MGET of a present and a missing key during the migration: %v, want TRYAGAIN", err)
	}
	if n := m.MoveKeys(t); n != 2 {
		t.Fatalf("MoveKeys moved %d keys, want 2", n)
	}
	m.Finish(t)
	if got := cl.NodeFor(t, a); got != m.To {
		t.Fatalf("slot %d on %s after Finish, want %s", m.Slot, got.Addr, m.To.Addr)
	}
	mustGet(t, c, a, "1")
	mustGet(t, c, b, "2")
	if ttl, err := m.To.Do(t, "PTTL", b).AsInt64(); err != nil || ttl <= 0 || ttl > 60000 {
		t.Fatalf("PTTL of the moved key = %d, %v: want its TTL kept", ttl, err)
	}
}

// TestClusterListsReplicas: as soon as Cluster returns, every node's CLUSTER
// SLOTS lists every node, replicas beside their primaries, so a client reads
// them all. Redis lists a replica only once its replication offset is known
// to be above 0, which on primaries nothing was written to came with their
// first PING to their replicas, up to 10 s after they started.
func TestClusterListsReplicas(t *testing.T) {
	t.Parallel()
	cl := Cluster(t, 3, WithClusterReplicas(1))
	for _, n := range cl.Nodes {
		ranges, err := n.Do(t, "CLUSTER", "SLOTS").ToArray()
		if err != nil {
			t.Fatal(err)
		}
		ports := map[int64]bool{}
		for _, r := range ranges {
			f, _ := r.ToArray()
			for _, node := range f[min(2, len(f)):] {
				if fields, _ := node.ToArray(); len(fields) >= 2 {
					port, _ := fields[1].AsInt64()
					ports[port] = true
				}
			}
		}
		if len(ports) != len(cl.Nodes) {
			t.Errorf("%s: CLUSTER SLOTS lists %d of the %d nodes as Cluster returns", n.Addr, len(ports), len(cl.Nodes))
		}
	}
}

// TestClusterWithReplicas: three primaries with a replica each; a key
// written with WAIT 1 outlives its primary's SIGKILL, served by the replica
// the Cluster promotes.
func TestClusterWithReplicas(t *testing.T) {
	t.Parallel()
	cl := Cluster(t, 3, WithClusterReplicas(1))
	if len(cl.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(cl.Nodes))
	}
	primaries := cl.Primaries(t)
	if len(primaries) != 3 {
		t.Fatalf("%d primaries, want 3", len(primaries))
	}
	for _, p := range primaries {
		info, err := p.Do(t, "INFO", "replication").ToString()
		if err != nil || !strings.Contains(info, "connected_slaves:1") {
			t.Fatalf("primary %s: %v\n%s", p.Addr, err, info)
		}
	}
	c := cl.Client(t)
	ctx := context.Background()
	key := Prefix(t) + "survivor"
	mustSet(t, c, key, "1")
	old := cl.NodeFor(t, key)
	if n, err := old.Do(t, "WAIT", "1", "5000").AsInt64(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on %s = %d, %v", old.Addr, n, err)
	}
	old.Kill()
	start := time.Now()
	for {
		if p := cl.NodeFor(t, key); p != old {
			t.Logf("%s promoted %v after the kill", p.Addr, time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("no replica promoted within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		got, err := c.Do(ctx, c.B().Get().Key(key).Build()).ToString()
		if err == nil {
			if got != "1" {
				t.Fatalf("GET %s after the failover = %q", key, got)
			}
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("GET %s after the failover: %v", key, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestReplicated(t *testing.T) {
	t.Parallel()
	runAndCheckGone(t, "primary-replica", func(t *testing.T) []int {
		start := time.Now()
		primary, replica := Replicated(t)
		t.Logf("primary and replica in sync in %v", time.Since(start))
		key := Prefix(t) + "k"
		mustSet(t, primary.Client(t), key, "v")
		rc := replica.Client(t)
		deadline := time.Now().Add(2 * time.Second)
		for {
			got, err := rc.Do(ctxFor(t, 10*time.Second), rc.B().Get().Key(key).Build()).ToString()
			if err == nil && got == "v" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET on replica = %q, %v; want v", got, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Logf("write seen on replica %v after start", time.Since(start))
		if err := replica.Do(t, "SET", key, "w").Error(); err == nil || !strings.Contains(err.Error(), "READONLY") {
			t.Errorf("SET on replica: err = %v, want READONLY", err)
		}
		return pidsOf(primary, replica)
	})
}

func TestKillRestartAOF(t *testing.T) {
	t.Parallel()
	runAndCheckGone(t, "aof", func(t *testing.T) []int {
		n := Server(t, WithAOF())
		addr, dir, oldPid := n.Addr, n.Dir, n.Pid()
		c := n.Client(t)
		key := Prefix(t) + "k"
		mustSet(t, c, key, "kept")

		n.Kill()
		if n.Pid() != 0 {
			t.Fatalf("Pid after Kill = %d, want 0", n.Pid())
		}
		if err := syscall.Kill(oldPid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("killed pid %d still exists: %v", oldPid, err)
		}
		if err := n.Do(t, "PING").Error(); err == nil {
			t.Fatalf("PING on a killed node succeeded")
		}
		n.Kill() // no-op

		start := time.Now()
		n.Restart(t)
		t.Logf("restart ready in %v", time.Since(start))
		if n.Addr != addr || n.Dir != dir || n.Pid() == oldPid || n.Pid() == 0 {
			t.Fatalf("after Restart: addr %s dir %s pid %d (before: %s %s %d)", n.Addr, n.Dir, n.Pid(), addr, dir, oldPid)
		}
		mustGet(t, c, key, "kept") // the old client reconnects
		if got, err := n.Do(t, "GET", key).ToString(); err != nil || got != "kept" {
			t.Fatalf("GET after restart = %q, %v", got, err)
		}

		n.Restart(t) // on a running node: SIGTERM, then start again
		mustGet(t, c, key, "kept")
		return pidsOf(n)
	})
}

func TestRestartWithoutAOFLosesData(t *testing.T) {
	t.Parallel()
	n := Server(t)
	key := Prefix(t) + "k"
	mustSet(t, n.Client(t), key, "v")
	n.Kill()
	n.Restart(t)
	if err := n.Do(t, "GET", key).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("GET after restart without AOF: %v, want nil reply", err)
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	runAndCheckGone(t, "pause", func(t *testing.T) []int {
		n := Server(t)
		c := n.Client(t)
		key := Prefix(t) + "k"
		mustSet(t, c, key, "v")

		n.Pause()
		n.Pause() // no-op
		short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Do(short, c.B().Get().Key(key).Build()).Error()
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("GET on a paused node: err = %v, want context.DeadlineExceeded", err)
		}

		n.Resume()
		resumed := time.Now()
		mustGet(t, c, key, "v")
		t.Logf("first command after Resume took %v", time.Since(resumed))
		n.Resume() // no-op

		// Left paused: the cleanup must resume it to stop it. (A node with an
		// open client is not left paused: closing the client would wait.)
		idle := Server(t)
		idle.Pause()
		return pidsOf(n, idle)
	})
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	a, b := Prefix(t), Prefix(t)
	if a == b {
		t.Errorf("two prefixes are equal: %q", a)
	}
	if !strings.HasPrefix(a, "TestPrefix-") || !strings.HasSuffix(a, ":") || strings.ContainsAny(a, "{} /") {
		t.Errorf("Prefix = %q", a)
	}
	t.Run("sub test/with {braces}", func(t *testing.T) {
		if p := Prefix(t); strings.ContainsAny(p, "{} /") {
			t.Errorf("Prefix = %q", p)
		}
	})
}

// The helper process: TestMain runs helperMain instead of the tests when
// helperEnv is set, so the parent can watch a test binary that fails, panics
// or exits while its servers run.
const (
	helperEnv     = "REDISTEST_HELPER_MODE"
	helperPidFile = "REDISTEST_HELPER_PIDS"
)

func helperMain(m *testing.M, mode string) int {
	_ = mode
	return m.Run()
}

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return // only meaningful in the child started by TestAbnormalEndLeavesNoProcess
	}
	if mode == "nobinary" {
		RequireBinaries(t)
		t.Fatalf("RequireBinaries passed with PATH=%q", os.Getenv("PATH"))
	}
	nodes := Servers(t, 2)
	nodes[1].Pause()
	var pids []string
	for _, n := range nodes {
		pids = append(pids, strconv.Itoa(n.Pid()))
	}
	if err := os.WriteFile(os.Getenv(helperPidFile), []byte(strings.Join(pids, " ")), 0o600); err != nil {
		t.Fatalf("write pids: %v", err)
	}
	switch mode {
	case "fatal":
		t.Fatalf("deliberate failure")
	case "panic":
		panic("deliberate panic")
	case "exit":
		os.Exit(3) // no cleanup runs: the kernel kills the children (Pdeathsig)
	}
}

func runHelper(t *testing.T, mode string, env ...string) (pids []int, out string) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v", "-test.count=1")
	// The child's temporary directories under this test's own: one that
	// exits without its cleanup (mode exit) leaves them behind.
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperPidFile+"="+pidFile, "TMPDIR="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	out = string(b)
	if err == nil {
		t.Fatalf("helper %s exited 0; output:\n%s", mode, out)
	}
	raw, _ := os.ReadFile(pidFile)
	for _, f := range strings.Fields(string(raw)) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			t.Fatalf("bad pid %q in %s", f, pidFile)
		}
		pids = append(pids, pid)
	}
	return pids, out
}

func TestAbnormalEndLeavesNoProcess(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"fatal", "panic", "exit"} {
		t.Run(mode, func(t *testing.T) {
			pids, out := runHelper(t, mode)
			if len(pids) != 2 {
				t.Fatalf("helper reported pids %v; output:\n%s", pids, out)
			}
			deadline := time.Now().Add(5 * time.Second)
			for _, pid := range pids {
				for !processGone(pid) {
					if time.Now().After(deadline) {
						t.Fatalf("redis-server pid %d still runs after the %s test ended; output:\n%s", pid, mode, out)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}

func TestMissingBinaryFailsWithInstallHint(t *testing.T) {
	t.Parallel()
	_, out := runHelper(t, "nobinary", "PATH="+t.TempDir())
	want := "redis-server not found in PATH: run `make test` (installs it with apt-get as root) or `sudo apt-get install -y redis-server`"
	if !strings.Contains(out, want) || !strings.Contains(out, "--- FAIL") || strings.Contains(out, "SKIP") {
		t.Fatalf("output does not fail with the install hint %q:\n%s", want, out)
	}
}
