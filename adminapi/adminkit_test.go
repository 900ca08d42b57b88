package adminapi_test

import (
	"testing"

	"github.com/notifykit/notify/internal/adminkit"
	"github.com/notifykit/notify/memstore"
)

// TestAdminAPI runs the admin API's suite on memstore; the pgstore module
// runs it on pgstore (pgstore/internal/adminapitest).
func TestAdminAPI(t *testing.T) {
	adminkit.Run(t, adminkit.Config{NewBackend: func(t *testing.T) adminkit.Backend {
		accounts, w := memstore.NewAccounts(), memstore.NewWallet()
		msgs := memstore.NewLedger(w)
		a, err := memstore.NewAdmin(accounts, w, msgs, memstore.NewTemplates())
		if err != nil {
			t.Fatal(err)
		}
		return adminkit.Backend{Store: a, Keys: accounts, Msgs: msgs}
	}})
}
