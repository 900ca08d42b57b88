package smtp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/record"
)

// Provider sends e-mail envelopes over SMTP with pooled keep-alive
// connections. Create one with New and Close it when done; it is safe for
// concurrent use.
type Provider struct {
	name     string
	def      *route
	purposes map[email.Purpose]*route
	pools    []*pool
	closed   atomic.Bool
	bufs     sync.Pool // *[]byte message buffers
	// files fetches attachment URLs; maxFiles bounds a message's
	// attachments (Config.MaxAttachmentBytes).
	files    *netguard.Guard
	maxFiles int64
}

// route is the configuration and pool of one purpose.
type route struct {
	st   *settings
	pool *pool
}

// New checks cfg and returns a Provider. It opens no connection: each pool
// dials when it first needs a connection. Purposes whose configurations
// connect and log in the same way share one pool.
func New(cfg Config) (*Provider, error) {
	if cfg.PoolSize < 0 {
		return nil, errors.New("smtp: PoolSize must not be negative")
	}
	size := cfg.PoolSize
	if size == 0 {
		size = 4
	}
	p := &Provider{
		name:     cfg.Name,
		purposes: make(map[email.Purpose]*route, len(cfg.Purposes)),
	}
	if p.name == "" {
		p.name = "smtp"
	}
	if cfg.MaxAttachmentBytes < 0 {
		return nil, errors.New("smtp: MaxAttachmentBytes must not be negative")
	}
	p.maxFiles = cfg.MaxAttachmentBytes
	if p.maxFiles == 0 {
		p.maxFiles = DefaultMaxAttachmentBytes
	}
	if cfg.AttachmentTimeout <= 0 {
		cfg.AttachmentTimeout = DefaultAttachmentTimeout
	}
	var resolver netguard.Resolver
	if cfg.Resolver != nil {
		resolver = cfg.Resolver
	}
	// The chat media guard, with this provider's limits: one file never
	// reads past the whole message's allowance.
	p.files = netguard.New(netguard.Config{
		Resolver:  resolver,
		Allow:     cfg.AllowAttachmentAddr,
		TLSConfig: cfg.AttachmentTLSConfig,
		MaxBytes:  p.maxFiles,
		Timeout:   cfg.AttachmentTimeout,
	})
	p.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	pools := make(map[poolKey]*pool)
	add := func(what string, s Server) (*route, error) {
		st, err := s.settings()
		if err != nil {
			return nil, fmt.Errorf("smtp: %s: %w", what, err)
		}
		k := st.poolKey()
		pl := pools[k]
		if pl == nil {
			pl = newPool(st, size)
			pools[k] = pl
			p.pools = append(p.pools, pl)
		}
		return &route{st: st, pool: pl}, nil
	}
	var err error
	if p.def, err = add("Default", cfg.Default); err != nil {
		return nil, err
	}
	for purpose, s := range cfg.Purposes {
		switch purpose {
		case email.PurposeOTP, email.PurposeInvoice, email.PurposeNotification, email.PurposeCampaign:
		default:
			return nil, fmt.Errorf("smtp: Purposes: unknown purpose %q", string(purpose))
		}
		if p.purposes[purpose], err = add(fmt.Sprintf("Purposes[%q]", string(purpose)), s); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Name returns the configured name, "smtp" by default.
func (p *Provider) Name() string { return p.name }

func (p *Provider) route(purpose email.Purpose) *route {
	if r, ok := p.purposes[purpose]; ok {
		return r
	}
	return p.def
}

// Send sends email.MessageOf(env) to env.To, and to its Cc and Bcc, in
// one SMTP transaction through the configuration of its purpose, making
// one attempt; the Notifier retries. Attachment URLs are fetched first,
// before a connection is taken (see the package documentation). The Result's
// ProviderMessageID is the message's Message-ID without angle brackets,
// "<notify message ID>@<From domain>", the domain in ASCII.
//
// A connection from the pool that turns out to be dead (the server closed
// it while idle) is replaced once by a fresh one, only when the failure
// proves that the server did not receive the whole message (the final
// dot of DATA was never written, or the server answered 421), so no
// message is sent twice.
//
// Errors follow notify.Provider's three outcomes:
//
//   - certainly not accepted: a bad envelope is InvalidArgument, and so
//     is a to or reply_to with a non-ASCII local part when the relay
//     does not offer SMTPUTF8 (Rejected when it is the configured
//     From), found before anything of the message is written; campaign
//     mail without ListUnsubscribeURL or ListUnsubscribeMailto in its
//     configuration, or a failed DKIM signature, is Rejected; too many
//     attachments or data over Config.MaxAttachmentBytes is
//     InvalidArgument; an attachment URL the guard refuses, an HTTP 4xx
//     answer or files over the limit is Rejected, and a failed fetch
//     otherwise Unavailable; a 4xx reply at any stage, or a failure
//     before the final dot of DATA was written (dial, TLS, login, the
//     MAIL, RCPT and DATA commands, the connection lost while writing the
//     message, ctx ending meanwhile, the provider closed), is
//     Unavailable, which the Notifier retries; a 5xx reply is Rejected.
//   - unknown: the connection lost, timed out or cut by ctx after the
//     final dot was written and before the server's reply, or a reply
//     out of protocol then, is CodeOutcomeUnknown: the server may have
//     queued the message, so nothing retries it.
//
// The server's reply text is kept in the error; logins never are. When
// ctx ends, Send returns at once with an error for which
// errors.Is(err, ctx.Err()) holds, coded as above by whether the final
// dot was written.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapCode(unavailable, fmt.Errorf("smtp: nothing sent: %w", err))
	}
	if p.closed.Load() {
		return nil, wrapCode(unavailable, errClosed)
	}
	w, err := checkEnvelope(env)
	if err != nil {
		return nil, err
	}
	if err := checkAttachments(email.MessageOf(env), p.maxFiles); err != nil {
		return nil, err
	}
	r := p.route(email.MessageOf(env).Purpose)

	// Attachment URLs are fetched here, before a connection is taken:
	// a failed fetch has written nothing to the SMTP server, so it is a
	// certain refusal, and a slow file holds no pooled connection.
	bp := p.bufs.Get().(*[]byte)
	msg, b, err := buildFiles(*bp, r.st, env, w, time.Now(), &fetcher{ctx: ctx, guard: p.files, left: p.maxFiles})
	if cap(b) <= 64<<10 { // do not let one huge message pin memory
		*bp = b[:0]
		p.bufs.Put(bp)
	}
	if err != nil {
		return nil, err
	}
	if r.st.dkim != nil {
		if msg.data, err = r.st.dkim.sign(msg.data); err != nil {
			// Nothing was sent: a certain refusal, not retried, refunded.
			return nil, wrapCode(rejected, fmt.Errorf("smtp: DKIM signing for %s failed: %w", r.st.dkim.domain, err))
		}
	}

	fresh := false
	for {
		// Every error of get comes before anything of the message was
		// written: it is coded Unavailable or Rejected by the pool.
		c, err := r.pool.get(ctx, fresh)
		if err != nil {
			return nil, err
		}
		if !c.smtputf8 {
			if err := needsSMTPUTF8(r.st, w); err != nil {
				// Nothing of the message was written: the connection
				// stays good.
				r.pool.put(c, true)
				return nil, err
			}
		}
		sendErr, tainted := c.send(ctx, r.st, w.rcpt(), msg.data)
		if sendErr == nil {
			c.reused = true
			r.pool.put(c, !tainted)
			return &notify.Result{Provider: p.name, ProviderMessageID: msg.id}, nil
		}
		err, keep, redial := p.classify(ctx, r, c, env.To, w.rcpt(), sendErr)
		reused := c.reused
		r.pool.put(c, keep && !tainted)
		// redial is only ever set for a certain non-acceptance, so the
		// message cannot reach the server twice.
		if redial && reused && !fresh && notify.OutcomeOf(err) == record.StateFailed {
			fresh = true
			continue
		}
		return nil, err
	}
}

// needsSMTPUTF8 returns the error for a message that a relay without
// SMTPUTF8 cannot carry, or nil: a non-ASCII local part in the configured
// From, to or reply_to (RFC 6531, 6532). A relay without SMTPUTF8 would
// refuse it, or worse, take it and pass on a malformed message, so it is
// refused before MAIL FROM, a certain non-acceptance: InvalidArgument on
// the envelope's fields, which another address fixes, or Rejected for
// From, which only the configuration (or the relay) can fix.
func needsSMTPUTF8(st *settings, w wire) error {
	const why = "has a non-ASCII local part, which needs SMTPUTF8 (RFC 6531), and the mail relay does not offer SMTPUTF8; nothing was sent"
	if st.fromUTF8 {
		return notify.Errorf(rejected, "smtp: the configured From address %s", why)
	}
	if len(w.utf8) == 0 {
		return nil
	}
	var fe record.FieldErrors
	for _, f := range w.utf8 {
		fe.Add(f, why)
	}
	return notify.InvalidFields(fe)
}

// classify turns a failed send into the error to return, and says whether
// the connection may be kept and whether a fresh connection may try again.
//
//lint:ignore ST1008 out is the classified error to return, not a failure of classify
func (p *Provider) classify(ctx context.Context, r *route, c *conn, to string, rcpt []string, err error) (out error, keep, redial bool) {
	where := r.st.addr
	dotSent := c.track.finalDotMaySent()
	raw := err
	err = r.pool.secrets.scrub(err)
	code, hasReply := replyCode(err)
	if hasReply && code >= 400 && code < 600 {
		// The server answered: whatever the stage, it did not take the
		// message. The connection is kept, after RSET, unless ctx ended
		// (its deadline may land on the connection any moment).
		e := fmt.Errorf("smtp: send to %s via %s: server replied %w", to, where, err)
		switch {
		case code == 421:
			// The server is closing the connection.
			return wrapCode(unavailable, e), false, true
		case code < 500:
			return wrapCode(unavailable, e), ctx.Err() == nil && c.reset(r.st), false
		case len(rcpt) > 1:
			// With cc or bcc, the write the server refused tells whose
			// address it refused: MAIL FROM is the first, the RCPT TO of
			// rcpt[i] the (i+2)th. A refusal of a cc or bcc is that
			// address's bounce, never To's; one of the whole message
			// (DATA) is nobody's. Still a certain refusal.
			if i := c.track.writes - 2; i >= 0 && i < len(rcpt) {
				return wrapCode(rejected, bounceOf(e, rcpt, i)), ctx.Err() == nil && c.reset(r.st), false
			}
			return notify.WithCode(rejected, e), ctx.Err() == nil && c.reset(r.st), false
		default:
			return wrapCode(rejected, e), ctx.Err() == nil && c.reset(r.st), false
		}
	}
	if cerr := ctxErr(ctx, raw); cerr != nil {
		if dotSent {
			return wrapCode(unknown, fmt.Errorf("smtp: send to %s via %s: %w after the message was sent, before the server answered; it may have been delivered (%v)", to, where, cerr, err)), false, false
		}
		return wrapCode(unavailable, fmt.Errorf("smtp: send to %s via %s: %w before the message was sent (%v)", to, where, cerr, err)), false, false
	}
	if hasReply {
		// A reply out of protocol: the connection cannot be trusted.
		e := fmt.Errorf("smtp: send to %s via %s: server replied %w", to, where, err)
		if dotSent {
			return wrapCode(unknown, fmt.Errorf("%w; the message may have been delivered", e)), false, false
		}
		return wrapCode(unavailable, e), false, false
	}
	if !dotSent {
		var ne net.Error
		timeout := errors.As(err, &ne) && ne.Timeout()
		return wrapCode(unavailable, fmt.Errorf("smtp: send to %s via %s: connection failed before the message was sent: %w", to, where, err)),
			false, !timeout
	}
	return wrapCode(unknown, fmt.Errorf("smtp: send to %s via %s: connection lost after the message was sent, before the server answered; it may have been delivered: %w", to, where, err)), false, false
}

// CheckHealth is the readiness check of notify.Provider: it takes a connection of
// the default configuration (dialling one if none is open) and sends
// NOOP.
func (p *Provider) CheckHealth(ctx context.Context) error {
	if p.closed.Load() {
		return wrapCode(unavailable, errClosed)
	}
	c, err := p.def.pool.get(ctx, false)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(p.def.st.SendTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.tcp.SetDeadline(deadline)
	err = c.client.Noop()
	p.def.pool.put(c, err == nil)
	if err != nil {
		return wrapCode(unavailable, fmt.Errorf("smtp: NOOP to %s: %w", p.def.st.addr, p.def.pool.secrets.scrub(err)))
	}
	return nil
}

// Close closes every open connection; connections in use close when
// their send ends. Sends after Close fail with Unavailable. It always
// returns nil and may be called more than once.
func (p *Provider) Close() error {
	p.closed.Store(true)
	for _, pl := range p.pools {
		pl.close()
	}
	return nil
}

// Interface guards
var (
	_ notify.Provider = (*Provider)(nil)
)
