package bench

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFailedRuns: bench-compare goes on (exit 0, the failed runs listed) when
// only other libraries' runs failed in a round, and fails when a scriptlock
// run failed, the process panicked or timed out, or a benchmark failed
// outside any library's run.
func TestFailedRuns(t *testing.T) {
	if _, err := exec.LookPath("awk"); err != nil {
		t.Fatalf("awk is needed by make bench-compare: install it (sudo apt-get install -y mawk): %v", err)
	}
	const ok = "BenchmarkContended/waiters=32/lib=setnx-cas-2   \t     722\t   1459153 ns/op\n"
	peerFailed := "BenchmarkContended/waiters=32/lib=rueidislock-2   \t--- FAIL: BenchmarkContended/waiters=32/lib=rueidislock-2\n" +
		"    compare_test.go:149: context deadline exceeded\n"
	parents := "--- FAIL: BenchmarkContended/waiters=32\n--- FAIL: BenchmarkContended\n"
	for _, tc := range []struct {
		name, out string
		peers     string // "" with wantErr
		wantErr   bool
	}{
		{name: "a peer's run", out: ok + peerFailed + parents + "FAIL\n", peers: "BenchmarkContended/waiters=32/lib=rueidislock\n"},
		{
			name: "two peers' runs",
			out: peerFailed + "BenchmarkUncontended/goroutines=16/lib=redsync-2 \t--- FAIL: BenchmarkUncontended/goroutines=16/lib=redsync-2\n" +
				parents + "--- FAIL: BenchmarkUncontended/goroutines=16\n--- FAIL: BenchmarkUncontended\nFAIL\n",
			peers: "BenchmarkContended/waiters=32/lib=rueidislock\nBenchmarkUncontended/goroutines=16/lib=redsync\n",
		},
		{
			name:    "a scriptlock run",
			out:     "BenchmarkContended/waiters=32/lib=scriptlock.Mutex-2 \t--- FAIL: BenchmarkContended/waiters=32/lib=scriptlock.Mutex-2\n" + parents,
			wantErr: true,
		},
		{
			name:    "a scriptlock run beside a peer's",
			out:     peerFailed + "BenchmarkContended/waiters=32/lib=scriptlock.LeanMutex-2 \t--- FAIL: BenchmarkContended/waiters=32/lib=scriptlock.LeanMutex-2\n" + parents,
			wantErr: true,
		},
		{name: "outside any library's run", out: "--- FAIL: BenchmarkContended\n    compare_test.go:99: redis-server did not start\nFAIL\n", wantErr: true},
		{
			name:    "outside any library's run, beside a peer's",
			out:     peerFailed + parents + "--- FAIL: BenchmarkUncontended\n    compare_test.go:33: redis-server did not start\n",
			wantErr: true,
		},
		{name: "a panic", out: ok + peerFailed + parents + "panic: runtime error: index out of range\n", wantErr: true},
		{name: "the process timed out", out: ok + "panic: test timed out after 10m0s\n", wantErr: true},
		{name: "no FAIL line at all", out: ok + "FAIL\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("awk", "-f", "failed_runs.awk")
			cmd.Stdin = strings.NewReader(tc.out)
			out, err := cmd.Output()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			if tc.wantErr {
				if err == nil {
					t.Fatalf("exit 0 (peers %q), want a failure", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v, want exit 0", err)
			}
			// awk's for-in order is its own.
			got := strings.Split(strings.TrimSpace(string(out)), "\n")
			want := strings.Split(strings.TrimSpace(tc.peers), "\n")
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("peers %q, want %q", got, want)
			}
		})
	}
}
