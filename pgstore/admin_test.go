package pgstore_test

import (
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi/adminstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/storetest"
)

func TestAdminConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunAdmin(t, storetest.AdminHarness{
		New: func(t *testing.T) (adminstore.Store, notify.AccountStore, notify.Ledger) {
			s, _ := newStore(t)
			return s, s, s
		},
	})
}
