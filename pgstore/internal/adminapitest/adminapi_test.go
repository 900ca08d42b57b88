package adminapitest

import (
	"context"
	"testing"

	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/internal/adminkit"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/internal/unreachable"
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
			return unreachable.Store(t, port), []string{"gatewayuser", "ledgerdb", "pgstore"}
		},
	})
}
