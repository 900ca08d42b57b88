package memstore_test

import (
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi/adminstore"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/storetest"
)

func TestAdminConformance(t *testing.T) {
	storetest.RunAdmin(t, storetest.AdminHarness{
		New: func(t *testing.T) (adminstore.Store, notify.AccountStore, notify.MessageStore) {
			accounts, w := memstore.NewAccounts(), memstore.NewWallet()
			msgs := memstore.NewMessages(w)
			a, err := memstore.NewAdmin(accounts, w, msgs, memstore.NewTemplates())
			if err != nil {
				t.Fatal(err)
			}
			return a, accounts, msgs
		},
	})
}

func TestNewAdminNeedsEveryStore(t *testing.T) {
	if _, err := memstore.NewAdmin(memstore.NewAccounts(), nil, nil, nil); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("NewAdmin with nil stores: %v, want InvalidArgument", err)
	}
}
