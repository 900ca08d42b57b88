package main

import (
	"net/http"

	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/store"
)

// Suppression lists. Both stores' ledgers (memstore.Ledger and
// pgstore.Store) implement store.Suppressions, and the Notifier enforces
// that list; the admin API serves it (suppressionAdmin) and
// /unsubscribe/{token} writes it (unsubscribeRoutes).

// unsubscribePath is the route of the unsubscribe links: point
// NOTIFY_SMTP_URL's unsubscribe= at https://<public host>/unsubscribe/{token}.
const unsubscribePath = "/unsubscribe/"

// suppressionAdmin returns the admin API's option serving the ledger's
// suppression list, or none when the ledger has none.
func suppressionAdmin(st *stores) []adminapi.Option {
	if list, ok := st.ledger.(store.Suppressions); ok {
		return []adminapi.Option{adminapi.WithSuppressions(list)}
	}
	return nil
}

// unsubscribeRoutes mounts smtp.UnsubscribeHandler at
// /unsubscribe/{token} when NOTIFY_UNSUBSCRIBE_SECRET is set (and the
// ledger keeps a suppression list): a GET shows a confirmation page, a
// POST (the page's button, or a mailbox provider's RFC 8058 one-click
// POST) records the address as unsubscribed. Tokens that name an address
// only are taken for NOTIFY_UNSUBSCRIBE_ACCOUNT, refused without it.
func unsubscribeRoutes(cfg *config, st *stores) []route {
	list, ok := st.ledger.(store.Suppressions)
	if cfg.unsubscribeSecret == nil || !ok {
		return nil
	}
	h, err := smtp.UnsubscribeHandler(smtp.UnsubscribeConfig{Secret: cfg.unsubscribeSecret, Suppressions: list,
		DefaultAccount: cfg.unsubscribeAccount})
	if err != nil {
		return nil // cannot happen: the secret's length was checked by loadMailOptions
	}
	mux := http.NewServeMux()
	mux.Handle(unsubscribePath+"{token}", h)
	return []route{{unsubscribePath, mux}}
}
