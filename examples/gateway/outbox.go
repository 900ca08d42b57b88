package main

import (
	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

// outbox is the development outbox, GET /outbox; nil when off.
type outbox struct{}

// newOutbox returns the outbox, or nil when cfg turns it off.
func newOutbox(cfg *config) *outbox {
	if !cfg.outbox {
		return nil
	}
	return &outbox{}
}

// received takes a message the in-process SMTP server received.
func (b *outbox) received(m smtptest.Message) {}

// options are the Notifier options that feed the outbox.
func (b *outbox) options() []notify.Option { return nil }

// routes are /outbox and what its page loads.
func (b *outbox) routes(cfg *config) []route { return nil }
