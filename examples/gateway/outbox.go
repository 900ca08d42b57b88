package main

import (
	"log/slog"
	"net/http"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/outbox"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

// devOutbox is the development outbox, GET /outbox: the messages the
// gateway sent, as their recipients would see them. Its methods do nothing
// on a nil *devOutbox (NOTIFY_OUTBOX off).
type devOutbox struct {
	box    *outbox.Outbox
	logger *slog.Logger
}

// newOutbox returns the outbox, or nil when cfg turns it off.
func newOutbox(cfg *config, logger *slog.Logger) (*devOutbox, error) {
	if !cfg.outbox {
		return nil, nil
	}
	box, err := outbox.New(outbox.WithDevelopmentProviders(developmentProviders(cfg)...))
	if err != nil {
		return nil, err
	}
	return &devOutbox{box: box, logger: logger}, nil
}

// developmentProviders are the providers whose codes the outbox may
// reveal on a click: the logging stand-ins and the in-process SMTP
// server's client, while no real vendor is configured. Once one is, none:
// a verification or a dual OTP sends one live code by a real vendor and a
// stand-in alike, so a stand-in's copy is as live as the vendor's, and
// the outbox masks every code for good.
func developmentProviders(cfg *config) []string {
	if cfg.realVendors() {
		return nil
	}
	return []string{smsLogProvider, cloudLogProvider, qrLogProvider, webPushLogProvider, fcmLogProvider, "smtp"}
}

// received shows a message the in-process SMTP server received as it
// arrived: headers, parts and attachments.
func (b *devOutbox) received(m smtptest.Message) {
	if b == nil {
		return
	}
	if err := b.box.AddMail(m.Data, m.To); err != nil {
		b.logger.Warn("outbox: received mail not shown", "error", err)
	}
}

// options are the Notifier options that feed the outbox.
func (b *devOutbox) options() []notify.Option {
	if b == nil {
		return nil
	}
	return []notify.Option{notify.WithObserver(b.box)}
}

// routes are /outbox and what its page loads. With real vendors the
// outbox shows real people's messages: it then asks for the admin key, as
// the password of HTTP basic authentication (which a browser prompts for)
// or as a bearer token.
func (b *devOutbox) routes(cfg *config) []route {
	if b == nil {
		return nil
	}
	var h http.Handler = b.box
	if cfg.realVendors() {
		h = requireKey(cfg.adminKey, "NOTIFY_ADMIN_KEY", "notify outbox", h)
	}
	return []route{{outbox.DefaultBasePath, h}, {outbox.DefaultBasePath + "/", h}}
}

// close ends the outbox's event streams, which an http.Server's Shutdown
// would otherwise wait for.
func (b *devOutbox) close() {
	if b != nil {
		b.box.Close()
	}
}

// The names of the logging stand-ins for vendors: development providers.
const (
	smsLogProvider   = "sms-log"
	cloudLogProvider = "cloud-log"
	qrLogProvider    = "qr-log"
)
