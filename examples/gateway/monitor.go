package main

import (
	"log/slog"

	"github.com/notifykit/notify"
)

// monitor holds the gateway's health and metrics endpoints.
type monitor struct{}

// newMonitor reads the monitoring configuration.
func newMonitor(env func(string) string, logger *slog.Logger) (*monitor, error) {
	return &monitor{}, nil
}

// options are the Notifier options that feed the metrics.
func (m *monitor) options() []notify.Option { return nil }

// routes are /healthz, /readyz and /metrics.
func (m *monitor) routes(st *stores, providers []notify.Provider) []route { return nil }
