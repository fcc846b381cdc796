package recharge_test

import (
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/scriptlock/scriptlock/examples/recharge"
)

// TestIdleTimeoutSettingKept: the service's PostgreSQL sessions get
// idle_in_transaction_session_timeout 5 s where nothing set it, and keep
// the value a DSN or the database sets, 0 (no timeout) included.
func TestIdleTimeoutSettingKept(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := postgres.Get(t).NewDatabase(t)
	for _, c := range []struct{ param, want string }{
		{"", "5s"},
		{"&idle_in_transaction_session_timeout=2000", "2s"},
		{"&idle_in_transaction_session_timeout=0", "0"},
		{"&options=-c%20idle_in_transaction_session_timeout%3D0", "0"},
		{"database", "0"},
	} {
		set := "DSN " + dsn + c.param
		if c.param == "database" {
			set = "ALTER DATABASE ... SET idle_in_transaction_session_timeout = 0"
			admin, err := sql.Open("pgx", dsn)
			if err != nil {
				t.Fatal(err)
			}
			var name string
			err = admin.QueryRowContext(ctx, "SELECT current_database()").Scan(&name)
			if err == nil {
				_, err = admin.ExecContext(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" SET idle_in_transaction_session_timeout = 0")
			}
			admin.Close()
			if err != nil {
				t.Fatal(err)
			}
			c.param = ""
		}
		store, err := recharge.OpenPostgres(ctx, dsn+c.param)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = store.DB().QueryRowContext(ctx, "SHOW idle_in_transaction_session_timeout").Scan(&got)
		store.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: idle_in_transaction_session_timeout %q; want %q", set, got, c.want)
		}
	}
}
