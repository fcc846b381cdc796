package pgtest_test

import (
	"database/sql"
	"os"
	"syscall"
	"testing"

	"github.com/scriptlock/scriptlock/internal/pgtest"
)

func TestStartQueryStop(t *testing.T) {
	s := pgtest.Start(t)
	dsn1, dsn2 := s.NewDatabase(t), s.NewDatabase(t)
	if dsn1 == dsn2 {
		t.Fatalf("NewDatabase returned %q twice", dsn1)
	}
	db, err := sql.Open("pgx", dsn1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var fsync string
	if err := db.QueryRowContext(t.Context(), "SHOW fsync").Scan(&fsync); err != nil {
		t.Fatal(err)
	}
	if fsync != "off" {
		t.Errorf("fsync = %q, want off", fsync)
	}
	var addr string
	if err := db.QueryRowContext(t.Context(), "SELECT host(inet_server_addr())").Scan(&addr); err != nil {
		t.Fatal(err)
	}
	if addr != "127.0.0.1" {
		t.Errorf("server address %q, want 127.0.0.1", addr)
	}
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE x (v int); INSERT INTO x VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		st, err := os.Stat(s.Dir + "/data")
		if err != nil {
			t.Fatal(err)
		}
		if uid := st.Sys().(*syscall.Stat_t).Uid; uid == 0 {
			t.Errorf("data directory owned by root; postgres must run unprivileged")
		}
	}
	if s.Pid() == 0 {
		t.Fatal("Pid() = 0 while running")
	}
}

// The server and its directory are gone once the test that started it ends.
func TestCleanupStopsServer(t *testing.T) {
	var dir string
	var pid int
	t.Run("inner", func(t *testing.T) {
		s := pgtest.Start(t)
		dir, pid = s.Dir, s.Pid()
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("directory %s still exists after cleanup (err %v)", dir, err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("postmaster %d still running after cleanup", pid)
	}
}
