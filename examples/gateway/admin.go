package main

import (
	"log/slog"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi"
)

// adminRoutes mounts the admin API at /admin/v1 when NOTIFY_ADMIN_KEY is
// set; none otherwise, so /admin/v1 then answers the API's 404.
func adminRoutes(cfg *config, st *stores, n *notify.Notifier, logger *slog.Logger) ([]route, error) {
	if cfg.adminKey == "" {
		return nil, nil
	}
	opts := []adminapi.Option{adminapi.WithLogger(logger.With("component", "admin")),
		// An account the gateway could not price is refused at creation.
		adminapi.WithCurrencies(cfg.prices.codes()...)}
	opts = append(opts, suppressionAdmin(st, n)...) // suppress.go
	opts = append(opts, preferenceAdmin(st, n)...)  // preference.go
	h, err := adminapi.New(st.admin, cfg.adminKey, opts...)
	if err != nil {
		return nil, err
	}
	return []route{{adminapi.BasePath + "/", h}}, nil
}
