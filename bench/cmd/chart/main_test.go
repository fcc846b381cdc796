package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `cpus: client 0, server 1
goos: linux
goarch: amd64
pkg: github.com/scriptlock/scriptlock/bench
cpu: AMD EPYC
BenchmarkUncontended/goroutines=16/lib=setnx-cas-2         	     300	     23511 ns/op	     42000 ops/s	         4.000 srv-cmds/op	     214 B/op	       5 allocs/op
--- BENCH: BenchmarkUncontended/goroutines=16/lib=setnx-cas-2
    meter_test.go:167: N=300 per op: del=1.00 evalsha=1.00 get=1.00 set=1.00
BenchmarkUncontended/goroutines=16/lib=scriptlock.Mutex-2  	     300	     36721 ns/op	     27000 ops/s	        10.00 srv-cmds/op
BenchmarkUncontended/goroutines=64/lib=setnx-cas-2         	     300	     15662 ns/op	     64000 ops/s
BenchmarkContended/waiters=32/lib=scriptlock.Mutex-2       	     300	   2240229 ns/op	       446.4 acq/s	       464.6 wait-p99-ms
PASS
ok  	github.com/scriptlock/scriptlock/bench	5.946s
BenchmarkUncontended/goroutines=16/lib=setnx-cas-2         	     300	     23511 ns/op	     44000 ops/s
BenchmarkUncontended/goroutines=16/lib=setnx-cas-2         	     300	     23511 ns/op	     10000 ops/s
BenchmarkContended/waiters=32/lib=setnx-cas                	     300	   1547765 ns/op	       646.1 acq/s	       326.9 wait-p99-ms
`

func TestParseAndCollect(t *testing.T) {
	res, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if res.cpu != "AMD EPYC" || res.cpus != "client 0, server 1" {
		t.Errorf("cpu = %q, cpus = %q", res.cpu, res.cpus)
	}
	for in, want := range map[string]string{
		"shared 0-1":           "client and redis-server share CPUs 0-1",
		"client 0, server 1":   "client on CPU 0, redis-server on CPU 1",
		"client 0-2, server 3": "client on CPUs 0-2, redis-server on CPU 3",
		"odd":                  "CPUs: odd",
	} {
		if got := placement(in); got != want {
			t.Errorf("placement(%q) = %q, want %q", in, got, want)
		}
	}
	name := "BenchmarkUncontended/goroutines=16/lib=setnx-cas"
	if got := len(res.runs[name]); got != 3 {
		t.Fatalf("%s: %d runs, want 3 (the -2 suffix stripped, repeated runs joined)", name, got)
	}
	if v, n := res.median(name, "ops/s"); v != 42000 || n != 3 {
		t.Errorf("median = %v over %d, want 42000 over 3", v, n)
	}
	ss, libs, runs, most := res.collect("BenchmarkUncontended/", "goroutines", "ops/s", "{} goroutines")
	if len(ss) != 2 || ss[0].label != "16 goroutines" || ss[1].label != "64 goroutines" {
		t.Fatalf("series = %+v", ss)
	}
	if ss[0].values["scriptlock.Mutex"] != 27000 || ss[1].values["setnx-cas"] != 64000 {
		t.Errorf("values = %+v", ss)
	}
	if _, ok := ss[1].values["scriptlock.Mutex"]; ok {
		t.Error("a library without a 64-goroutine result got a value")
	}
	if strings.Join(libs, ",") != "setnx-cas,scriptlock.Mutex" || runs != 1 || most != 3 {
		t.Errorf("libs = %v, fewest runs = %d, most = %d", libs, runs, most)
	}
	for _, c := range []struct {
		fewest, most int
		want         string
	}{{1, 1, "one run"}, {8, 8, "median of 8 runs"}, {7, 8, "median of 8 runs (of 7 where a run failed)"}} {
		if got := medianOf(c.fewest, c.most); got != c.want {
			t.Errorf("medianOf(%d, %d) = %q, want %q", c.fewest, c.most, got, c.want)
		}
	}
	ss, libs, _, _ = res.collect("BenchmarkContended/", "waiters", "wait-p99-ms", "{} waiters")
	if len(ss) != 1 || ss[0].values["setnx-cas"] != 326.9 || len(libs) != 2 {
		t.Errorf("contended = %+v %v (a name without the procs suffix must parse too)", ss, libs)
	}
	// The contended results list scriptlock.Mutex first, the input as a whole setnx-cas.
	if got := strings.Join(res.libs(), ","); got != "setnx-cas,scriptlock.Mutex" {
		t.Errorf("libs() = %s, want the order of first appearance in the whole input", got)
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := parse(strings.NewReader("PASS\nok x 1s\n")); err == nil {
		t.Error("input without benchmark lines: no error")
	}
	if _, err := parse(strings.NewReader("BenchmarkX-2 10 5 ns/op 7\n")); err == nil {
		t.Error("value without unit: no error")
	}
	if _, err := parse(strings.NewReader("BenchmarkX-2 10 five ns/op\n")); err == nil {
		t.Error("non-numeric value: no error")
	}
}

func TestRenderWritesPNG(t *testing.T) {
	in := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(in, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "chart.png")
	if err := run(out, []string{in}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Three panels of 3 in at 110 dpi, 9 in wide.
	if b := img.Bounds(); b.Dx() != 990 || b.Dy() != 990 {
		t.Errorf("image %v, want 990x990", b)
	}
	// Not blank: some pixel has the first series' colour.
	r0, g0, b0, _ := palette[0].RGBA()
	found := false
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y && !found; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if r, g, b, _ := img.At(x, y).RGBA(); r == r0 && g == g0 && b == b0 {
				found = true
				break
			}
		}
	}
	if !found {
		t.Error("no bar drawn")
	}
	if err := run(out, []string{filepath.Join(t.TempDir(), "missing.txt")}); err == nil {
		t.Error("missing input file: no error")
	}
}
