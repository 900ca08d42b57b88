package pgstore_test

import (
	"testing"

	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storetest"
)

func TestAdminConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunAdmin(t, storetest.AdminHarness{
		New: func(t *testing.T) (store.Admin, store.Accounts, store.Ledger) {
			s, _ := newStore(t)
			return s, s, s
		},
	})
}
