package gen

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata and the e2e package")

// goldenPackage is the package name every golden case is generated into.
const goldenPackage = "generated"

// e2ePackageDir holds a copy of the "all" case's output that the end-to-end
// tests compile and run against real Redis.
const e2ePackageDir = "internal/e2etest/generated"

// loadCase reads testdata/<name>/scripts with paths relative to the case
// ("scripts/x.lua"), as a user running scriptgen -in scripts would see them.
func loadCase(t *testing.T, dir string) []File {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "scripts"))
	if err != nil {
		t.Fatal(err)
	}
	var files []File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lua") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, "scripts", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, File{Path: "scripts/" + e.Name(), Source: src})
	}
	return files
}

func goldenCases(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "fuzz" {
			cases = append(cases, e.Name())
		}
	}
	return cases
}

// readDir returns the files of dir by name; a missing dir has none.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return m
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

// writeDir replaces the files of dir with files.
func writeDir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func compareDir(t *testing.T, dir string, got map[string][]byte) {
	t.Helper()
	want := readDir(t, dir)
	names := map[string]bool{}
	for n := range want {
		names[n] = true
	}
	for n := range got {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		w, inWant := want[n]
		g, inGot := got[n]
		switch {
		case !inWant:
			t.Errorf("%s: generated but not in %s (run go test ./gen -update)", n, dir)
		case !inGot:
			t.Errorf("%s: in %s but not generated (run go test ./gen -update)", n, dir)
		default:
			if diff := cmp.Diff(string(w), string(g)); diff != "" {
				t.Errorf("%s/%s mismatch (-want +got):\n%s", dir, n, diff)
			}
		}
	}
}

// checkOnly reports whether a case tests the checker alone: its generated
// files are not kept. Cases named <rule>_bad hold scripts the rule refuses
// (stderr.txt is the exact output); <rule>_ok ones must pass with no output;
// <rule>_warn ones must generate and print warnings.
func checkOnly(name string) bool {
	return strings.HasSuffix(name, "_bad") || strings.HasSuffix(name, "_ok") || strings.HasSuffix(name, "_warn")
}

// TestGolden generates every testdata case and compares with want/*.go, and
// with stderr.txt: what scriptgen prints (errors and warnings, or warnings
// alone when it generates). A flags file holding -strict runs it strict.
func TestGolden(t *testing.T) {
	for _, name := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			flags, _ := os.ReadFile(filepath.Join(dir, "flags"))
			strict := strings.TrimSpace(string(flags)) == "-strict"
			out, warnings, err := GenerateWarnings(goldenPackage, loadCase(t, dir), strict)
			var stderr string
			switch {
			case err != nil:
				stderr = err.Error() + "\n"
				out = nil
			case len(warnings) > 0:
				stderr = warnings.Error() + "\n"
			}
			if checkOnly(name) {
				// Checker cases compare stderr only; "all" covers the output.
				out = nil
			}
			if strings.HasSuffix(name, "_warn") && (err != nil || stderr == "") {
				t.Fatalf("a warning case must generate and warn, got err=%v stderr=%q", err, stderr)
			}
			if strings.HasSuffix(name, "_bad") && err == nil {
				t.Fatalf("a refused case generated (stderr %q)", stderr)
			}
			if strings.HasSuffix(name, "_ok") && stderr != "" {
				t.Fatalf("a valid case must generate with no output, got:\n%s", stderr)
			}
			stderrPath := filepath.Join(dir, "stderr.txt")
			if *update {
				writeDir(t, filepath.Join(dir, "want"), out)
				if stderr != "" {
					if err := os.WriteFile(stderrPath, []byte(stderr), 0o644); err != nil {
						t.Fatal(err)
					}
				} else {
					os.Remove(stderrPath)
				}
				if name == "all" {
					writeDir(t, e2ePackageDir, out)
				}
				return
			}
			want, _ := os.ReadFile(stderrPath)
			if diff := cmp.Diff(string(want), stderr); diff != "" {
				t.Errorf("stderr.txt mismatch (-want +got):\n%s", diff)
			}
			compareDir(t, filepath.Join(dir, "want"), out)
			if name == "all" {
				compareDir(t, e2ePackageDir, out)
			}
		})
	}
}

// TestGoldenCompiles builds and vets every golden package in a scratch module
// that requires only rueidis: generated code needs nothing else.
func TestGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	mod := t.TempDir()
	goSum, err := os.ReadFile("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"go.mod": []byte("module goldencheck\n\ngo 1.22\n\nrequire github.com/redis/rueidis v1.0.79\n"),
		"go.sum": goSum,
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(mod, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, name := range goldenCases(t) {
		want := readDir(t, filepath.Join("testdata", name, "want"))
		if len(want) == 0 {
			continue
		}
		writeDir(t, filepath.Join(mod, name), want)
		n++
	}
	if n == 0 {
		t.Fatal("no golden packages")
	}
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in a module of the golden packages: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
