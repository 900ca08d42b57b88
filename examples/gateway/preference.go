package main

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/prefpage"
)

// Recipient preferences (issue 48). Both stores' ledgers (memstore.Ledger
// and pgstore.Store) keep each account's categories and its recipients'
// choices (every store.Ledger is a store.Preferences), and the Notifier
// reads that ledger's before it charges a send naming a category. The
// admin API defines the categories and reads and writes any recipient's
// choices (preferenceAdmin); the public API lets an app's own settings
// screen read its categories and record its users' choices
// (preferenceAPI). Both serve the one ledger the Notifier reads: a choice
// made through either stops the very next send. With
// NOTIFY_PREFERENCES_SECRET set, the recipients themselves choose too, on
// the page at /preferences (package prefpage), opened by the signed,
// expiring links POST /api/v1/preferences/link makes (preferencePage).

// preferencePath is the page's route.
const preferencePath = "/preferences"

// loadPreferenceOptions reads the preference page's settings:
//   - NOTIFY_PREFERENCES_SECRET, hex of at least 32 random bytes (openssl
//     rand -hex 32), the same on every instance: it seals the links, and
//     changing it voids them; unset, no page and no links;
//   - NOTIFY_PREFERENCES_URL, the page's public URL the links point at
//     (https://notify.example/preferences); default the API request's
//     own host, over http unless the request came over TLS;
//   - NOTIFY_PREFERENCES_TITLE, the page's heading, as recipients know
//     the sender (default "Your message preferences").
func (c *config) loadPreferenceOptions(get func(string) string) error {
	c.prefURL, c.prefTitle = get("NOTIFY_PREFERENCES_URL"), get("NOTIFY_PREFERENCES_TITLE")
	s := get("NOTIFY_PREFERENCES_SECRET")
	if s == "" {
		if c.prefURL != "" || c.prefTitle != "" {
			return fmt.Errorf("NOTIFY_PREFERENCES_URL and NOTIFY_PREFERENCES_TITLE are for the preference page: set NOTIFY_PREFERENCES_SECRET too")
		}
		return nil
	}
	secret, err := hex.DecodeString(s)
	if err != nil || len(secret) < prefpage.MinSecretLen {
		return fmt.Errorf("NOTIFY_PREFERENCES_SECRET: want hex of at least %d random bytes (openssl rand -hex 32)", prefpage.MinSecretLen)
	}
	c.prefSecret = secret
	if c.prefURL != "" {
		u, err := url.Parse(c.prefURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("NOTIFY_PREFERENCES_URL: want the page's absolute http(s) URL without a query, such as https://notify.example/preferences")
		}
	}
	return nil
}

// preferencePage returns the page at /preferences and the public API's
// option making links to it, or nothing without NOTIFY_PREFERENCES_SECRET.
func preferencePage(cfg *config, st *stores, n *notify.Notifier, logger *slog.Logger) ([]route, []httpapi.Option, error) {
	if cfg.prefSecret == nil {
		return nil, nil, nil
	}
	page, err := prefpage.New(prefpage.Config{Secret: cfg.prefSecret, Preferences: st.ledger, Recipients: n,
		Title: cfg.prefTitle, Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(preferencePath, page)
	return []route{{preferencePath, mux}}, []httpapi.Option{httpapi.WithPreferenceLinks(page, cfg.prefURL)}, nil
}

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
