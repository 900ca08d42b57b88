package main

import (
	"io"
	"log/slog"

	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/provider/logprovider"
)

// newLogger returns the gateway's logger, writing to stdout in the format
// NOTIFY_LOG_FORMAT names: text (the default, slog's key=value lines) or
// json (one JSON object a line).
//
// Every record follows logprovider's masking rule: secrets and one-time
// codes always masked, recipients partly, message content as sent in dev
// mode and never in production mode, which is when any vendor is real
// (config.realVendors). Every record logged within an API request names
// it (request_id; httpapi.NewLogHandler), and the records of a message
// name it (message_id).
func newLogger(cfg *config, stdout io.Writer) *slog.Logger {
	mode := logprovider.Dev
	if cfg.realVendors() {
		mode = logprovider.Production
	}
	opts := &slog.HandlerOptions{ReplaceAttr: mode.ReplaceAttr}
	var h slog.Handler = slog.NewTextHandler(stdout, opts)
	if cfg.logFormat == "json" {
		h = slog.NewJSONHandler(stdout, opts)
	}
	return slog.New(httpapi.NewLogHandler(h))
}
