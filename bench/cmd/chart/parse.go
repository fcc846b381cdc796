package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// results holds every benchmark line of `go test -bench` output, grouped by
// name with the GOMAXPROCS suffix removed.
type results struct {
	cpu   string                          // the "cpu:" header, when present
	cpus  string                          // the "cpus:" line the benchmarks print: where client and server ran
	order []string                        // names in order of first appearance
	runs  map[string][]map[string]float64 // name → one unit→value map per line
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parse reads raw `go test -bench` output (several runs may be concatenated;
// other lines are ignored). A benchmark line is its name, the iteration count,
// then value-unit pairs.
func parse(r io.Reader) (*results, error) {
	res := &results{runs: map[string][]map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if cpu, ok := strings.CutPrefix(text, "cpu: "); ok && res.cpu == "" {
			res.cpu = strings.TrimSpace(cpu)
			continue
		}
		if cpus, ok := strings.CutPrefix(text, "cpus: "); ok && res.cpus == "" {
			res.cpus = strings.TrimSpace(cpus)
			continue
		}
		f := strings.Fields(text)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // "BenchmarkX ... --- FAIL" and similar
		}
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("line %d: value without unit: %q", line, text)
		}
		m := map[string]float64{}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q is not a number: %w", line, f[i], err)
			}
			m[f[i+1]] = v
		}
		name := procsSuffix.ReplaceAllString(f[0], "")
		if _, seen := res.runs[name]; !seen {
			res.order = append(res.order, name)
		}
		res.runs[name] = append(res.runs[name], m)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res.order) == 0 {
		return nil, fmt.Errorf("no benchmark results in the input")
	}
	return res, nil
}

// keys splits "BenchmarkX/goroutines=16/lib=redsync" into its key=value parts.
func keys(name string) map[string]string {
	kv := map[string]string{}
	for _, part := range strings.Split(name, "/")[1:] {
		if k, v, ok := strings.Cut(part, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// median of the unit's values over every run of name, and how many runs
// reported it.
func (r *results) median(name, unit string) (float64, int) {
	var vs []float64
	for _, m := range r.runs[name] {
		if v, ok := m[unit]; ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, 0
	}
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2, n
	}
	return vs[len(vs)/2], len(vs)
}

// libs returns every lib= value in order of first appearance, so each panel
// lists the libraries in the same order, with an empty row where one has no
// result.
func (r *results) libs() []string {
	var libs []string
	for _, name := range r.order {
		if lib, ok := keys(name)["lib"]; ok && !slices.Contains(libs, lib) {
			libs = append(libs, lib)
		}
	}
	return libs
}

// series is one bar group of a panel: a label and a value per library.
type series struct {
	label  string
	values map[string]float64
}

// collect gathers, over the benchmarks whose name starts with prefix, the
// median of unit per library (the lib= key), one series per value of the
// groupBy key (or one series when groupBy is empty). It also returns the
// libraries in order of first appearance and the fewest and most runs behind
// a median (fewer where a library's run failed).
func (r *results) collect(prefix, groupBy, unit, label string) (ss []series, libs []string, runs, most int) {
	runs = -1
	byGroup := map[string]*series{}
	for _, name := range r.order {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		kv := keys(name)
		lib, ok := kv["lib"]
		if !ok {
			continue
		}
		v, n := r.median(name, unit)
		if n == 0 {
			continue
		}
		g := label
		if groupBy != "" {
			g = strings.ReplaceAll(label, "{}", kv[groupBy])
		}
		s, ok := byGroup[g]
		if !ok {
			s = &series{label: g, values: map[string]float64{}}
			byGroup[g] = s
			ss = append(ss, *s)
		}
		s.values[lib] = v
		if !slices.Contains(libs, lib) {
			libs = append(libs, lib)
		}
		if runs < 0 || n < runs {
			runs = n
		}
		most = max(most, n)
	}
	for i := range ss {
		ss[i] = *byGroup[ss[i].label]
	}
	return ss, libs, max(runs, 0), most
}
