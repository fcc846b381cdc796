package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUserModuleFlow runs scriptgen the way a user's module does, as
// docs/generator.md tells it: go get -tool, a //go:generate line with go tool (and
// with go run), go generate ./..., then deleting and renaming scripts. Every run
// must succeed the first time, and a run with nothing to do changes nothing.
//
// The module cache is shared with the build that runs this test: the modules
// the flow needs are downloaded first from this repository (through the
// module proxy, when not cached yet), and the user module's go.sum starts
// from this repository's. The flow itself then runs with GOPROXY=off,
// because go get would ask the proxy whether
// github.com/scriptlock/scriptlock/cmd/scriptgen is a module of its own,
// which the replace directive standing in for a published version cannot
// answer.
func TestUserModuleFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// The user module builds the same packages as these two: a generated
	// package (rueidis and what it imports) and the tool.
	download := exec.Command("go", "list", "-deps", "./generated", "./cmd/scriptgen")
	download.Dir = root
	download.Env = append(os.Environ(), "GOWORK=off")
	if out, err := download.CombinedOutput(); err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	mod := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/app\n\ngo 1.26.0\n\nrequire github.com/scriptlock/scriptlock v0.0.0\n\nreplace github.com/scriptlock/scriptlock => "+root+"\n")
	write("go.sum", string(sum))
	// The directive lives in the module's root package, which go generate
	// visits before the generated package: the order in which removing a
	// stale file used to fail.
	write("app.go", "package app\n\n//go:generate go tool scriptgen -in scripts -out generated -pkg generated\n")
	write("scripts/hello.lua", "-- Hello reads k.\n-- @key k\n-- @return string?\nreturn redis.call('get', KEYS[1])\n")
	write("scripts/tmp.lua", "-- @key k\n-- @return int64\nreturn redis.call('incr', KEYS[1])\n")
	write("use.go", "package app\n\nimport _ \"example.com/app/generated\"\n")

	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=-buildvcs=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	generated := func() []string {
		t.Helper()
		entries, err := os.ReadDir(filepath.Join(mod, "generated"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	wantFiles := func(step string, want ...string) {
		t.Helper()
		if got := strings.Join(generated(), " "); got != strings.Join(want, " ") {
			t.Fatalf("%s: generated/ holds %s, want %s", step, got, strings.Join(want, " "))
		}
	}

	goCmd("get", "-tool", "github.com/scriptlock/scriptlock/cmd/scriptgen")
	goMod, _ := os.ReadFile(filepath.Join(mod, "go.mod"))
	if !strings.Contains(string(goMod), "tool github.com/scriptlock/scriptlock/cmd/scriptgen") {
		t.Fatalf("go get -tool did not add the tool directive:\n%s", goMod)
	}
	// The second command docs/generator.md gives; pinned to this repository's version, since
	// the latest one would need the proxy.
	goCmd("get", "github.com/redis/rueidis@"+requiredVersion(t, filepath.Join(root, "go.mod"), "github.com/redis/rueidis"))
	goCmd("generate", "./...")
	wantFiles("first generate", "hello.lua.go", "scriptgen.go", "tmp.lua.go")
	goCmd("build", "./...")

	if err := os.Remove(filepath.Join(mod, "scripts/tmp.lua")); err != nil {
		t.Fatal(err)
	}
	goCmd("generate", "./...")
	wantFiles("generate after deleting tmp.lua", "hello.lua.go", "scriptgen.go")
	goCmd("build", "./...")

	// go run works too once the module requires the tool.
	write("app.go", "package app\n\n//go:generate go run github.com/scriptlock/scriptlock/cmd/scriptgen -in scripts -out generated -pkg generated\n")
	if err := os.Rename(filepath.Join(mod, "scripts/hello.lua"), filepath.Join(mod, "scripts/greet.lua")); err != nil {
		t.Fatal(err)
	}
	goCmd("generate", "./...")
	wantFiles("generate after renaming hello.lua", "greet.lua.go", "scriptgen.go")
	goCmd("build", "./...")

	before := moduleState(t, mod)
	time.Sleep(10 * time.Millisecond) // a rewritten file would get a later mtime
	goCmd("generate", "./...")
	if after := moduleState(t, mod); after != before {
		t.Fatalf("a generate with nothing to do changed the module:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// moduleState lists every file of dir with its size, mtime and content.
func moduleState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + info.ModTime().String() + "\n" + string(content) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// requiredVersion reads the version of module path from a go.mod file.
func requiredVersion(t *testing.T, goMod, path string) string {
	t.Helper()
	b, err := os.ReadFile(goMod)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == path {
			return f[1]
		}
		if len(f) >= 3 && f[0] == "require" && f[1] == path {
			return f[2]
		}
	}
	t.Fatalf("%s does not require %s", goMod, path)
	return ""
}
