package main

import (
	"net/http"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/provider/smtp"
)

// Suppression lists. Both stores' ledgers (memstore.Ledger and
// pgstore.Store) implement store.Suppressions, and the Notifier enforces
// that list; the admin API serves it (suppressionAdmin) and
// /unsubscribe/{token} writes it (unsubscribeRoutes).

// unsubscribePath is the route of the unsubscribe links: point
// NOTIFY_SMTP_URL's unsubscribe= at https://<public host>/unsubscribe/{token}.
const unsubscribePath = "/unsubscribe/"

// suppressionAdmin returns the admin API's option serving the ledger's
// suppression list, the one n enforces, in the recipients' forms n's
// channels write.
func suppressionAdmin(st *stores, n *notify.Notifier) []adminapi.Option {
	return []adminapi.Option{adminapi.WithSuppressions(st.ledger, n)}
}

// unsubscribeRoutes mounts smtp.UnsubscribeHandler at
// /unsubscribe/{token} when NOTIFY_UNSUBSCRIBE_SECRET is set: a GET shows a confirmation page, a
// POST (the page's button, or a mailbox provider's RFC 8058 one-click
// POST) records the address as unsubscribed. Tokens that name an address
// only are taken for NOTIFY_UNSUBSCRIBE_ACCOUNT, refused without it.
func unsubscribeRoutes(cfg *config, st *stores) []route {
	if cfg.unsubscribeSecret == nil {
		return nil
	}
	h, err := smtp.UnsubscribeHandler(smtp.UnsubscribeConfig{Secret: cfg.unsubscribeSecret, Suppressions: st.ledger,
		DefaultAccount: cfg.unsubscribeAccount})
	if err != nil {
		return nil // cannot happen: the secret's length was checked by loadMailOptions
	}
	mux := http.NewServeMux()
	mux.Handle(unsubscribePath+"{token}", h)
	return []route{{unsubscribePath, mux}}
}
