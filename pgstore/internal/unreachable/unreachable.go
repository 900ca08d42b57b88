package unreachable

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
)

// Store is a pgstore whose pool points at a loopback port nothing listens
// on (port), as the user gatewayuser and the database ledgerdb: names
// that no answer of an API may show.
func Store(t *testing.T, port string) *pgstore.Store {
	t.Helper()
	cfg, err := pgxpool.ParseConfig("postgres://gatewayuser@127.0.0.1:" + port + "/ledgerdb?sslmode=disable&connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg) // connects lazily
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := pgstore.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
