package recharge_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/internal/pgtest"
)

var postgres pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	postgres.Close()
	os.Exit(code)
}

// backend is a database the recharge tests run against: each test runs on
// the embedded SQLite and on a real PostgreSQL server.
type backend struct {
	name string
	open func(t *testing.T) *recharge.Store
}

var backends = []backend{
	{"SQLite", func(t *testing.T) *recharge.Store {
		t.Helper()
		s, err := recharge.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "recharge.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
	{"PostgreSQL", func(t *testing.T) *recharge.Store {
		t.Helper()
		dsn := postgres.Get(t).NewDatabase(t)
		s, err := recharge.OpenPostgres(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
}
