package email

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/internal/reqcodec"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/sendwindow"
)

// Limits of the request fields the channel checks.
const (
	// MaxSubjectLen is the longest subject, in bytes: the longest line RFC
	// 5322 allows.
	MaxSubjectLen = 998
	// MaxFromNameLen is the longest from_name, in characters; the rule
	// itself is the from_name tag of Request.
	MaxFromNameLen = 100
	// MaxMessageLen is the longest message body, in bytes.
	MaxMessageLen = 1 << 20
	// MinOTPDigits and MaxOTPDigits bound a declared code (Request.OTP),
	// in ASCII digits: e-mail takes longer codes than SMS and chat (4 to
	// 8), as package verify sends them.
	MinOTPDigits = 4
	MaxOTPDigits = 10
)

// Config configures a Channel.
type Config struct {
	// Provider delivers every message of the channel, such as an
	// *smtp.Provider. Required.
	Provider notify.Provider
	// Renderer renders requests with a template_slug from the template's
	// e-mail form. Optional: without it such requests are refused with
	// InvalidArgument on template_slug. Default none.
	Renderer notify.TemplateRenderer
	// Windows are the hours in which e-mail may go (package sendwindow),
	// such as quiet hours for campaign mail (class promotional); a
	// message outside its window is scheduled on the Notifier's queue for
	// the opening (notify.Envelope.Window). An address has no country, so
	// only windows without one apply. Messages with a one-time code are
	// never held. Default none.
	Windows sendwindow.Rules
}

// Channel is the e-mail channel. It implements notify.Channel for
// email.Kind; create it with New. It is safe for concurrent use and keeps
// no state between sends.
type Channel struct {
	provider     notify.Provider
	providerName string
	renderer     notify.TemplateRenderer
	windows      sendwindow.Rules
}

// New returns a Channel that sends through cfg.Provider. It fails when the
// provider is missing.
func New(cfg Config) (*Channel, error) {
	if nilness.Is(cfg.Provider) {
		return nil, errors.New("email: Config.Provider is nil: set a provider, and check its constructor's error")
	}
	if err := cfg.Windows.Check(); err != nil {
		return nil, fmt.Errorf("email: Config.Windows: %w", err)
	}
	return &Channel{
		provider:     cfg.Provider,
		providerName: cfg.Provider.Name(),
		renderer:     cfg.Renderer,
		windows:      slices.Clone(cfg.Windows),
	}, nil
}

// Kind returns Kind.
func (c *Channel) Kind() notify.Kind { return Kind }

// Recipient implements notify.Channel with the package's Recipient.
func (c *Channel) Recipient(to string) (string, error) { return Recipient(to) }

// Recipient returns the address addr in the one form the lists kept by
// recipient use: without surrounding space, in lower case, since
// mailbox providers treat local parts case-insensitively, and with its
// domain in ASCII (IDNA A-labels, as rules.ASCIIDomain converts it and
// SMTP carries it), since "ann@bücher.example" and
// "ann@xn--bcher-kva.example" are one mailbox. A list that missed either
// spelling for the other would send to someone who opted out. An
// address of more than 254 bytes (as given, or with its domain in
// ASCII), with a space, a control character or one of <>, or whose
// domain is not a valid internationalised domain name, is
// InvalidArgument naming "to". It is the e-mail channel's
// notify.Channel.Recipient: suppression, the OTP throttle, request
// fingerprints, delivery reports and the admin API all key e-mail
// recipients by it, and provider/smtp's unsubscribe links write to the
// list through it.
func Recipient(addr string) (string, error) {
	to := strings.ToLower(strings.TrimSpace(addr))
	at := strings.LastIndexByte(to, '@')
	if at <= 0 || at == len(to)-1 || len(to) > 254 {
		return "", notify.InvalidField("to", "must be an e-mail address of at most 254 bytes")
	}
	for _, c := range to {
		if c <= ' ' || c == 0x7f || c == '<' || c == '>' || c == ',' {
			return "", notify.InvalidField("to", "must be one e-mail address, without spaces or control characters")
		}
	}
	ascii, ok := rules.ASCIIAddress(to)
	switch {
	case !ok:
		return "", notify.InvalidField("to", "must have a valid internationalised domain name after the @")
	case len(ascii) > 254:
		return "", notify.InvalidField("to", "must be at most 254 bytes once its domain is in ASCII (punycode)")
	}
	return ascii, nil
}

// Prepare validates and normalises an *Request for acct and
// renders its template, as the package documentation describes. It
// returns the envelope with Kind, To, Provider, Units (one per
// recipient: 1 + len(cc) + len(bcc)), Class, Route,
// Domain, CarriesOTP and the *Message as Content set. Every bad field is
// reported in one InvalidArgument error; a failing renderer's other
// errors are returned as they are.
// Prepare has no side effects and does not retain req.
func (c *Channel) Prepare(ctx context.Context, acct *notify.Account, req notify.Request) (*notify.Envelope, error) {
	r, ok := req.(*Request)
	if !ok || r == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "email: the e-mail channel cannot send %T", req)
	}
	if acct == nil {
		return nil, notify.Errorf(notify.CodeInternal, "email: Prepare needs an account")
	}
	var fe record.FieldErrors
	rules.Check(&fe, r) // to, reply_to, purpose, from_name, domain; subject and message shapes
	// from_name's tag is the header rule it shares with subject; a display
	// name also refuses invisible and bidirectional characters and
	// encoded words, which the subject (always encoded when sent) need not.
	if r.FromName != "" && !fe.Has("from_name") {
		if why := rules.DisplayName(r.FromName); why != "" {
			fe.Add("from_name", why)
		}
	}

	// Addresses are checked with surrounding spaces allowed, and sent
	// without them.
	to, replyTo := strings.TrimSpace(r.To), strings.TrimSpace(r.ReplyTo)
	purpose := r.Purpose
	msg := &Message{Purpose: purpose, FromName: r.FromName, ReplyTo: replyTo}
	if r.Subject != "" && !fe.Has("subject") && checkSubject(&fe, "subject", r.Subject) {
		msg.Subject = r.Subject
	}

	var varies bool // the template has variants: a locale could word it otherwise
	if r.TemplateSlug != "" {
		var err error
		if varies, err = c.renderTemplate(ctx, &fe, acct, r, msg); err != nil {
			return nil, err
		}
	} else if !fe.Has("message") {
		checkBody(&fe, r.Message, msg)
	}
	if r.OTP != "" && checkOTP(&fe, r.OTP, msg) {
		msg.OTP = r.OTP
	}
	checkRecipients(&fe, r, msg)
	checkAttachments(&fe, r.Attachments, msg)

	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	class := record.Transactional
	if purpose == PurposeCampaign {
		class = record.Promotional
	}
	env := &notify.Envelope{
		Kind:     Kind,
		To:       to,
		Provider: c.providerName,
		// Priced per recipient: each is a delivery the relay makes.
		Units:    1 + len(msg.Cc) + len(msg.Bcc),
		Class:    class,
		Route:    string(purpose),
		Domain:   r.Domain,
		Category: r.Category,
		Content:  msg,
		Window:   c.windows.For(class, "", to),
		// OTP mail, a declared code, or a template filled with a code.
		CarriesOTP: r.Purpose == PurposeOTP || msg.OTP != "" ||
			(r.TemplateSlug != "" && strings.TrimSpace(r.Variables["OTP"]) != ""),
	}
	if varies && r.Locale == "" {
		env.Localized = reqcodec.Localized(r, setLocale)
	}
	return env, nil
}

// renderTemplate fills msg from the request's template, and reports the
// template's Rendered.Varies. A subject given in the request overrides
// the template's.
func (c *Channel) renderTemplate(ctx context.Context, fe *record.FieldErrors, acct *notify.Account, r *Request, msg *Message) (bool, error) {
	if c.renderer == nil {
		fe.Add("template_slug", "templates are not configured on this e-mail channel")
		return false, nil
	}
	rd, err := c.renderer.Render(ctx, Kind, acct, r.TemplateSlug, r.Locale, r.Variables)
	if err != nil {
		var ne *notify.Error
		if errors.As(err, &ne) && ne.Code == notify.CodeInvalidArgument {
			if len(ne.Fields) == 0 {
				fe.Add("template_slug", strings.TrimPrefix(err.Error(), string(notify.CodeInvalidArgument)+": "))
			}
			*fe = append(*fe, ne.Fields...)
			return false, nil
		}
		return false, err
	}
	if rd == nil {
		return false, notify.Errorf(notify.CodeInternal, "email: renderer returned no template for %s", rules.Clip(r.TemplateSlug))
	}
	if strings.TrimSpace(rd.HTML) == "" && strings.TrimSpace(rd.Text) == "" {
		fe.Addf("template_slug", "template %s has no e-mail form", rules.Clip(r.TemplateSlug))
		return false, nil
	}
	if r.Subject == "" {
		switch {
		case strings.TrimSpace(rd.Subject) == "":
			fe.Addf("subject", "is required: template %s has no subject", rules.Clip(r.TemplateSlug))
		case !checkSubject(fe, "variables", rd.Subject):
		default:
			msg.Subject = rd.Subject
		}
	}
	msg.HTML, msg.Text = rd.HTML, rd.Text
	if msg.HTML != "" && strings.TrimSpace(msg.Text) == "" {
		msg.Text = HTMLToText(msg.HTML)
	}
	return rd.Varies, nil
}

// checkBody checks a direct message, present and not blank (its tag says
// so), and puts it in msg as HTML with a generated text alternative, or as
// plain text.
func checkBody(fe *record.FieldErrors, body string, msg *Message) {
	switch {
	case len(body) > MaxMessageLen:
		fe.Addf("message", "must be at most %d bytes", MaxMessageLen)
		return
	case strings.IndexByte(body, 0) >= 0:
		fe.Add("message", "must not contain NUL")
		return
	case !utf8.ValidString(body):
		fe.Add("message", "must be valid UTF-8")
		return
	}
	if IsHTML(body) {
		msg.HTML, msg.Text = body, HTMLToText(body)
		return
	}
	msg.Text = body
}

// checkOTP checks a declared code: MinOTPDigits to MaxOTPDigits ASCII
// digits, found in the subject or a body of msg on its own (not inside a
// longer run of digits, which would be another number). The text is
// searched only once it is whole: when the subject, the body or the
// template was refused, that field's error says what is wrong. It
// reports whether the code is good; its messages never echo it.
func checkOTP(fe *record.FieldErrors, code string, msg *Message) bool {
	if len(code) < MinOTPDigits || len(code) > MaxOTPDigits || !allDigits(code) {
		fe.Addf("otp", "must be %d to %d digits", MinOTPDigits, MaxOTPDigits)
		return false
	}
	for _, f := range []string{"subject", "message", "template_slug", "variables"} {
		if fe.Has(f) {
			return false
		}
	}
	if msg.HTML == "" && msg.Text == "" {
		return false // a renderer refused the variables (variables.NAME): no text yet
	}
	if !hasCode(msg.Subject, code) && !hasCode(msg.HTML, code) && !hasCode(msg.Text, code) {
		fe.Add("otp", "does not appear in the subject or the body: declare the code the message carries")
		return false
	}
	return true
}

// hasCode reports whether code occurs in text with no ASCII digit just
// before or after it.
func hasCode(text, code string) bool {
	for at := 0; ; {
		k := strings.Index(text[at:], code)
		if k < 0 {
			return false
		}
		start, end := at+k, at+k+len(code)
		if (start == 0 || !isDigit(text[start-1])) && (end == len(text) || !isDigit(text[end])) {
			return true
		}
		at = start + 1
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// checkSubject reports a subject that could break the header or is too
// long. field is "subject", whose characters its tag has checked, or
// "variables" for a rendered subject: the template's own text is checked
// when it is stored, so only the variables can have broken it.
func checkSubject(fe *record.FieldErrors, field, s string) bool {
	bad := ""
	if field == "variables" {
		bad = rules.Header(s)
	}
	switch {
	case bad != "":
		fe.Add(field, "put into the subject "+strings.TrimPrefix(bad, "must "))
	case len(s) > MaxSubjectLen:
		fe.Addf(field, "makes a subject of %d bytes, over the limit of %d", len(s), MaxSubjectLen)
	default:
		return true
	}
	return false
}

// Deliver hands env to the provider, once: the Notifier retries. The
// Result names the provider when the provider left it empty.
func (c *Channel) Deliver(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if env == nil || MessageOf(env) == nil {
		return nil, notify.Errorf(notify.CodeInternal, "email: Deliver got an envelope without e-mail content")
	}
	res, err := c.provider.Send(ctx, env)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, notify.Errorf(notify.CodeInternal, "email: provider %s returned no result", c.providerName)
	}
	if res.Provider == "" {
		out := *res
		out.Provider = c.providerName
		res = &out
	}
	return res, nil
}

// Interface guards
var _ notify.Channel = (*Channel)(nil)
