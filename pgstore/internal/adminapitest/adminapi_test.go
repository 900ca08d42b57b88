package adminapitest

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/internal/adminkit"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
)

// TestAdminAPI runs the admin API's suite (internal/adminkit, which
// adminapi runs on memstore) on pgstore, and on a pgstore whose server
// cannot be reached.
func TestAdminAPI(t *testing.T) {
	adminkit.Run(t, adminkit.Config{
		NewBackend: func(t *testing.T) adminkit.Backend {
			s, err := pgstore.New(pgstoretest.Pool(t, pgstoretest.Schema(t), 4))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			return adminkit.Backend{Store: s, Keys: s, Msgs: s}
		},
		Unreachable: func(t *testing.T, port string) (adminapi.Store, []string) {
			cfg, err := pgxpool.ParseConfig(fmt.Sprintf("postgres://gatewayuser@127.0.0.1:%s/ledgerdb?sslmode=disable&connect_timeout=5", port))
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
			return s, []string{"gatewayuser", "ledgerdb", "pgstore"}
		},
	})
}
