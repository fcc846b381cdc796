package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
)

// SentinelMaster is the name the sentinels monitor the primary under.
const SentinelMaster = "scriptlock"

// Sentinel timing: a primary that does not answer for sentinelDownAfter is
// subjectively down; with two of three sentinels agreeing a failover starts.
const (
	sentinelDownAfter       = 1000 * time.Millisecond
	sentinelFailoverTimeout = 10 * time.Second
	failoverWait            = 60 * time.Second // generous: elections may need a retry under load
	// settledDownAfter is the sentinels' down-after once a failover a test
	// asked for is done. On a loaded machine the new primary now and then
	// answered their pings later than sentinelDownAfter, and they promoted
	// another replica, one that had not yet received every write made on
	// the new primary (a release, which the test then waited for in vain):
	// a failover nobody asked for. KillPrimary makes it sentinelDownAfter
	// again before it kills.
	settledDownAfter = 30 * time.Second
)

// SentinelT is a Sentinel deployment started by Sentinel: a primary, its
// replicas and the sentinels monitoring them, on loopback ports.
type SentinelT struct {
	Data      []*Node // the data nodes; Data[0] is the first primary
	Sentinels []*Node
	Addrs     []string // the sentinels' addresses, for a Sentinel client
	// ReplicationProxies, with WithProxiedReplication, carry replication from
	// the first primary to Data[1] and Data[2]. Once the sentinels
	// reconfigure a replica it connects directly.
	ReplicationProxies []*netproxy.Proxy
	// TLSAddrs, with WithTLS, are the sentinels' TLS addresses.
	TLSAddrs []string
	tls      *TLSFiles
	password string // the sentinels' (WithSentinelPassword)

	mu sync.Mutex
}

// Sentinel starts a primary, two replicas of it and three sentinels
// monitoring it (quorum 2, down-after 1 s), and waits until every sentinel
// knows both replicas and the two other sentinels, so that a failover can
// start at once. Data nodes get opts.
func Sentinel(t testing.TB, opts ...Option) *SentinelT {
	t.Helper()
	cfg := newConfig(opts)
	if cfg.tls && cfg.proxiedRepl {
		t.Fatalf("redistest: Sentinel: WithTLS and WithProxiedReplication together are not supported")
	}
	files := sharedTLS(t, &cfg) // every process connects to the others
	onTLS := func(n *Node) *Node {
		n.TLS, n.tlsRepl = files, files != nil
		return n
	}
	s := &SentinelT{tls: files, password: cfg.sentinelPW}
	primary := onTLS(newNode(t, cfg))
	startAll(t, []*Node{primary})
	primaryAddr := primary.Addr
	if files != nil {
		primaryAddr = primary.TLSAddr
	}
	host, port, _ := net.SplitHostPort(primaryAddr)
	replicas := []*Node{onTLS(newNode(t, cfg)), onTLS(newNode(t, cfg))}
	for _, r := range replicas {
		r.replicaOf = host + " " + port
		if cfg.proxiedRepl {
			p := netproxy.New(t, primary.Addr)
			s.ReplicationProxies = append(s.ReplicationProxies, p)
			ph, pp, _ := net.SplitHostPort(p.Addr)
			r.replicaOf = ph + " " + pp
		}
	}
	startAll(t, replicas)
	for _, r := range replicas {
		if err := waitSynced(primary, r, startTimeout); err != nil {
			t.Fatalf("redistest: replica %s of %s: %v", r.Addr, primary.Addr, err)
		}
	}
	s.Data = append([]*Node{primary}, replicas...)
	for range 3 {
		n := onTLS(newNode(t, config{}))
		n.monitor = fmt.Sprintf("%s %s %s 2", SentinelMaster, host, port)
		n.password = cfg.sentinelPW
		s.Sentinels = append(s.Sentinels, n)
	}
	startAll(t, s.Sentinels)
	for _, n := range s.Sentinels {
		s.Addrs = append(s.Addrs, n.Addr)
		if files != nil {
			s.TLSAddrs = append(s.TLSAddrs, n.TLSAddr)
		}
	}
	if err := s.waitDiscovered(startTimeout * 2); err != nil {
		t.Fatalf("redistest: sentinels %v: %v", s.Addrs, err)
	}
	return s
}

func (n *Node) sentinelConfLines() []string {
	lines := []string{
		"port " + strconv.Itoa(n.Port),
		"bind 127.0.0.1",
		"protected-mode no",
		"daemonize no",
		"dir " + quoteConf(n.Dir),
		`logfile ""`,
		"sentinel monitor " + n.monitor,
		"sentinel down-after-milliseconds " + SentinelMaster + " " + strconv.Itoa(int(sentinelDownAfter.Milliseconds())),
		"sentinel failover-timeout " + SentinelMaster + " " + strconv.Itoa(int(sentinelFailoverTimeout.Milliseconds())),
		"sentinel parallel-syncs " + SentinelMaster + " 2",
	}
	if n.password != "" {
		lines = append(lines, "requirepass "+n.password, "sentinel sentinel-pass "+n.password)
	}
	if n.TLS != nil {
		lines = append(lines, n.tlsConfLines()...)
	}
	return lines
}

// waitDiscovered polls until every sentinel reports the two replicas and the
// two other sentinels, none of them down.
func (s *SentinelT) waitDiscovered(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := s.discovered()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *SentinelT) discovered() error {
	for _, n := range s.Sentinels {
		r, err := rawCmdAuth(n.Addr, n.password, time.Second, "SENTINEL", "MASTER", SentinelMaster)
		if err != nil {
			return fmt.Errorf("sentinel %s: %w", n.Addr, err)
		}
		m := pairs(r)
		if m["num-slaves"] != strconv.Itoa(len(s.Data)-1) || m["num-other-sentinels"] != strconv.Itoa(len(s.Sentinels)-1) {
			return fmt.Errorf("sentinel %s sees %s replicas and %s other sentinels", n.Addr, m["num-slaves"], m["num-other-sentinels"])
		}
		if strings.Contains(m["flags"], "down") {
			return fmt.Errorf("sentinel %s: primary flags %s", n.Addr, m["flags"])
		}
	}
	return nil
}

// pairs reads a flat [k1 v1 k2 v2 ...] reply into a map.
func pairs(r any) map[string]string {
	m := map[string]string{}
	arr, _ := r.([]any)
	for i := 0; i+1 < len(arr); i += 2 {
		k, _ := arr[i].(string)
		switch v := arr[i+1].(type) {
		case string:
			m[k] = v
		case int64:
			m[k] = strconv.FormatInt(v, 10)
		}
	}
	return m
}

// Client returns a rueidis Sentinel client for the deployment
// (DisableCache): it asks the sentinels for the primary and follows
// failovers. opts may change the option before the client is built. The
// client is closed when the test ends.
func (s *SentinelT) Client(t testing.TB, opts ...func(*rueidis.ClientOption)) rueidis.Client {
	t.Helper()
	opt := rueidis.ClientOption{
		InitAddress:  slices.Clone(s.Addrs),
		DisableCache: true,
		Sentinel:     rueidis.SentinelOption{MasterSet: SentinelMaster, Password: s.password},
	}
	if s.tls != nil {
		cfg, err := s.tls.ClientConfig()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		opt.TLSConfig = cfg // the primary, which the sentinels give on TLS
	}
	for _, o := range opts {
		o(&opt)
	}
	return newClient(t, opt)
}

// node returns the data node listening on addr, or nil.
func (s *SentinelT) node(addr string) *Node {
	for _, n := range s.Data {
		if n.Addr == addr || n.TLSAddr != "" && n.TLSAddr == addr {
			return n
		}
	}
	return nil
}

// Primary returns the data node that every sentinel reports as the primary
// and that itself reports role:master. Sentinels on a loaded machine may
// briefly disagree (one still finishing a failover, or starting a spurious
// one after a missed ping), so it polls for agreement and fails the test
// only when none is reached within failoverWait.
func (s *SentinelT) Primary(t testing.TB) *Node {
	t.Helper()
	deadline := time.Now().Add(failoverWait)
	for {
		n, err := s.agreedPrimary()
		if err == nil {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: no agreed primary after %v: %v", failoverWait, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *SentinelT) agreedPrimary() (*Node, error) {
	var addr string
	for _, sn := range s.Sentinels {
		r, err := rawCmdAuth(sn.Addr, sn.password, time.Second, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SentinelMaster)
		if err != nil {
			return nil, fmt.Errorf("sentinel %s: %w", sn.Addr, err)
		}
		arr, _ := r.([]any)
		if len(arr) != 2 {
			return nil, fmt.Errorf("sentinel %s: reply %v", sn.Addr, r)
		}
		h, _ := arr[0].(string)
		p, _ := arr[1].(string)
		a := net.JoinHostPort(h, p)
		if addr != "" && a != addr {
			return nil, fmt.Errorf("sentinels disagree on the primary: %s and %s", addr, a)
		}
		addr = a
	}
	n := s.node(addr)
	if n == nil {
		return nil, fmt.Errorf("sentinels report primary %s, not a node of this deployment", addr)
	}
	info, err := rawCmd(n.Addr, time.Second, "INFO", "replication")
	if err != nil {
		return nil, fmt.Errorf("primary %s: %w", addr, err)
	}
	if role := infoField(info, "role"); role != "master" {
		return nil, fmt.Errorf("sentinels report %s as primary; it reports role:%s", addr, role)
	}
	return n, nil
}

// WaitFailover waits until the sentinels agree on a primary other than old
// that reports role:master and has at least replicas replicas online, and
// returns it with the time from the call to that point. From then on the
// sentinels count a primary down only after settledDownAfter, not
// sentinelDownAfter: on a loaded machine they ran failovers of their own
// after the one the test made (KillPrimary makes it short again).
func (s *SentinelT) WaitFailover(t testing.TB, old *Node, replicas int) (*Node, time.Duration) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(failoverWait)
	var err error
	for time.Now().Before(deadline) {
		var n *Node
		n, err = s.agreedPrimary()
		if err == nil && n == old {
			err = errors.New("still on the old primary " + old.Addr)
		}
		if err == nil {
			if err = onlineReplicas(n, replicas); err == nil {
				took := time.Since(start)
				s.setDownAfter(t, settledDownAfter)
				return n, took
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("redistest: no failover away from %s after %v: %v", old.Addr, failoverWait, err)
	return nil, 0
}

// AwaitFollowed waits until each client sends its commands to n, failing the
// test after failoverWait. A client learns of a failover from the
// +switch-master message of the sentinel it listens to, and the sentinel that
// led the failover sends it only when the failover ends, a second or more
// after the others agree on the new primary; after SENTINEL FAILOVER the old
// primary stays writable until the sentinels demote it, so until then such a
// client still reads and writes there.
//
// It returns how long it waited.
func (s *SentinelT) AwaitFollowed(t testing.TB, n *Node, clients ...rueidis.Client) time.Duration {
	t.Helper()
	start := time.Now()
	info, err := rawCmdAuth(n.Addr, n.password, time.Second, "INFO", "server")
	if err != nil {
		t.Fatalf("redistest: INFO server on %s: %v", n.Addr, err)
	}
	want := infoField(info, "run_id")
	deadline := time.Now().Add(failoverWait)
	for i, c := range clients {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			got, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString()
			cancel()
			if err == nil && infoField(got, "run_id") == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("redistest: client %d still not on the primary %s after %v (last: run_id %q, %v)", i, n.Addr, failoverWait, infoField(got, "run_id"), err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return time.Since(start)
}

// onlineReplicas reports an error unless the node lists at least want
// replicas in state online.
func onlineReplicas(n *Node, want int) error {
	info, err := rawCmd(n.Addr, time.Second, "INFO", "replication")
	if err != nil {
		return err
	}
	online := 0
	for i := range 8 {
		if strings.Contains(infoField(info, "slave"+strconv.Itoa(i)), "state=online") {
			online++
		}
	}
	if online < want {
		return fmt.Errorf("new primary %s has %d replicas online, want %d", n.Addr, online, want)
	}
	return nil
}

// Failover asks a sentinel for a failover (SENTINEL FAILOVER, which promotes
// a replica without waiting for the primary to fail) and returns the old and
// the new primary once the sentinels agree on the new one and the other
// replica replicates from it, with the time that took. The old primary
// becomes a replica at the sentinels' next INFO round, up to 10 s later;
// WaitReplicas waits for that. Once the new primary is agreed on, the
// sentinels count a primary down only after settledDownAfter (WaitFailover).
func (s *SentinelT) Failover(t testing.TB) (old, primary *Node, took time.Duration) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	old = s.Primary(t)
	start := time.Now()
	// A sentinel refuses while an earlier failover is still settling
	// (INPROGRESS) or before it has seen the replicas; try the others and again.
	var err error
	for deadline := time.Now().Add(failoverWait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		sn := s.Sentinels[int(time.Now().UnixNano()/1e6)%len(s.Sentinels)]
		var r any
		r, err = rawCmdAuth(sn.Addr, sn.password, time.Second, "SENTINEL", "FAILOVER", SentinelMaster)
		if err == nil {
			if e, ok := r.(error); ok {
				err = e
			}
		}
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("redistest: SENTINEL FAILOVER: %v", err)
	}
	// The old primary is turned into a replica only at the sentinels' next
	// INFO round (up to 10 s later): wait for the other replica only.
	primary, _ = s.WaitFailover(t, old, len(s.Data)-2)
	return old, primary, time.Since(start)
}

// setDownAfter sets every sentinel's down-after for the primary.
func (s *SentinelT) setDownAfter(t testing.TB, d time.Duration) {
	t.Helper()
	for _, sn := range s.Sentinels {
		r, err := rawCmdAuth(sn.Addr, sn.password, time.Second, "SENTINEL", "SET", SentinelMaster, "down-after-milliseconds", strconv.FormatInt(d.Milliseconds(), 10))
		if err == nil {
			if e, ok := r.(error); ok {
				err = e
			}
		}
		if err != nil {
			t.Fatalf("redistest: SENTINEL SET down-after-milliseconds on %s: %v", sn.Addr, err)
		}
	}
}

// KillPrimary sends SIGKILL to the primary and returns it and the replica the
// sentinels promoted, once they agree on it and the other replica replicates
// from it, with the time from the kill to that point. The killed node stays
// down; Restart it to have the sentinels turn it into a replica. It makes
// the sentinels' down-after sentinelDownAfter first: WaitFailover, here and
// after Failover, makes it settledDownAfter.
func (s *SentinelT) KillPrimary(t testing.TB) (old, primary *Node, took time.Duration) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	old = s.Primary(t)
	s.setDownAfter(t, sentinelDownAfter) // after a Failover or KillPrimary it is longer
	start := time.Now()
	old.Kill()
	primary, _ = s.WaitFailover(t, old, len(s.Data)-2)
	return old, primary, time.Since(start)
}

// WaitReplicas waits until the primary lists n replicas online.
func (s *SentinelT) WaitReplicas(t testing.TB, primary *Node, n int) {
	t.Helper()
	deadline := time.Now().Add(failoverWait)
	for {
		err := onlineReplicas(primary, n)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: %v after %v", err, failoverWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitReplicaOf waits until node has rejoined the deployment: it replicates
// from the primary the sentinels agree on, whichever node that is by then.
// Under load the sentinels may run a further failover while a restarted node
// rejoins, so the primary is looked up again on every poll rather than fixed
// by the caller; that failover may even promote node itself, which then
// counts once every other data node replicates from it.
func (s *SentinelT) WaitReplicaOf(t testing.TB, node *Node) *Node {
	t.Helper()
	deadline := time.Now().Add(failoverWait)
	for {
		p, err := s.agreedPrimary()
		if err == nil {
			if p == node {
				for _, d := range s.Data {
					if d != p && err == nil {
						err = waitSynced(p, d, 0)
					}
				}
			} else {
				err = waitSynced(p, node, 0)
			}
		}
		if err == nil {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: %s did not rejoin the agreed primary after %v: %v", node.Addr, failoverWait, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
