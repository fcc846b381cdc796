package scenario_test

import (
	"context"
	"os"
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

// backend is a database the scenario runs on: nil opener means SQLite in the
// run's directory; PostgreSQL gets a new database per run on one server.
type backend struct {
	name string
	open func(t *testing.T) func(ctx context.Context) (*recharge.Store, error)
}

var backends = []backend{
	{"SQLite", func(*testing.T) func(context.Context) (*recharge.Store, error) { return nil }},
	{"PostgreSQL", func(t *testing.T) func(context.Context) (*recharge.Store, error) {
		srv := postgres.Get(t)
		return func(ctx context.Context) (*recharge.Store, error) {
			dsn, err := srv.CreateDatabase(ctx)
			if err != nil {
				return nil, err
			}
			return recharge.OpenPostgres(ctx, dsn)
		}
	}},
}
