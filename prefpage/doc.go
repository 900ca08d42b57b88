// Package prefpage serves the page a recipient opens from a link in a
// message to choose which of an account's categories of messages reach
// them on which channels (store.Preferences): "order updates by chat,
// not SMS; no marketing at all". A host app makes the link with
// Page.Token and puts it in its e-mails or texts; the page shows the
// account's categories, a box per channel, and writes the recipient's
// choices, which the Notifier reads before it charges every send that
// names a category (notify.CodeDeclined).
//
// A link is a capability: whoever holds it may change that recipient's
// choices until it expires (at most MaxTTL). Its token is sealed with
// AES-256-GCM under a key derived from Config.Secret, so it shows neither
// the account nor the recipient to whoever sees the URL, and a token
// altered in any bit, forged, or expired is refused (403, 410) and
// changes nothing. The page runs no script and is never cached.
//
//	page, err := prefpage.New(prefpage.Config{Secret: secret, Preferences: ledger, Recipients: n, Title: "Acme"})
//	mux.Handle("/preferences", page)
//	token, err := page.Token(prefpage.Grant{Account: "acme", To: "+919876543210",
//		Channels: []notify.Kind{"sms", "chat"}, Expires: time.Now().Add(30 * 24 * time.Hour)})
//	link := "https://acme.example/preferences?t=" + token
//
// The gateway (examples/gateway) serves it at /preferences when
// NOTIFY_PREFERENCES_SECRET is set, and makes links through the HTTP
// API's POST /api/v1/preferences/link.
package prefpage
