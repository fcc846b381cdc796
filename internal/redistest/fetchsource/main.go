// Command fetchsource fetches the source of a pinned Redis release through
// the Go module proxy and unpacks it into a folder, for build-redis.sh.
//
//	go run ./internal/redistest/fetchsource -version 7.4.2 -out DIR
//
// The proxy serves the Redis repository's tagged commits as pseudo-versions
// of the module github.com/redis/redis. It does not serve every one's go.mod,
// which the go command reads first, so the module's zip is fetched directly
// and checked against the SHA-256 pinned here. A module zip keeps no file
// modes: the files that start with #! are made executable.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// release is a pinned Redis source: the module version the proxy serves it
// as and its zip's SHA-256.
type release struct {
	module string
	sha256 string
}

var releases = map[string]release{
	"7.2.5": {"v2.1.1-watch.0.20240519061235-f60370ce28b9+incompatible", "5594c742450060977478cb2a5d657da6637c141f8ba254cc6594d047201b7384"},
	"7.4.2": {"v2.1.1-watch.0.20250106140010-a0a6f23d997b+incompatible", "01e1d9cc9d65fc0ec3228fc4d8ccbda728454f5b21af31455be67ce5d3b07c91"},
}

func main() {
	version := flag.String("version", "", "Redis release (7.2.5 or 7.4.2)")
	out := flag.String("out", "", "folder to unpack the source into (must not exist)")
	flag.Parse()
	if err := run(*version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "fetchsource:", err)
		os.Exit(1)
	}
}

func run(version, out string) error {
	r, ok := releases[version]
	if !ok {
		return fmt.Errorf("no source pinned for Redis %q; pinned: 7.2.5, 7.4.2", version)
	}
	if out == "" {
		return errors.New("-out is required")
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists", out)
	}
	data, err := download(r.module)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != r.sha256 {
		return fmt.Errorf("the source of Redis %s has SHA-256 %s, want %s", version, got, r.sha256)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	prefix := "github.com/redis/redis@" + r.module + "/"
	for _, f := range zr.File {
		name, ok := strings.CutPrefix(f.Name, prefix)
		if !ok || name == "" || !filepath.IsLocal(name) {
			return fmt.Errorf("unexpected file %q in the module zip", f.Name)
		}
		if err := unpack(f, filepath.Join(out, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	v, err := os.ReadFile(filepath.Join(out, "src", "version.h"))
	if err != nil || !bytes.Contains(v, []byte(`REDIS_VERSION "`+version+`"`)) {
		return fmt.Errorf("the source fetched is not Redis %s (src/version.h: %v)", version, err)
	}
	return nil
}

// download fetches the module's zip from the first proxy in GOPROXY.
func download(module string) ([]byte, error) {
	proxy := "https://proxy.golang.org"
	if p := strings.Split(os.Getenv("GOPROXY"), ","); p[0] != "" && p[0] != "direct" && p[0] != "off" {
		proxy = strings.TrimSuffix(p[0], "/")
	}
	url := proxy + "/github.com/redis/redis/@v/" + module + ".zip"
	client := &http.Client{Timeout: 5 * time.Minute}
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

func unpack(f *zip.File, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	// The build runs scripts (mkreleasehdr.sh; jemalloc's configure and
	// its helpers): every file that starts with #! is made executable.
	mode := os.FileMode(0o644)
	if bytes.HasPrefix(data, []byte("#!")) {
		mode = 0o755
	}
	return os.WriteFile(path, data, mode)
}
