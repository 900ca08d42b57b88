package sms

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/reqcodec"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/internal/settings"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/sendwindow"
	"github.com/notifykit/notify/template/dlt"
)

// Limits of the request fields the channel checks.
const (
	// DefaultMaxSegments is the longest message, in segments, that a
	// Channel sends unless Config.MaxSegments says otherwise.
	DefaultMaxSegments = 10
	// dltHeaderLen is the length of a DLT sender header.
	dltHeaderLen = 6
	// maxSenderLen is the longest alphanumeric sender ID GSM can carry.
	maxSenderLen = 11
	// maxBrandLen bounds the brand put in the OTP text, the length of a
	// DLT variable, since OTP texts are usually DLT templates.
	maxBrandLen = dlt.MaxValueLen
)

// Config configures a Channel.
type Config struct {
	// Provider delivers every message of the channel that no rule of
	// Providers takes first: it comes after them, with a rule that
	// matches every message. Provider or Providers is required.
	Provider notify.Provider
	// Providers are the channel's providers with the rules that pick
	// them, in order. A message goes to the first provider whose rule it
	// matches; after a certain, temporary refusal of that provider (down,
	// rate limited, out of vendor credit) the Notifier offers it to the
	// next that matches, and so on (notify.Envelope.Providers), priced
	// for the provider that took it and never more than first charged.
	// An unknown outcome is never offered to another: that could send it
	// twice. A message no rule matches is refused before anything is
	// charged. Default none: Provider alone.
	Providers []ProviderRule
	// Numbers reads the numbers of countries other than India, such as
	// phone/world's Plan{}; whether an account may send to one is its own
	// allow list (notify.Account.Countries). Nil: the registered plan
	// (phone.RegisterPlan), phone/world's when the program imports it, so
	// that the plan is given once for every channel and verify; with none
	// registered, Indian numbers only, which keeps libphonenumber's
	// metadata out of the binary. phone.IndiaOnly keeps a channel to
	// India's numbers whatever is registered. Default nil.
	Numbers phone.Plan
	// FixedLineCountries are the countries (ISO 3166-1 alpha-2 codes)
	// whose fixed lines take SMS through the channel's vendors (some
	// operators read them out as speech); a fixed-line number of any other
	// country is refused. Default none.
	FixedLineCountries []string
	// Renderer renders requests with a template_slug from the template's
	// SMS form. Optional: without it such requests are refused with
	// InvalidArgument on template_slug. Default none.
	Renderer notify.TemplateRenderer
	// OTPText returns the text of an otp-route message for the code and
	// the brand (brand may be empty). It must not fail or keep the code.
	// Default DefaultOTPText.
	OTPText func(code, brand string) string
	// MaxSegments is the most segments one message may take; longer
	// messages are refused. Default DefaultMaxSegments (10).
	MaxSegments int
	// AllowUnregisteredDLT lets the dlt route use a template ID that the
	// account has not registered, when the request also gives the entity
	// ID. The text is then sent unchecked: a mismatch is found only by the
	// operator's scrubber, after the message was charged (the vendor's
	// refusal is refunded). Default false: such requests are refused.
	AllowUnregisteredDLT bool
	// RefundReportedFailures gives the charge of a message back when a
	// delivery report fails it after the vendor accepted it, for a vendor
	// that refunds undelivered SMS. Default false: SMS vendors bill a
	// message when they submit it to the operator (Indian bulk SMS vendors
	// do), so an undelivered SMS was paid for, and its charge stands
	// (Channel.Refund).
	RefundReportedFailures bool
	// Windows are the hours in which messages may go (package
	// sendwindow): a message outside its window is scheduled on the
	// Notifier's queue for the opening (notify.Envelope.Window). Nil:
	// sendwindow.TRAI alone, promotional SMS to India from 09:00 to 21:00
	// IST; an empty, non-nil Rules holds nothing. Messages with a
	// one-time code are never held.
	Windows sendwindow.Rules
}

// DefaultOTPText is the default Config.OTPText: "482913 is your ACME
// verification code. Do not share it with anyone.", without the brand
// when brand is empty.
func DefaultOTPText(code, brand string) string {
	if brand == "" {
		return code + " is your verification code. Do not share it with anyone."
	}
	return code + " is your " + brand + " verification code. Do not share it with anyone."
}

// Channel is the SMS channel. It implements notify.Channel for sms.Kind;
// create it with New. It is safe for concurrent use and keeps no state
// between sends but the accounts' decoded settings (a bounded cache).
type Channel struct {
	router       router
	numbers      phone.Plan
	fixedLines   []string
	renderer     notify.TemplateRenderer
	otpText      func(code, brand string) string
	maxSegments  int
	unregistered bool
	refunds      bool
	windows      sendwindow.Rules
	settings     settings.Cache[Settings] // the accounts' Settings, decoded
}

// New returns a Channel that sends through cfg's providers. It fails
// when there is none, a rule's provider is missing, two providers share a
// name, a rule's country is not an ISO 3166-1 alpha-2 code in capitals or
// its prefix the start of an E.164 number, MaxSegments is negative, or a
// window is malformed (sendwindow.Window.Check).
func New(cfg Config) (*Channel, error) {
	rt, err := newRouter(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.MaxSegments < 0 {
		return nil, errors.New("sms: Config.MaxSegments must not be negative")
	}
	windows := cfg.Windows
	if windows == nil {
		windows = sendwindow.Rules{sendwindow.TRAI()}
	}
	if err := windows.Check(); err != nil {
		return nil, fmt.Errorf("sms: Config.Windows: %w", err)
	}
	c := &Channel{
		router:       rt,
		numbers:      cfg.Numbers,
		fixedLines:   slices.Clone(cfg.FixedLineCountries),
		renderer:     cfg.Renderer,
		otpText:      cfg.OTPText,
		maxSegments:  cfg.MaxSegments,
		unregistered: cfg.AllowUnregisteredDLT,
		refunds:      cfg.RefundReportedFailures,
		windows:      slices.Clone(windows),
	}
	if c.otpText == nil {
		c.otpText = DefaultOTPText
	}
	if c.maxSegments == 0 {
		c.maxSegments = DefaultMaxSegments
	}
	return c, nil
}

// Kind returns Kind.
func (c *Channel) Kind() notify.Kind { return Kind }

// Recipient implements notify.Channel: a number in E.164 form, without
// the spaces, dashes and parentheses people write in it
// (phone.Canonical). A number without its calling code is refused: which
// country it is of depends on an account.
func (c *Channel) Recipient(to string) (string, error) {
	if n, ok := phone.Canonical(to); ok {
		return n, nil
	}
	return "", notify.InvalidField("to", "must be a phone number in E.164 form, as +919876543210")
}

// Prepare validates and normalises an *Request for acct, renders
// its template and checks its DLT text, as the package documentation
// describes. It returns the envelope with Kind, To, Provider, Units
// (segments), Class, Domain and SMS set. Every bad field is reported in one
// InvalidArgument error; a failing renderer's other errors are returned as
// they are. Prepare has no side effects and does not retain req.
func (c *Channel) Prepare(ctx context.Context, acct *notify.Account, req notify.Request) (*notify.Envelope, error) {
	r, ok := req.(*Request)
	if !ok || r == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "sms: the SMS channel cannot send %T", req)
	}
	if acct == nil {
		return nil, notify.Errorf(notify.CodeInternal, "sms: Prepare needs an account")
	}
	set, err := c.settings.Of(acct, Kind)
	if err != nil {
		return nil, err
	}
	var fe record.FieldErrors

	to := c.recipient(&fe, acct, r.To)
	rules.Check(&fe, r)

	route := r.Route
	if route == "" {
		route = RouteSMS
	}
	if route == RouteDLT && to.Region != "" && to.Region != dltRegion {
		fe.Addf("route", "dlt is India's scheme, for +91 numbers only, and the number is of %s", to.Region)
	}

	sender, senderDefaulted := r.SenderID, false
	if sender == "" {
		sender, senderDefaulted = set.SenderID, true
	}
	if route == RouteDLT {
		sender = checkDLTHeader(&fe, sender, senderDefaulted)
	} else if sender != "" {
		checkSender(&fe, sender, senderDefaulted)
	}
	if !fe.Has("sender_id") {
		checkAllowedSender(&fe, set, sender)
	}

	// The envelope and its content are allocated together: one allocation
	// per send instead of two.
	prepared := &struct {
		env notify.Envelope
		msg Message
	}{}
	msg := &prepared.msg
	msg.Route, msg.SenderID = route, sender
	class := record.Transactional
	var text string
	textOK := true // false once a problem with the text is reported

	var varies bool // the template has variants: a locale could word it otherwise
	if route == RouteOTP {
		text, varies, textOK, err = c.otp(ctx, &fe, acct, r, msg)
	} else {
		text, class, varies, textOK, err = c.body(ctx, &fe, acct, r)
	}
	if err != nil {
		return nil, err
	}
	if textOK {
		code := msg.OTP
		if route != RouteOTP {
			code = strings.TrimSpace(r.Variables["OTP"])
		}
		text = autofill(&fe, r, code, text)
		textOK = checkText(&fe, text)
	}
	if route == RouteDLT {
		c.dltIDs(&fe, set, r, msg, text, textOK)
	}

	var enc Encoding
	var segments int
	if textOK {
		enc, segments, _ = Segments(text)
		if segments > c.maxSegments {
			fe.Addf("message", "is %d segments long (%s), over the limit of %d", segments, encodingName(enc), c.maxSegments)
		}
	}
	var provider string
	var providers []string
	if len(fe) == 0 {
		var ok bool
		if provider, providers, ok = c.router.pick(acct.ID, to, route); !ok {
			fe.Addf("to", "is a number of %s, which no provider of this SMS channel takes on the %s route", to.Region, route)
		} else if route == RouteDLT {
			provider, providers = c.router.withDLTIDs(&fe, msg, provider, providers)
		}
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	msg.Text, msg.Encoding, msg.Segments, msg.NumberType = text, enc, segments, to.Type
	prepared.env = notify.Envelope{
		Kind:      Kind,
		To:        to.E164,
		Country:   to.Region,
		Provider:  provider,
		Providers: providers,
		Units:     segments,
		Class:     class,
		Route:     string(route),
		Domain:    r.Domain,
		Category:  r.Category,
		Content:   msg,
		Window:    c.windows.For(class, to.Region, to.E164),
		// The otp route, or any template filled with a code.
		CarriesOTP: route == RouteOTP || strings.TrimSpace(r.Variables["OTP"]) != "",
	}
	// A DLT template ID the request names pins the wording it registered:
	// no locale of the recipient's changes it.
	if varies && r.Locale == "" && !(route == RouteDLT && strings.TrimSpace(r.DLTTemplateID) != "") {
		prepared.env.Localized = reqcodec.Localized(r, setLocale)
	}
	return &prepared.env, nil
}

// dltRegion is the country whose operators run DLT: India.
const dltRegion = "IN"

// recipient reads the number to, for acct: in E.164 form, of a country
// the account may send to, able to take an SMS. A problem is added to fe
// and the zero Number returned.
func (c *Channel) recipient(fe *record.FieldErrors, acct *notify.Account, to string) phone.Number {
	n, err := phone.ParseAllowed(to, acct.Region, acct.Countries, c.numbers)
	if err == nil && !n.Type.TakesSMS() && !(n.Type == phone.FixedLine && slices.Contains(c.fixedLines, n.Region)) {
		err = fmt.Errorf("is a %s number, which cannot take an SMS", n.Type)
	}
	if err != nil {
		fe.Add("to", err.Error())
		return phone.Number{}
	}
	return n
}

// body returns the text of an sms- or dlt-route message: the rendered
// template, or Message. textOK is false when a problem with the text was
// reported; err is a renderer failure other than bad input.
func (c *Channel) body(ctx context.Context, fe *record.FieldErrors, acct *notify.Account, r *Request) (text string, class record.PriceClass, varies, textOK bool, err error) {
	class = record.Transactional
	if r.TemplateSlug == "" {
		if strings.TrimSpace(r.Message) == "" {
			fe.Add("message", "is required")
			return "", class, false, false, nil
		}
		return r.Message, class, false, true, nil
	}
	rd, ok, err := c.render(ctx, fe, acct, r.TemplateSlug, r.Locale, r.Variables)
	if err != nil || !ok {
		return "", class, false, false, err
	}
	if rd.Class != "" {
		class = rd.Class
	}
	if strings.TrimSpace(rd.Text) == "" {
		fe.Addf("template_slug", "template %s has no SMS text", rules.Clip(r.TemplateSlug))
		return "", class, false, false, nil
	}
	return rd.Text, class, rd.Varies, true, nil
}

// render renders slug in the variant of locale with the configured renderer. Bad input is added to
// fe (ok false, err nil); other failures are returned.
func (c *Channel) render(ctx context.Context, fe *record.FieldErrors, acct *notify.Account, slug, locale string, vars record.Vars) (*notify.Rendered, bool, error) {
	if c.renderer == nil {
		fe.Add("template_slug", "templates are not configured on this SMS channel")
		return nil, false, nil
	}
	rd, err := c.renderer.Render(ctx, Kind, acct, slug, locale, vars)
	if err != nil {
		var ne *notify.Error
		if errors.As(err, &ne) && ne.Code == notify.CodeInvalidArgument {
			if len(ne.Fields) == 0 {
				fe.Add("template_slug", strings.TrimPrefix(err.Error(), string(notify.CodeInvalidArgument)+": "))
			}
			*fe = append(*fe, ne.Fields...)
			return nil, false, nil
		}
		return nil, false, err
	}
	if rd == nil {
		return nil, false, notify.Errorf(notify.CodeInternal, "sms: renderer returned no template for %s", rules.Clip(slug))
	}
	return rd, true, nil
}

// otp checks the code of an otp-route message, sets msg.OTP and returns
// the text: the rendered template, or Config.OTPText; varies is the
// template's Rendered.Varies. With a template, the
// code may come from variables.OTP instead of message, and fills OTP (and
// BRAND_NAME, when not given) of the template.
func (c *Channel) otp(ctx context.Context, fe *record.FieldErrors, acct *notify.Account, r *Request, msg *Message) (text string, varies, textOK bool, err error) {
	code := strings.TrimSpace(r.Message)
	if code == "" && r.TemplateSlug != "" {
		code = strings.TrimSpace(r.Variables["OTP"])
	}
	codeOK := checkOTP(fe, code)
	if codeOK {
		msg.OTP = code
	}

	// A bad brand is reported by its tag; an unusable account name is
	// left out of the text.
	brand := r.Brand
	if n := acct.Name; brand == "" && n != "" && rules.Text(n) == "" && utf8.RuneCountInString(n) <= maxBrandLen {
		brand = n
	}

	if r.TemplateSlug == "" {
		if !codeOK {
			return "", false, false, nil
		}
		return c.otpText(code, brand), false, true, nil
	}
	if v, ok := r.Variables["OTP"]; ok && codeOK && strings.TrimSpace(v) != code {
		fe.Add("variables.OTP", "differs from the OTP in message")
		return "", false, false, nil
	}
	vars := make(record.Vars, len(r.Variables)+2)
	maps.Copy(vars, r.Variables)
	if codeOK {
		vars["OTP"] = code
	}
	if _, ok := vars["BRAND_NAME"]; !ok && brand != "" {
		vars["BRAND_NAME"] = brand
	}
	rd, ok, rerr := c.render(ctx, fe, acct, r.TemplateSlug, r.Locale, vars)
	if rerr != nil || !ok || !codeOK {
		return "", false, false, rerr
	}
	if strings.TrimSpace(rd.Text) == "" {
		fe.Addf("template_slug", "template %s has no SMS text", rules.Clip(r.TemplateSlug))
		return "", false, false, nil
	}
	return rd.Text, rd.Varies, true, nil
}

// dltIDs resolves the template and entity IDs of a dlt-route message into
// msg and, when the text is usable, checks it against the registered
// template.
func (c *Channel) dltIDs(fe *record.FieldErrors, set *Settings, r *Request, msg *Message, text string, textOK bool) {
	id := strings.TrimSpace(r.DLTTemplateID)
	entity := strings.TrimSpace(r.DLTEntityID)
	if fe.Has("dlt_template_id") || fe.Has("dlt_entity_id") {
		return
	}
	if id == "" && r.TemplateSlug != "" && textOK {
		// A registration of the template's slug whose content the
		// rendered variant matches: each language its own DLT ID.
		if tpl, ok := findDLTVariant(set, r.TemplateSlug, text); ok {
			id = tpl.ID
		}
	}
	if id == "" {
		fe.Add("dlt_template_id", "is required on the dlt route"+registered(set))
		return
	}
	tpl, ok := findDLTTemplate(set, id)
	if !ok {
		switch {
		case !c.unregistered:
			fe.Addf("dlt_template_id", "%s is not registered on the account%s", rules.Clip(id), registered(set))
		case entity == "":
			fe.Addf("dlt_entity_id", "is required with a template the account has not registered")
		default:
			msg.DLTTemplateID, msg.DLTEntityID = id, entity
		}
		return
	}
	if entity != "" && entity != tpl.EntityID {
		fe.Addf("dlt_entity_id", "%s is not the entity registered with template %s", rules.Clip(entity), rules.Clip(id))
		return
	}
	msg.DLTTemplateID, msg.DLTEntityID = tpl.ID, tpl.EntityID
	msg.DLTMessageIDs, msg.DLTMessageID = tpl.messageIDs()
	if !textOK {
		return
	}
	values, err := dlt.Match(tpl.Content, text)
	if err != nil {
		fe.Addf("message", "does not match DLT template %s: %s", rules.Clip(id), strings.TrimPrefix(err.Error(), "dlt: "))
		return
	}
	msg.DLTValues = values
}

// findDLTVariant returns the account's registration for template slug
// whose content text matches (dlt.Match), the first of them.
func findDLTVariant(set *Settings, slug, text string) (DLTTemplate, bool) {
	for _, t := range set.DLTTemplates {
		if t.Slug == slug {
			if _, err := dlt.Match(t.Content, text); err == nil {
				return t, true
			}
		}
	}
	return DLTTemplate{}, false
}

// registered lists the account's DLT template IDs for an error message.
func registered(set *Settings) string {
	if len(set.DLTTemplates) == 0 {
		return " (the account has no registered DLT templates)"
	}
	const show = 5
	ids := make([]string, 0, show)
	for i, t := range set.DLTTemplates {
		if i == show {
			ids = append(ids, "…")
			break
		}
		ids = append(ids, t.ID)
	}
	return " (registered: " + strings.Join(ids, ", ") + ")"
}

// checkOTP reports a code that is not 4-8 ASCII digits. The code itself
// never goes into the message: it is a secret.
func checkOTP(fe *record.FieldErrors, code string) bool {
	switch {
	case rules.ValidOTP(code):
		return true
	case code == "":
		fe.Add("message", "is required: the OTP code on the otp route")
		return false
	}
	for i := 0; i < len(code); i++ {
		if code[i] < '0' || code[i] > '9' {
			fe.Add("message", "the OTP must be 4-8 digits, and it contains other characters")
			return false
		}
	}
	fe.Addf("message", "the OTP must be 4-8 digits, found %d", len(code))
	return false
}

// checkDLTHeader checks that sender is a DLT header of 6 letters and
// returns it in upper case, the form operators register.
func checkDLTHeader(fe *record.FieldErrors, sender string, defaulted bool) string {
	from := ""
	if defaulted {
		from = " (the default, the account's vendor ID)"
	}
	if sender == "" {
		fe.Add("sender_id", "is required on the dlt route: a 6-letter DLT header")
		return ""
	}
	n := utf8.RuneCountInString(sender)
	if n != dltHeaderLen {
		fe.Addf("sender_id", "must be a 6-letter DLT header on the dlt route, found %d characters%s", n, from)
		return sender
	}
	for i := 0; i < len(sender); i++ {
		if !isLetter(sender[i]) {
			fe.Addf("sender_id", "must be a 6-letter DLT header on the dlt route: letters A-Z only%s", from)
			return sender
		}
	}
	return strings.ToUpper(sender)
}

// checkSender checks a non-DLT sender ID: at most 11 letters and digits,
// what GSM can carry as an alphanumeric originator.
func checkSender(fe *record.FieldErrors, sender string, defaulted bool) {
	from := ""
	if defaulted {
		from = " (the default, the account's vendor ID)"
	}
	ok := len(sender) <= maxSenderLen
	for i := 0; ok && i < len(sender); i++ {
		ok = isLetter(sender[i]) || sender[i] >= '0' && sender[i] <= '9'
	}
	if !ok {
		fe.Addf("sender_id", "must be at most %d letters and digits%s", maxSenderLen, from)
	}
}

// checkAllowedSender refuses a sender header the account has not declared
// (Settings.SenderIDs), so that one account cannot send under another's
// header.
func checkAllowedSender(fe *record.FieldErrors, set *Settings, sender string) {
	if len(set.SenderIDs) == 0 || sender == "" {
		return
	}
	for _, id := range set.SenderIDs {
		if strings.EqualFold(id, sender) {
			return
		}
	}
	fe.Addf("sender_id", "%s is not one of the account's sender IDs (%s)", rules.Clip(sender), strings.Join(set.SenderIDs, ", "))
}

// checkText reports text that cannot be sent as an SMS.
func checkText(fe *record.FieldErrors, text string) bool {
	if !utf8.ValidString(text) {
		fe.Add("message", "must be valid UTF-8")
		return false
	}
	if strings.IndexByte(text, 0) >= 0 {
		fe.Add("message", "must not contain NUL characters")
		return false
	}
	return true
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

func encodingName(enc Encoding) string {
	if enc == UCS2 {
		return "UCS-2"
	}
	return "GSM-7"
}

// Deliver hands env to its provider (env.Provider), once; the Notifier
// retries, and offers it to the next of env.Providers. The provider's
// result and error are returned as they are.
func (c *Channel) Deliver(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if env == nil || MessageOf(env) == nil {
		return nil, notify.Errorf(notify.CodeInternal, "sms: Deliver needs an SMS envelope")
	}
	p, ok := c.router.provider(env.Provider)
	if !ok {
		return nil, notify.Errorf(notify.CodeInternal, "sms: the channel has no provider %q", env.Provider)
	}
	return p.Send(ctx, env)
}

// MaxBatch implements notify.BatchDeliverer: the smallest MaxBatch of the
// providers that are BatchSenders, or 1 when one is not (a batch goes to
// the first provider of its messages, whichever that is).
func (c *Channel) MaxBatch() int {
	most := 0
	for _, p := range c.router.byName {
		b, ok := p.(BatchSender)
		if !ok {
			return 1
		}
		if m := max(1, b.MaxBatch()); most == 0 || m < most {
			most = m
		}
	}
	return max(1, most)
}

// DeliverBatch implements notify.BatchDeliverer: envs, which differ only
// in their recipients, go to the provider in one SendBatch call when it is
// a BatchSender; otherwise envs must be one envelope, sent with
// Send.
func (c *Channel) DeliverBatch(ctx context.Context, envs []*notify.Envelope) ([]*notify.Result, error) {
	for _, env := range envs {
		if env == nil || MessageOf(env) == nil {
			return nil, notify.Errorf(notify.CodeInternal, "sms: DeliverBatch needs SMS envelopes")
		}
	}
	p, ok := c.router.provider(envs[0].Provider)
	if !ok {
		return nil, notify.Errorf(notify.CodeInternal, "sms: the channel has no provider %q", envs[0].Provider)
	}
	for _, env := range envs[1:] {
		if env.Provider != envs[0].Provider {
			return nil, notify.Errorf(notify.CodeInternal, "sms: a batch goes to one provider, not to %s and %s", envs[0].Provider, env.Provider)
		}
	}
	if b, ok := p.(BatchSender); ok {
		return b.SendBatch(ctx, envs)
	}
	if len(envs) != 1 {
		return nil, notify.Errorf(notify.CodeInternal, "sms: provider %s sends one message at a time, not %d", envs[0].Provider, len(envs))
	}
	res, err := p.Send(ctx, envs[0])
	if err != nil {
		return nil, err
	}
	return []*notify.Result{res}, nil
}

// CheckHealth reports whether the channel can send, by asking the
// providers that can tell (their CheckHealth, see notify.Provider): the channel is healthy while one of them is (a message
// fails over to it), and a provider that cannot tell is taken as
// healthy. The error joins every provider's.
func (c *Channel) CheckHealth(ctx context.Context) error {
	var errs []error
	for _, name := range c.router.names() {
		p, _ := c.router.provider(name)
		h, ok := p.(healthChecker)
		if !ok {
			return nil
		}
		err := h.CheckHealth(ctx)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	return errors.Join(errs...)
}

// healthChecker is a provider that can tell whether its vendor is
// reachable.
type healthChecker interface {
	CheckHealth(ctx context.Context) error
}

// String names the channel and its providers, for logs.
func (c *Channel) String() string {
	return fmt.Sprintf("sms channel via %s", strings.Join(c.router.names(), ", "))
}

// Interface guards
var (
	_ notify.BatchDeliverer = (*Channel)(nil)
	_ notify.Channel        = (*Channel)(nil)
)

// findDLTTemplate returns the account's registered DLT template with the
// given ID.
func findDLTTemplate(set *Settings, id string) (DLTTemplate, bool) {
	for _, t := range set.DLTTemplates {
		if t.ID == id {
			return t, true
		}
	}
	return DLTTemplate{}, false
}
