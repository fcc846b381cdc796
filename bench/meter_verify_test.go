package bench

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestParseInfo(t *testing.T) {
	info := "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:0.250000\r\nused_cpu_sys_children:9.000000\r\n" +
		"# Stats\r\ntotal_reads_processed:4321\r\ntotal_writes_processed:4320\r\n" +
		"# Commandstats\r\ncmdstat_set:calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_client|setinfo:calls=2,usec=1,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n"
	s, err := parseInfo(info)
	if err != nil {
		t.Fatal(err)
	}
	if s.cpu != 1750*time.Millisecond {
		t.Errorf("cpu = %v, want 1.75s (children not counted)", s.cpu)
	}
	if s.reads != 4321 {
		t.Errorf("reads = %d, want 4321", s.reads)
	}
	if s.calls["set"] != 12 || s.calls["client|setinfo"] != 2 || len(s.calls) != 2 {
		t.Errorf("calls = %v", s.calls)
	}
	if s.usec["set"] != 30 || s.usec["client|setinfo"] != 1 {
		t.Errorf("usec = %v, want set 30 and client|setinfo 1", s.usec)
	}
	if _, err := parseInfo("# Commandstats\r\ncmdstat_get:calls=1\r\n"); err == nil {
		t.Error("INFO without the cpu section parsed without error")
	}
	if _, err := parseInfo("used_cpu_sys:1\r\nused_cpu_user:1\r\ncmdstat_get:calls=1\r\n"); err == nil {
		t.Error("INFO without the stats section parsed without error")
	}
	if _, err := parseInfo("used_cpu_sys:1\r\nused_cpu_user:1\r\ntotal_reads_processed:1\r\ncmdstat_get:usec=3\r\n"); err == nil {
		t.Error("commandstats line without calls parsed without error")
	}
}

// TestMeterCountsScriptCommands runs a known mix on a real server and checks
// what the meter counts: every command once, a script's EVALSHA and each
// command it redis.call'ed separately, and none of the meter's own INFO.
func TestMeterCountsScriptCommands(t *testing.T) {
	node := redistest.Server(t)
	ctx := context.Background()
	rc := node.Client(t)
	probe := newProbe(t, node.Addr)
	// Load the script and open the connection before the window.
	if err := casDelete.Exec(ctx, rc, []string{"k"}, []string{"v"}).Error(); err != nil {
		t.Fatal(err)
	}
	m := startMeter(t, probe)
	const n = 25
	for i := range n {
		key := "k" + strconv.Itoa(i)
		if err := rc.Do(ctx, rc.B().Set().Key(key).Value("v").Nx().Px(time.Minute).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if got, err := casDelete.Exec(ctx, rc, []string{key}, []string{"v"}).AsInt64(); err != nil || got != 1 {
			t.Fatalf("cas delete %s = %d, %v", key, got, err)
		}
	}
	u := m.stop(t)
	want := map[string]int64{"set": n, "evalsha": n, "get": n, "del": n}
	for name, w := range want {
		if u.calls[name] != w {
			t.Errorf("%s calls = %d, want %d (all: %v)", name, u.calls[name], w, u.calls)
		}
	}
	// rueidis may PING an idle connection or open another one (HELLO,
	// CLIENT SETINFO); nothing else may appear.
	extra := u.commands - 4*n
	for name, calls := range u.calls {
		if name == "ping" || name == "hello" || strings.HasPrefix(name, "client|") {
			extra -= calls
		}
	}
	if extra != 0 {
		t.Errorf("%d commands counted beyond the mix: %v", extra, u.calls)
	}
	// Each request was sent alone and waited for, so each took one read of
	// the server and one write of this process (which may also write a few
	// times to wake the Go runtime's network poller).
	// The script's GET and DEL came with its EVALSHA, and a new
	// connection's CLIENT SETINFO calls (Redis 7.2 and newer count them)
	// with its HELLO.
	sent := u.commands - 2*n - u.calls["client|setinfo"]
	if u.reads != sent {
		t.Errorf("server reads = %d, want one per request sent (%d)", u.reads, sent)
	}
	if !u.hasWrites {
		t.Error("no write count on Linux")
	} else if u.writes < sent || u.writes > sent+n/5 {
		t.Errorf("client writes = %d, want one per request sent (%d) and at most %d more", u.writes, sent, n/5)
	}
	if u.scripts != n {
		t.Errorf("scripts = %d, want %d", u.scripts, n)
	}
	if u.serverCPU < 0 {
		t.Errorf("server CPU went backwards: %v", u.serverCPU)
	}
}
