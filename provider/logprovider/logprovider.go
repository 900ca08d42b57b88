package logprovider

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/mask"
)

// Mask replaces an OTP code in logged text.
const Mask = "******"

// Provider logs envelopes instead of sending them. Create one with New; it
// is safe for concurrent use.
type Provider struct {
	logger *slog.Logger
	name   string
	mode   Mode
	seq    atomic.Uint64
}

// Option configures a Provider.
type Option func(*Provider)

// WithMode sets how much of each message's content the log shows (see
// Mode). Default: Dev, message text as sent, codes masked.
func WithMode(m Mode) Option { return func(p *Provider) { p.mode = m } }

// New returns a Provider called name that logs through logger. A nil
// logger means slog.Default() at the time of each send; an empty name
// means "logprovider".
func New(logger *slog.Logger, name string, opts ...Option) *Provider {
	if name == "" {
		name = "logprovider"
	}
	p := &Provider{logger: logger, name: name}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Name returns the name given to New.
func (p *Provider) Name() string { return p.name }

// Send logs env at slog.LevelInfo and returns a Result whose
// ProviderMessageID is "log-<n>", n counting from 1. It does not retain
// env.
//
// The log is the vendor: a message is accepted once it is handed to the
// logger, and Send never fails after that, whatever the logger does with
// it (a level above Info drops it, a handler error is slog's to swallow).
// Before that, its only errors are certain refusals, with nothing logged:
// CodeInvalidArgument for a nil envelope, and, when ctx has already
// ended, CodeUnavailable wrapping ctx.Err() (errors.Is(err, ctx.Err())
// holds). That takes a code because a bare context error means "unknown
// outcome" to the Notifier, which would keep the charge of a message
// nobody has.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, notify.WithCode(notify.CodeUnavailable, fmt.Errorf("logprovider: nothing logged: %w", err))
	}
	if env == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "logprovider: nil envelope")
	}
	id := "log-" + strconv.FormatUint(p.seq.Add(1), 10)
	logger := p.logger
	if logger == nil {
		logger = slog.Default()
	}
	if logger.Enabled(ctx, slog.LevelInfo) {
		logger.LogAttrs(ctx, slog.LevelInfo, "notify message", attrs(p.name, id, env, p.mode)...)
	}
	return &notify.Result{Provider: p.name, ProviderMessageID: id}, nil
}

// attrs describes env for the log, with every secret masked and, in
// Production mode, no content.
func attrs(provider, id string, env *notify.Envelope, mode Mode) []slog.Attr {
	a := make([]slog.Attr, 0, 10)
	a = append(a,
		slog.String("provider", provider),
		slog.String("provider_message_id", id),
		slog.String("message_id", env.ID),
		slog.String("kind", string(env.Kind)),
		slog.String("to", MaskRecipient(env.To)),
	)
	if env.Account != nil {
		a = append(a, slog.String("account", env.Account.ID))
	}
	if env.Units > 0 {
		a = append(a, slog.Int("units", env.Units))
	}
	if env.Domain != "" {
		a = append(a, slog.String("domain", env.Domain))
	}
	// A message that may hold a code it did not declare has every run of
	// OTP-length digits masked, in every field alike (mask.Digits).
	digits := mask.Digits(env)
	switch {
	case sms.MessageOf(env) != nil:
		a = append(a, smsAttr(sms.MessageOf(env), digits, mode))
	case email.MessageOf(env) != nil:
		a = append(a, emailAttr(email.MessageOf(env), digits, mode))
	case chat.MessageOf(env) != nil:
		a = append(a, chatAttr(chat.MessageOf(env), digits, mode))
	case push.MessageOf(env) != nil:
		a = append(a, pushAttr(push.MessageOf(env), digits, mode))
	}
	return a
}

func smsAttr(m *sms.Message, digits bool, mode Mode) slog.Attr {
	a := []any{
		slog.String("route", string(m.Route)),
		slog.String("sender_id", m.SenderID),
		slog.Int("text_len", utf8.RuneCountInString(m.Text)),
		slog.String("text", mode.redacted(m.Text, m.OTP, digits)),
	}
	if m.OTP != "" {
		a = append(a, slog.String("otp", Mask))
	}
	if m.Encoding != "" {
		a = append(a, slog.String("encoding", string(m.Encoding)))
	}
	if m.Segments > 0 {
		a = append(a, slog.Int("segments", m.Segments))
	}
	if m.DLTTemplateID != "" {
		a = append(a, slog.String("dlt_template_id", m.DLTTemplateID), slog.String("dlt_entity_id", m.DLTEntityID))
	}
	if len(m.DLTValues) > 0 {
		a = append(a, contentList("dlt_values", m.DLTValues, m.OTP, digits, mode))
	}
	return slog.Group("sms", a...)
}

// emailAttr describes an e-mail; bodies are not logged at all, only
// their lengths. The subject loses the declared code, of up to 10 digits,
// as well as the runs of digits mask.Digits asks for.
func emailAttr(m *email.Message, digits bool, mode Mode) slog.Attr {
	a := []any{
		slog.String("purpose", string(m.Purpose)),
		slog.String("subject", mode.redacted(m.Subject, m.OTP, digits)),
		slog.Int("text_len", utf8.RuneCountInString(m.Text)),
		slog.Int("html_len", utf8.RuneCountInString(m.HTML)),
	}
	if m.OTP != "" {
		a = append(a, slog.String("otp", Mask))
	}
	if m.FromName != "" {
		a = append(a, slog.String("from_name", m.FromName))
	}
	if m.ReplyTo != "" {
		a = append(a, slog.String("reply_to", MaskRecipient(m.ReplyTo)))
	}
	return slog.Group("email", a...)
}

func chatAttr(m *chat.Message, digits bool, mode Mode) slog.Attr {
	a := []any{
		slog.String("gateway", string(m.Gateway)),
		slog.String("type", string(m.Type)),
		slog.Int("text_len", utf8.RuneCountInString(m.Text)),
		slog.String("text", mode.redacted(m.Text, m.OTP, digits)),
	}
	if m.Auto {
		a = append(a, slog.Bool("auto", true))
	}
	if m.OTP != "" {
		a = append(a, slog.String("otp", Mask))
	}
	if t := m.Template; t != nil {
		a = append(a, templateAttr(t, m.OTP, digits, mode))
	}
	if md := m.Media; md != nil {
		a = append(a, slog.Group("media",
			slog.String("kind", string(md.Kind)),
			slog.String("url", stripQuery(md.URL)),
			slog.String("file_name", md.FileName),
			slog.String("mime_type", md.MIMEType),
		))
	}
	return slog.Group("chat", a...)
}

// pushAttr describes a push: its text as the other kinds' (a code in it
// masked), the link without its query, the data's keys only; never the
// subscription's keys.
func pushAttr(m *push.Message, digits bool, mode Mode) slog.Attr {
	a := []any{
		slog.String("title", mode.redacted(m.Title, "", digits)),
		slog.Int("text_len", utf8.RuneCountInString(m.Body)),
		slog.String("text", mode.redacted(m.Body, "", digits)),
		slog.Int("ttl_seconds", int(m.TTL.Seconds())),
		slog.String("urgency", string(m.Urgency)),
	}
	if m.Link != "" {
		a = append(a, slog.String("link", stripQuery(m.Link)))
	}
	if len(m.Data) > 0 {
		a = append(a, slog.Int("data_keys", len(m.Data)))
	}
	return slog.Group("push", a...)
}

// templateAttr describes a cloud template, its values masked as the rest
// of the message.
func templateAttr(t *chat.Template, otp string, digits bool, mode Mode) slog.Attr {
	g := []any{
		slog.String("name", t.Name),
		slog.String("language", t.Language),
	}
	if len(t.Params) > 0 {
		g = append(g, contentList("params", t.Params, otp, digits, mode))
	}
	switch {
	case len(t.NamedParams) > 0 && mode == Production:
		g = append(g, slog.String("named_params", Withheld))
	case len(t.NamedParams) > 0:
		named := make(map[string]string, len(t.NamedParams))
		for k, v := range t.NamedParams {
			named[k] = Redact(v, otp, digits)
		}
		g = append(g, slog.Any("named_params", named))
	}
	if t.HeaderText != "" {
		g = append(g, slog.String("header_text", mode.redacted(t.HeaderText, otp, digits)))
	}
	if t.HeaderURL != "" {
		g = append(g, slog.String("header_url", stripQuery(t.HeaderURL)), slog.String("header_kind", string(t.HeaderKind)))
	}
	for _, b := range t.Buttons {
		g = append(g, slog.String("button_"+strconv.Itoa(b.Index), string(b.Kind)+": "+mode.redacted(b.Value, otp, digits)))
	}
	return slog.Group("template", g...)
}

// stripQuery drops the query and fragment of a URL, where signed links
// keep their tokens.
func stripQuery(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "[unparsable url]"
	}
	u.RawQuery, u.Fragment, u.RawFragment, u.User = "", "", "", nil
	return u.String()
}

// contentList logs a list of message values under key: redacted in Dev,
// Withheld in Production.
func contentList(key string, values []string, otp string, digits bool, mode Mode) slog.Attr {
	if mode == Production {
		return slog.String(key, Withheld)
	}
	return slog.Any(key, redactAll(values, otp, digits))
}

func redactAll(values []string, otp string, digits bool) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = Redact(v, otp, digits)
	}
	return out
}

// Redact returns text with every occurrence of otp replaced by Mask and,
// when digits is true, every run of 4 to 8 ASCII digits (the length of an
// OTP) replaced by Mask as well. Longer runs, such as phone numbers, are
// kept. An empty otp masks nothing by itself. The development outbox
// hides the same spans (they come from one rule).
func Redact(text, otp string, digits bool) string {
	return mask.Replace(text, otp, digits, Mask)
}

// MaskRecipient hides most of a recipient: a number keeps its first two
// and last two characters ("9876543210" becomes "98xxxxxx10"), an e-mail
// address keeps the first character of its local part and its domain
// ("riya@example.com" becomes "r***@example.com"). Anything of 4
// characters or fewer is masked whole.
func MaskRecipient(to string) string {
	if at := strings.LastIndexByte(to, '@'); at >= 0 {
		local, domain := to[:at], to[at+1:]
		if local == "" {
			return "***@" + domain
		}
		_, size := utf8.DecodeRuneInString(local)
		return local[:size] + "***@" + domain
	}
	n := utf8.RuneCountInString(to)
	if n <= 4 {
		return strings.Repeat("x", n)
	}
	r := []rune(to)
	return string(r[:2]) + strings.Repeat("x", n-4) + string(r[n-2:])
}

// Interface guards
var _ notify.Provider = (*Provider)(nil)
