package bench

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

var serverCPUs = flag.String("server-cpus", "", "run redis-server on these CPUs (taskset -c syntax); start the benchmark itself under taskset on others so that client and server do not share a CPU")

// TestMain prints which CPUs the client and the server run on as a
// "cpus:" configuration line, which benchstat and cmd/chart carry beside
// the results.
func TestMain(m *testing.M) {
	flag.Parse()
	fmt.Println("cpus:", cpusLine(allowedCPUs(), *serverCPUs))
	os.Exit(m.Run())
}

// cpusLine describes the placement: "shared 0-1" when the server may run on
// the client's CPUs, else "client 0, server 1".
func cpusLine(client, server string) string {
	if server == "" {
		return "shared " + client
	}
	return "client " + client + ", server " + server
}

// allowedCPUs is this process's CPU list, "all" where that cannot be read.
func allowedCPUs() string {
	list, err := redistest.CPUList(os.Getpid())
	if err != nil {
		return "all"
	}
	return list
}

// benchServer starts the benchmarks' redis-server, on -server-cpus when set.
func benchServer(b *testing.B) *redistest.Node {
	if *serverCPUs == "" {
		return redistest.Server(b)
	}
	return redistest.Server(b, redistest.WithCPUs(*serverCPUs))
}
