package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
)

// smtpServer turns NOTIFY_SMTP_URL into the provider's configuration:
//
//	smtp://host:25?from=alerts@shop.example                      no encryption
//	smtp://user:pass@host:587?starttls=1&from=alerts@shop.example
//	smtps://user:pass@host:465?from=alerts@shop.example          implicit TLS
//
// Query parameters (the README's configuration table lists them too):
// from=<address>, required, since no default is an address the relay may
// send for; starttls=1; from_name=<name> (default "Notify");
// unsubscribe=<https URL or mailto:> for campaign mail (default
// mailto:unsubscribe@<from domain>). Errors never repeat the password.
func smtpServer(u *url.URL) (smtp.Server, error) {
	q := u.Query()
	s := smtp.Server{Host: u.Hostname(), FromName: "Notify", Encryption: smtp.EncryptionNone}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return s, fmt.Errorf("NOTIFY_SMTP_URL: bad port")
		}
		s.Port = n
	}
	switch {
	case u.Scheme == "smtps":
		s.Encryption = smtp.EncryptionImplicitTLS
	case q.Get("starttls") == "1" || q.Get("starttls") == "true":
		s.Encryption = smtp.EncryptionSTARTTLS
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	s.From = q.Get("from")
	if s.From == "" {
		return s, fmt.Errorf("NOTIFY_SMTP_URL: from= is required: the address mail goes out from, such as ?from=alerts@shop.example")
	}
	if a, err := mail.ParseAddress(s.From); err != nil || a.Name != "" || a.Address != s.From {
		return s, fmt.Errorf("NOTIFY_SMTP_URL: from= must be a bare e-mail address, such as alerts@shop.example (the name goes in from_name=)")
	}
	if n := q.Get("from_name"); n != "" {
		s.FromName = n
	}
	switch un := q.Get("unsubscribe"); {
	case strings.HasPrefix(un, "mailto:"):
		s.ListUnsubscribeMailto = un
	case un != "":
		s.ListUnsubscribeURL = un
	default:
		s.ListUnsubscribeMailto = "mailto:unsubscribe@" + s.From[strings.LastIndexByte(s.From, '@')+1:]
	}
	return s, nil
}

// mailer returns the SMTP provider, a line describing where mail goes, and
// a function that releases what it opened: the provider's connections and,
// without NOTIFY_SMTP_URL, the in-process SMTP server whose messages are
// logged, with the codes in codes hidden.
func mailer(cfg *config, logger *slog.Logger, box *devOutbox, codes *mailCodes) (*smtp.Provider, string, func(), error) {
	var srv smtp.Server
	var info string
	closeDev := func() {}
	if cfg.smtp != nil {
		srv = *cfg.smtp
		srv.Helo, srv.DKIM, srv.UnsubscribeSecret = cfg.smtpHelo, cfg.dkim, cfg.unsubscribeSecret
		info = fmt.Sprintf("SMTP server %s:%d (%s)", srv.Host, srv.Port, srv.Encryption)
		if cfg.dkim.Domain != "" {
			info += ", DKIM-signed for " + cfg.dkim.Domain
		}
	} else {
		// SMTPUTF8, as most relays offer it: addresses with non-ASCII
		// local parts are shown in development rather than refused.
		dev, err := smtptest.Start(smtptest.WithOnMessage(func(m smtptest.Message) {
			logSMTP(logger, codes)(m)
			box.received(m)
		}), smtptest.WithRetain(100), smtptest.WithSMTPUTF8())
		if err != nil {
			return nil, "", nil, fmt.Errorf("starting the development SMTP server: %w", err)
		}
		closeDev = dev.Close
		srv = smtp.Server{Host: dev.Host, Port: dev.Port, Encryption: smtp.EncryptionNone,
			From: "notify@localhost", FromName: "Notify", ListUnsubscribeMailto: "mailto:unsubscribe@localhost"}
		info = "development SMTP server on " + dev.Addr + " (messages are logged, not delivered; set NOTIFY_SMTP_URL)"
	}
	maxFiles, err := maxAttachmentBytes()
	if err != nil {
		closeDev()
		return nil, "", nil, err
	}
	mc := smtp.Config{Default: srv, MaxAttachmentBytes: maxFiles}
	if cfg.devAttachments {
		// NOTIFY_DEV_ATTACHMENTS=loopback: files served on this machine,
		// named under .test (RFC 6761), which resolves to it.
		mc.AllowAttachmentAddr = netip.Addr.IsLoopback
		mc.Resolver = devResolver{}
		if cfg.devAttachmentsCA != nil {
			mc.AttachmentTLSConfig = &tls.Config{RootCAs: cfg.devAttachmentsCA, MinVersion: tls.VersionTLS12}
		}
	}
	p, err := smtp.New(mc)
	if err != nil {
		closeDev()
		return nil, "", nil, fmt.Errorf("NOTIFY_SMTP_URL: %w", err)
	}
	return p, info, func() { _ = p.Close(); closeDev() }, nil
}

// emailChannel returns the e-mail channel, its provider, a line describing
// where mail goes, and a function that releases what it opened. The
// in-process SMTP server hands what it receives to box, and logs it with
// the codes codes heard of hidden.
func emailChannel(cfg *config, renderer notify.TemplateRenderer, logger *slog.Logger, box *devOutbox, codes *mailCodes) (notify.Channel, *smtp.Provider, string, func(), error) {
	p, info, closeMail, err := mailer(cfg, logger, box, codes)
	if err != nil {
		return nil, nil, "", nil, err
	}
	ch, err := email.New(email.Config{Provider: p, Renderer: renderer})
	if err != nil {
		closeMail()
		return nil, nil, "", nil, err
	}
	return ch, p, info, closeMail, nil
}

// maxMailCodes is how many declared codes mailCodes remembers: far more
// than can be on their way to the in-process SMTP server at once.
const maxMailCodes = 1024

// mailCodes remembers the one-time codes that recent e-mails declare
// (email.Message.OTP, up to 10 digits), by message ID, so that the log of
// the in-process SMTP server hides them in what it shows of a received
// mail (its subject) as the logging providers and the outbox do: that log
// sees only the mail as received, where a code longer than 8 digits looks
// like any other number. It is a notify.Observer: a message is observed
// as it is accepted (StatePending), before it reaches the SMTP server,
// whose mail names it in its Message-ID (provider/smtp). Its methods do
// nothing on a nil *mailCodes (a real SMTP relay: nothing is logged).
type mailCodes struct {
	mu    sync.Mutex
	byID  map[string]string
	order []string // the IDs in byID, oldest first
}

// newMailCodes returns the codes of the in-process SMTP server's log, or
// nil when mail goes to a real relay (NOTIFY_SMTP_URL).
func newMailCodes(cfg *config) *mailCodes {
	if cfg.smtp != nil {
		return nil
	}
	return &mailCodes{byID: make(map[string]string)}
}

// options are the Notifier options that feed the codes.
func (c *mailCodes) options() []notify.Option {
	if c == nil {
		return nil
	}
	return []notify.Option{notify.WithObserver(c)}
}

// Observe remembers the declared code of an e-mail as it is accepted,
// forgetting the oldest beyond maxMailCodes.
func (c *mailCodes) Observe(_ context.Context, e notify.Event) {
	if c == nil || e.Type != record.StatePending || e.Envelope == nil || e.Envelope.ID == "" {
		return
	}
	m := email.MessageOf(e.Envelope)
	if m == nil || m.OTP == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byID[e.Envelope.ID]; !ok {
		c.order = append(c.order, e.Envelope.ID)
	}
	c.byID[e.Envelope.ID] = m.OTP
	for len(c.order) > maxMailCodes {
		delete(c.byID, c.order[0])
		c.order[0] = ""
		c.order = c.order[1:]
	}
}

// of returns the code that the received mail m declared when it was sent,
// found by the local part of its Message-ID, or "".
func (c *mailCodes) of(m smtptest.Message) string {
	if c == nil || m.Header == nil {
		return ""
	}
	id := strings.Trim(m.Header.Get("Message-ID"), "<> ")
	if at := strings.LastIndexByte(id, '@'); at >= 0 {
		id = id[:at]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}

// devResolver resolves the names under .test (RFC 6761 keeps the name
// for testing: no public name ends so) to this machine, 127.0.0.1, and
// every other name as the system does, for NOTIFY_DEV_ATTACHMENTS: a
// file served locally is named https://files.test:8443/..., since
// attachment URLs must name a host, not an address or localhost.
type devResolver struct{}

func (devResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if h := strings.TrimSuffix(strings.ToLower(host), "."); strings.HasSuffix(h, ".test") {
		if network == "ip6" {
			return []netip.Addr{netip.IPv6Loopback()}, nil
		}
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}
