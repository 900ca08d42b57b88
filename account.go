package notify

import "github.com/notifykit/notify/store"

// Account is a customer of the notifier: the owner of a wallet and of the
// messages sent on its behalf (store.Account, which documents each field).
// Accounts come from a store.Accounts; the Notifier never changes one.
type Account = store.Account
