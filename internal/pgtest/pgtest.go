// Package pgtest starts a private PostgreSQL server for tests: initdb in a
// temporary directory, postgres on a free loopback port with fsync off, one
// fresh database per test. The server is started by the test that needs it
// and stopped by that test's t.Cleanup.
//
// # Running
//
//	make test                          # installs postgresql with apt-get when run as root
//	go test ./internal/pgtest/...      # initdb and postgres must be in PATH or /usr/lib/postgresql/*/bin
//
// A missing initdb or postgres fails the test with the install command; it is
// never skipped.
//
// PostgreSQL refuses to run as root. When the test runs as root, the data
// directory is created under os.TempDir and handed to the unprivileged user
// nobody, and initdb and postgres run as that user (the process credentials
// are set directly; no su or sudo). Otherwise they run as the current user.
//
// It never connects to or signals a server it did not start, listens on
// 127.0.0.1 only, and keeps its Unix socket inside its own directory.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

const (
	installHint  = "run `make test` (installs it with apt-get as root) or `sudo apt-get install -y postgresql`"
	startTimeout = 60 * time.Second // initdb plus first start under -race on 2 loaded cores
	stopGrace    = 10 * time.Second
	superuser    = "postgres"
	nobodyUID    = 65534
	nobodyGID    = 65534
)

// Server is one postgres process started by the harness.
type Server struct {
	Addr string // "127.0.0.1:<Port>"
	Port int
	Dir  string // holds data/ (the cluster), the socket and postgres.log

	cmd  *exec.Cmd
	done chan struct{}
	werr error

	mu  sync.Mutex
	dbs int
}

// binDir finds the directory holding initdb and postgres: PATH first, then
// the newest /usr/lib/postgresql/<version>/bin (Debian keeps them there).
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("initdb and postgres not found in PATH or /usr/lib/postgresql/*/bin: %s", installHint)
}

func pgVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// RequireBinaries fails the test with the install command when initdb or
// postgres cannot be found. It never skips.
func RequireBinaries(t testing.TB) {
	t.Helper()
	if _, err := binDir(); err != nil {
		t.Fatal(err)
	}
}

// Start initializes a cluster in a new directory, starts postgres on a free
// loopback port and waits until it accepts connections. It is stopped, and
// its directory removed, when the test ends. A missing binary fails the test
// with the install command.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New()
	if s != nil {
		t.Cleanup(func() {
			if t.Failed() {
				if tail := logTail(filepath.Join(s.Dir, "postgres.log"), 0); tail != "" {
					t.Logf("pgtest: last lines of postgres.log (port %d):\n%s", s.Port, tail)
				}
			}
			s.Close()
		})
	}
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return s
}

// New is Start for programs: the caller must Close the server. On error the
// returned server, when not nil, still needs Close (it removes the directory).
func New() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	// t.TempDir's parents are private to root, so an unprivileged postgres
	// could not reach it: the directory goes directly under os.TempDir.
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir}
	cred := credential()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return s, fmt.Errorf("chown %s to nobody: %w", dir, err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", superuser,
		"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.Dir = dir
	initdb.Env = env()
	initdb.SysProcAttr = sysProcAttr(cred)
	if out, err := initdb.CombinedOutput(); err != nil {
		return s, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	for attempt := 1; ; attempt++ {
		err := s.launch(bin, cred)
		if err == nil {
			return s, nil
		}
		if attempt >= 5 || !strings.Contains(err.Error(), "in use") {
			return s, err
		}
	}
}

// credential returns the credentials postgres runs with: nobody when the test
// runs as root, else nil (the current user).
func credential() *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	return &syscall.Credential{Uid: nobodyUID, Gid: nobodyGID, NoSetGroups: false, Groups: []uint32{}}
}

func env() []string {
	return []string{"LC_ALL=C", "LANG=C", "PATH=/usr/bin:/bin", "TZ=UTC"}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	p := l.Addr().(*net.TCPAddr).Port
	if p == 5432 {
		return 0, errors.New("free port: kernel handed out 5432")
	}
	return p, nil
}

func (s *Server) launch(bin string, cred *syscall.Credential) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logPath := filepath.Join(s.Dir, "postgres.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	if cred != nil {
		_ = os.Chown(logPath, int(cred.Uid), int(cred.Gid))
	}
	fi, _ := logf.Stat()
	logStart := fi.Size()
	// Durability settings are off: a test server's data dies with the test.
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(s.Dir, "data"),
		"-p", strconv.Itoa(port), "-k", s.Dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB")
	cmd.Dir = s.Dir
	cmd.Env = env()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(cred)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() {
		s.werr = cmd.Wait()
		close(s.done)
	}()
	s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := s.waitReady(); err != nil {
		s.stop()
		tail := logTail(logPath, logStart)
		if strings.Contains(tail, "Address already in use") {
			err = fmt.Errorf("port in use: %w", err)
		}
		return fmt.Errorf("postgres on port %d: %w\n%s", port, err, tail)
	}
	return nil
}

// waitReady polls until the server accepts a query and reports the pid the
// harness started as its postmaster, so a foreign server is never used.
func (s *Server) waitReady() error {
	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("exited during start: %v", s.werr)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		var dir string
		err := db.QueryRowContext(ctx, "SHOW data_directory").Scan(&dir)
		cancel()
		if err == nil {
			if dir != filepath.Join(s.Dir, "data") {
				return fmt.Errorf("port %d is served by another PostgreSQL (data directory %s)", s.Port, dir)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", startTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// DSN returns a pgx connection string for database db on this server, as the
// superuser, over TCP on loopback.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", superuser, s.Addr, db)
}

// NewDatabase creates an empty database with a name unique on this server
// and returns its DSN. Tests sharing one server each take their own.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	dsn, err := s.CreateDatabase(context.Background())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dsn
}

// CreateDatabase is NewDatabase for programs.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	s.mu.Lock()
	s.dbs++
	name := "t" + strconv.Itoa(s.dbs)
	s.mu.Unlock()
	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

// Pid returns the postmaster's process id, or 0 once it has stopped.
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	select {
	case <-s.done:
		return 0
	default:
		return s.cmd.Process.Pid
	}
}

// stop asks postgres for a fast shutdown (SIGINT) and kills it after
// stopGrace. It always reaps the process.
func (s *Server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(stopGrace):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.stop()
	_ = os.RemoveAll(s.Dir)
}

func logTail(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || offset > int64(len(b)) {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b[offset:]), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// Shared is one server for a whole test binary, started on first use: tests
// take their own database with NewDatabase. The package's TestMain must call
// Shared.Close after m.Run, or the directory outlives the run (the server
// itself dies with the binary).
type Shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Get returns the shared server, starting it on the first call; it fails the
// test with the install command when PostgreSQL is missing.
func (sh *Shared) Get(t testing.TB) *Server {
	t.Helper()
	sh.once.Do(func() { sh.srv, sh.err = New() })
	if sh.err != nil {
		t.Fatalf("pgtest: %v", sh.err)
	}
	return sh.srv
}

// Close stops the shared server if it was started.
func (sh *Shared) Close() {
	if sh.srv != nil {
		sh.srv.Close()
	}
}
