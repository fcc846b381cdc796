package recharge_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scriptlock/scriptlock/examples/recharge"
)

// OpenSQLite opens the file it is given, whatever characters its name holds.
// The path goes into an SQLite URI, where '?' starts the query, '#' the
// fragment and %XX is decoded: unescaped, "shop#1.db" and "shop#2.db" both
// opened "shop" (two services' orders and balances in one file), and "a?b.db"
// opened "a" without WAL, the busy timeout or foreign keys.
func TestOpenSQLiteNamesTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"shop#1.db", "shop#2.db", "a?b.db", "c%41.db", "d%3F.db"} {
		path := filepath.Join(dir, name)
		s, err := recharge.OpenSQLite(t.Context(), path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := s.Seed(t.Context(), 1, 1, func(int) int64 { return amount }); err != nil {
			t.Errorf("%s: seed: %v (another name's database?)", name, err)
		}
		var mode string
		var fk int
		if err := s.DB().QueryRowContext(t.Context(), `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("%s: journal_mode %q %v; want wal", name, mode, err)
		}
		if err := s.DB().QueryRowContext(t.Context(), `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
			t.Errorf("%s: foreign_keys %d %v; want 1", name, fk, err)
		}
		s.Close()
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if t.Failed() {
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Logf("files made: %q", names)
	}
}
