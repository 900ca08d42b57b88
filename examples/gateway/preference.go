package main

import (
	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/httpapi"
)

// Recipient preferences (issue 48). Both stores' ledgers (memstore.Ledger
// and pgstore.Store) keep each account's categories and its recipients'
// choices (every store.Ledger is a store.Preferences), and the Notifier
// reads that ledger's before it charges a send naming a category. The
// admin API defines the categories and reads and writes any recipient's
// choices (preferenceAdmin); the public API lets an app's own settings
// screen read its categories and record its users' choices
// (preferenceAPI). Both serve the one ledger the Notifier reads: a choice
// made through either stops the very next send.

// preferenceAdmin returns the admin API's option serving the ledger's
// preferences, the ones n reads, with recipients in the forms n's
// channels write.
func preferenceAdmin(st *stores, n *notify.Notifier) []adminapi.Option {
	return []adminapi.Option{adminapi.WithPreferences(st.ledger, n)}
}

// preferenceAPI returns the public API's option serving the ledger's
// preferences to each account, by its API key: GET /api/v1/categories,
// POST /api/v1/preferences/lookup and POST /api/v1/preferences.
func preferenceAPI(st *stores) []httpapi.Option {
	return []httpapi.Option{httpapi.WithPreferences(st.ledger)}
}
