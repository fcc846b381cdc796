package bench

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

var logCmds = flag.Bool("cmds", false, "log the per-operation server command mix of every benchmark")

// serverStats is one sample of INFO cpu, stats and commandstats.
type serverStats struct {
	calls map[string]int64 // calls by command name as commandstats spells it ("evalsha", "client|setinfo")
	usec  map[string]int64 // microseconds the server spent in each command (a script's own time includes its redis.calls)
	cpu   time.Duration    // used_cpu_sys + used_cpu_user: every thread of the server
	reads int64            // total_reads_processed: reads from client connections, each bringing one or more requests
}

// scriptCommands run Lua or functions: their redis.call'ed commands are
// counted apart from them in commandstats as well.
var scriptCommands = []string{"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"}

// parseInfo reads the cpu, stats and commandstats sections of an INFO reply.
func parseInfo(info string) (serverStats, error) {
	s := serverStats{calls: map[string]int64{}, usec: map[string]int64{}}
	var sawSys, sawUser, sawReads bool
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case key == "used_cpu_sys" || key == "used_cpu_user":
			sec, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return s, fmt.Errorf("INFO %s: %w", key, err)
			}
			s.cpu += time.Duration(sec * float64(time.Second))
			sawSys = sawSys || key == "used_cpu_sys"
			sawUser = sawUser || key == "used_cpu_user"
		case key == "total_reads_processed":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return s, fmt.Errorf("INFO %s: %w", key, err)
			}
			s.reads, sawReads = n, true
		case strings.HasPrefix(key, "cmdstat_"):
			calls, ok := strings.CutPrefix(val, "calls=")
			if !ok {
				return s, fmt.Errorf("INFO %s: no calls field in %q", key, val)
			}
			calls, _, _ = strings.Cut(calls, ",")
			n, err := strconv.ParseInt(calls, 10, 64)
			if err != nil {
				return s, fmt.Errorf("INFO %s: %w", key, err)
			}
			name := strings.TrimPrefix(key, "cmdstat_")
			s.calls[name] = n
			if _, usec, ok := strings.Cut(val, "usec="); ok {
				usec, _, _ = strings.Cut(usec, ",")
				if us, err := strconv.ParseInt(usec, 10, 64); err == nil {
					s.usec[name] = us
				}
			}
		}
	}
	if !sawSys || !sawUser {
		return s, fmt.Errorf("INFO reply has no used_cpu_sys/used_cpu_user")
	}
	if !sawReads {
		return s, fmt.Errorf("INFO reply has no total_reads_processed (Redis 6.0 or later)")
	}
	return s, nil
}

// usage is what the server and this process spent between two samples.
type usage struct {
	calls     map[string]int64 // per command, the probe's own INFO excluded
	usec      map[string]int64 // server time per command (commandstats usec)
	commands  int64            // sum of calls
	scripts   int64            // EVAL, EVALSHA, FCALL and their _RO forms
	reads     int64            // server reads from client connections, the probe's own excluded
	serverCPU time.Duration
	clientCPU time.Duration
	hasClient bool
	writes    int64 // write system calls of this process
	hasWrites bool
}

// meter samples the server (INFO on its own connection) and this process
// (getrusage) at the start and end of a timed region.
type meter struct {
	probe  rueidis.Client
	server serverStats
	client time.Duration
	writes int64
}

func newProbe(b testing.TB, addr string) rueidis.Client {
	b.Helper()
	probe, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(probe.Close)
	// Connect now, so the probe's handshake is not counted in a window.
	if err := probe.Do(context.Background(), probe.B().Ping().Build()).Error(); err != nil {
		b.Fatal(err)
	}
	return probe
}

func sampleServer(ctx context.Context, probe rueidis.Client) (serverStats, error) {
	info, err := probe.Do(ctx, probe.B().Info().Section("cpu", "stats", "commandstats").Build()).ToString()
	if err != nil {
		return serverStats{}, err
	}
	return parseInfo(info)
}

// startMeter takes the first sample; call it right before the timed region.
func startMeter(b testing.TB, probe rueidis.Client) *meter {
	b.Helper()
	s, err := sampleServer(context.Background(), probe)
	if err != nil {
		b.Fatal(err)
	}
	cpu, _ := processCPU()
	writes, _ := processWrites()
	return &meter{probe: probe, server: s, client: cpu, writes: writes}
}

// stop takes the second sample; call it right after the timed region.
func (m *meter) stop(b testing.TB) usage {
	b.Helper()
	cpu, ok := processCPU()
	writes, wok := processWrites()
	s, err := sampleServer(context.Background(), m.probe)
	if err != nil {
		b.Fatal(err)
	}
	u := delta(m.server, s)
	u.clientCPU, u.hasClient = cpu-m.client, ok
	u.writes, u.hasWrites = writes-m.writes, wok
	return u
}

// delta subtracts two samples. The first sample's own INFO is counted by the
// server after its reply was built, so it shows up in the second sample and
// is taken out here; the second sample's INFO is not in its own reply. The
// second sample's read is counted before its reply is built, so it is taken
// out of the reads.
func delta(before, after serverStats) usage {
	u := usage{calls: map[string]int64{}, usec: map[string]int64{}, serverCPU: after.cpu - before.cpu, reads: after.reads - before.reads - 1}
	for name, n := range after.calls {
		d := n - before.calls[name]
		if name == "info" {
			d--
		}
		if d > 0 {
			u.calls[name] = d
			u.commands += d
			u.usec[name] = after.usec[name] - before.usec[name]
		}
	}
	for _, name := range scriptCommands {
		u.scripts += u.calls[name]
	}
	return u
}

// report adds the per-operation columns: server commands (every command the
// server executed, a script's EVALSHA and each command it redis.call'ed
// counted separately), scripts among them, the server's reads, server CPU,
// client CPU and the client's write system calls.
func (u usage) report(b *testing.B, ops int) {
	if ops <= 0 {
		return
	}
	per := func(x float64) float64 { return x / float64(ops) }
	b.ReportMetric(per(float64(u.commands)), "srv-cmds/op")
	b.ReportMetric(per(float64(u.scripts)), "srv-scripts/op")
	b.ReportMetric(per(float64(u.reads)), "srv-reads/op")
	b.ReportMetric(per(float64(u.serverCPU.Nanoseconds()))/1e3, "srv-cpu-us/op")
	if u.hasClient {
		b.ReportMetric(per(float64(u.clientCPU.Nanoseconds()))/1e3, "cli-cpu-us/op")
	}
	if u.hasWrites {
		b.ReportMetric(per(float64(u.writes)), "cli-writes/op")
	}
	if *logCmds {
		var mix []string
		for _, name := range slices.Sorted(maps.Keys(u.calls)) {
			mix = append(mix, fmt.Sprintf("%s=%.2f (%.2f µs)", name, per(float64(u.calls[name])), per(float64(u.usec[name]))))
		}
		b.Logf("N=%d per op: %s", ops, strings.Join(mix, " "))
	}
}
