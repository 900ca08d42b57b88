package chat

import (
	"context"
	"errors"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/internal/reqcodec"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/phone"
)

// Prepare validates and normalises a *Request for acct as the
// package documentation describes: it picks the content by precedence,
// formats or renders it, checks media URLs and resolves the gateway. It
// returns the envelope with Kind, To, Provider (the resolved gateway's
// provider), Units (1), Class, Domain and Chat set. Every bad field is
// reported in one InvalidArgument error; an explicit gateway without a
// provider is Unavailable; a failing renderer's other errors and the
// context's end are returned as they are. Prepare has no side effects
// other than DNS lookups and does not retain req.
func (c *Channel) Prepare(ctx context.Context, acct *notify.Account, req notify.Request) (*notify.Envelope, error) {
	r, ok := req.(*Request)
	if !ok || r == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "chat: the chat channel cannot send %T", req)
	}
	if acct == nil {
		return nil, notify.Errorf(notify.CodeInternal, "chat: Prepare needs an account")
	}
	set, err := c.settings.Of(acct, Kind)
	if err != nil {
		return nil, err
	}
	var fe record.FieldErrors

	to := c.recipient(&fe, acct, r.To)
	rules.Check(&fe, r) // otp, brand, type, gateway, template_name, file_name, domain
	if r.TemplateName == "" && hasTemplateValues(r) {
		fe.Add("template_name", "is required with a template's values (named parameters, header text, buttons): they fill a cloud template")
	}
	requested := r.Gateway
	if requested == "" {
		requested = GatewayAuto
	}
	typ := r.Type
	if typ == "" {
		typ = TypeOTP
	}
	action := normalAction(r.Action)
	if action == "" {
		fe.Addf("action", "must be login, two-step verification, registration, password reset, transaction or verification, not %s", rules.Clip(r.Action))
	}
	brand, brandGiven := brandOf(r, acct)
	lang := requestLanguage(r, &fe)
	if err := c.checkURLs(ctx, r, &fe); err != nil {
		return nil, err
	}

	msg := &Message{Type: typ}
	var tmplClass record.PriceClass
	var varies bool // the template has variants: a locale could word it otherwise
	switch {
	case r.MediaURL != "":
		msg.Media = mediaFor(r.MediaURL, r.FileName)
		msg.Text = r.Message
		checkCaption(r.Message, &fe)
	case r.TemplateSlug != "" || r.TemplateName != "":
		tmplClass, varies, err = c.template(ctx, acct, r, requested, action, lang, brandGiven, brand, msg, &fe)
		if err != nil {
			return nil, err
		}
	case r.OTP != "":
		msg.Text = c.otpText(r.OTP, action, brand)
		msg.OTP = r.OTP
		msg.Template = c.authTemplate(r.OTP, lang, requested)
	case r.Message != "":
		checkText(r.Message, &fe)
		msg.Text = r.Message
	default:
		fe.Add("message", "is required: give media_url, template_slug, template_name, otp or message")
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}

	class := record.Transactional
	if typ == TypePromotional {
		class = record.Promotional
	}
	if tmplClass == record.Promotional {
		class, msg.Type = record.Promotional, TypePromotional
	}

	// An OTP message, or a template filled with a code.
	carriesOTP := msg.OTP != "" || (msg.Media == nil && strings.TrimSpace(r.Variables["OTP"]) != "")
	gw, err := c.resolve(primary(set.PrimaryGateway), requested, msg, carriesOTP)
	if err != nil {
		return nil, err
	}
	msg.Gateway, msg.Auto = gw, requested == GatewayAuto
	msg.Fallback = msg.Auto && c.provider(other(gw)) != nil && carriesTo(msg, other(gw), carriesOTP)
	env := &notify.Envelope{
		Kind:       Kind,
		To:         to.E164,
		Country:    to.Region,
		Provider:   c.provider(gw).Name(),
		Route:      string(gw),
		Units:      1,
		Class:      class,
		Domain:     r.Domain,
		Category:   r.Category,
		Resend:     resendOf(r, msg, carriesOTP),
		Content:    msg,
		CarriesOTP: carriesOTP,
		Window:     c.windows.For(class, to.Region, to.E164),
	}
	// A language the request names pins the cloud template's: no locale
	// of the recipient's changes the wording.
	if varies && r.Locale == "" && lang == "" {
		env.Localized = reqcodec.Localized(r, setLocale)
	}
	return env, nil
}

// hasTemplateValues reports whether r gives values that only a cloud
// template named by template_name takes: named parameters, header text
// or buttons.
func hasTemplateValues(r *Request) bool {
	return len(r.NamedParams) > 0 || r.HeaderText != "" || r.HeaderName != "" || len(r.Buttons) > 0
}

// brandOf returns the brand of r's texts, trimmed, and whether r gave it;
// without one it is the account's name when that is usable text, else "".
func brandOf(r *Request, acct *notify.Account) (brand string, given bool) {
	brand = strings.TrimSpace(r.Brand)
	if brand != "" {
		return brand, true
	}
	brand = strings.TrimSpace(acct.Name)
	if rules.Text(brand) != "" {
		brand = ""
	}
	return brand, false
}

// requestLanguage returns r's language in the cloud form ("en_US"), or
// "" when r gives none; one that is not a language code is added to fe.
func requestLanguage(r *Request, fe *record.FieldErrors) string {
	if r.Language == "" {
		return ""
	}
	lang, ok := normalLanguage(r.Language)
	if !ok {
		fe.Addf("language", "must be a language code such as en, en_US or hi, not %s", rules.Clip(r.Language))
	}
	return lang
}

// checkURLs checks media_url and header_url, when given, through the
// guard: one that is not a public https URL is added to fe. Any other
// error (the context ended, or the resolver failed: Unavailable) is
// returned, since the request may be fine.
func (c *Channel) checkURLs(ctx context.Context, r *Request, fe *record.FieldErrors) error {
	for _, u := range []struct{ field, raw string }{{"media_url", r.MediaURL}, {"header_url", r.HeaderURL}} {
		if u.raw == "" {
			continue
		}
		if err := c.guard.CheckURL(ctx, u.raw); err != nil {
			var ge *netguard.Error
			if !errors.As(err, &ge) {
				return err
			}
			fe.Add(u.field, "must be a public https URL: "+ge.Reason)
		}
	}
	return nil
}

// checkCaption adds to fe a message that cannot be the caption under a
// file: over MaxCaption characters or not UTF-8.
func checkCaption(text string, fe *record.FieldErrors) {
	if utf8.RuneCountInString(text) > MaxCaption || !utf8.ValidString(text) {
		fe.Addf("message", "is the caption under the file here: at most %d characters", MaxCaption)
	}
}

// checkText adds to fe a message that cannot be sent as text: empty,
// blank, not UTF-8 or over MaxText characters.
func checkText(text string, fe *record.FieldErrors) {
	switch {
	case !utf8.ValidString(text) || strings.TrimSpace(text) == "":
		fe.Add("message", "must be non-empty UTF-8 text")
	case utf8.RuneCountInString(text) > MaxText:
		fe.Addf("message", "must be at most %d characters", MaxText)
	}
}

// resolve picks the gateway of a prepared message for an account whose
// primary gateway is first; otp reports that it carries a one-time code.
func (c *Channel) resolve(first Gateway, requested Gateway, msg *Message, otp bool) (Gateway, error) {
	cloudOnly := msg.Template != nil && msg.Text == ""
	if requested != GatewayAuto {
		if c.provider(requested) == nil {
			return "", notify.Errorf(notify.CodeUnavailable, "chat: the %s gateway is not configured", requested)
		}
		if !carriesTo(msg, requested, otp) {
			return "", errNoOTPTemplate(msg)
		}
		return requested, nil
	}
	gw := first
	if cloudOnly || (msg.Media != nil && gw == GatewayQR && c.cloud != nil && !attaches(c.qr)) {
		// A QR gateway that cannot attach files (WAHA Core) would refuse
		// the file or send a link: the cloud gateway attaches it.
		gw = GatewayCloud
	}
	if c.provider(gw) == nil || !carriesTo(msg, gw, otp) {
		if cloudOnly {
			return "", notify.Errorf(notify.CodeUnavailable, "chat: template_name needs the cloud gateway, which is not configured")
		}
		gw = other(gw)
		if c.provider(gw) == nil || !carriesTo(msg, gw, otp) {
			return "", errNoOTPTemplate(msg)
		}
	}
	return gw, nil
}

// attaches reports whether p sends media as attachments: a provider that
// says otherwise with SupportsMedia (qrchat on WAHA Core) does not.
func attaches(p notify.Provider) bool {
	m, ok := p.(interface{ SupportsMedia() bool })
	return !ok || m.SupportsMedia()
}

// errNoOTPTemplate is the error of a message with a one-time code that
// only the cloud gateway could take when no authentication template is
// configured. It is InvalidArgument, not a temporary failure: the same
// request can never go until the configuration changes. It names the
// field that carries the code, and the setting as the library and as the
// example gateway spell it.
func errNoOTPTemplate(msg *Message) error {
	field := "variables.OTP"
	if msg.OTP != "" {
		field = "otp"
	}
	return notify.InvalidField(field, "the cloud gateway sends one-time codes only through an approved authentication template, "+
		"and none is configured (chat Config.CloudOTPTemplate; the gateway's NOTIFY_CLOUD_OTP_TEMPLATE): send the code by SMS, "+
		"or by the QR gateway where one is configured")
}

// template fills msg for template_slug / template_name and returns the
// template's price class and Rendered.Varies. Validation problems go to
// fe; other errors are returned.
func (c *Channel) template(ctx context.Context, acct *notify.Account, r *Request, requested Gateway,
	action, lang string, brandGiven bool, brand string, msg *Message, fe *record.FieldErrors) (record.PriceClass, bool, error) {
	if !c.nameTemplate(r, requested, lang, msg, fe) || r.TemplateSlug == "" {
		return "", false, nil
	}
	if c.renderer == nil {
		fe.Add("template_slug", "cannot be used: no template renderer is configured")
		return "", false, nil
	}
	vars, conflict := slugVars(r, action, brandGiven, brand)
	if conflict {
		fe.Add("otp", "differs from variables.OTP; give the code once")
		return "", false, nil
	}
	rendered, err := c.renderer.Render(ctx, Kind, acct, r.TemplateSlug, r.Locale, vars)
	if err != nil {
		return "", false, mergeInvalid(err, fe)
	}
	msg.Text = rendered.Text
	if r.OTP != "" {
		msg.OTP = r.OTP
	}
	if code := strings.TrimSpace(vars["OTP"]); msg.Template == nil && code != "" {
		// A code goes to the cloud gateway only in the authentication
		// template, whatever the slug's own cloud form.
		msg.Template = c.authTemplate(code, lang, requested)
		return rendered.Class, rendered.Varies, nil
	}
	if msg.Template == nil && requested != GatewayQR && c.cloud != nil && c.cloudTmpl != nil {
		t, err := c.slugCloudTemplate(ctx, acct, r, lang, vars)
		if err != nil {
			return "", false, mergeInvalid(err, fe)
		}
		msg.Template = t
	}
	return rendered.Class, rendered.Varies, nil
}

// nameTemplate fills msg for template_name, the name of a cloud template,
// when the message can go by the cloud gateway: the configured
// authentication template takes the code, any other template its
// parameters and header. Validation problems go to fe; it reports false
// when one of them ends the checks of the request's template.
func (c *Channel) nameTemplate(r *Request, requested Gateway, lang string, msg *Message, fe *record.FieldErrors) bool {
	// template_name is for the cloud gateway; it is used when the message
	// can go that way.
	useName := r.TemplateName != "" && requested != GatewayQR && (c.cloud != nil || r.TemplateSlug == "")
	if r.TemplateName != "" && requested == GatewayQR && r.TemplateSlug == "" {
		fe.Add("template_name", "cloud templates need gateway cloud or auto; on the qr gateway use template_slug or message")
		return false
	}
	switch {
	case useName && r.TemplateName == c.otpName:
		// The configured authentication template: the code fills its
		// body and its OTP button.
		if r.OTP == "" {
			fe.Add("otp", "is required: template_name is the authentication template one-time codes go through")
			return false
		}
		if hasTemplateValues(r) {
			fe.Add("template_name", "is the authentication template, which takes the code only: no named parameters, header text or buttons")
			return false
		}
		msg.Template, msg.OTP = c.authTemplate(r.OTP, lang, requested), r.OTP
	case useName:
		msg.Template = namedTemplate(r, lang, fe)
		msg.OTP = r.OTP
	}
	return true
}

// namedTemplate returns the cloud template that r names with
// template_name (not the authentication one), in lang or en_US, with its
// parameters, positional from variables or named, and its header.
// Problems with the parameters go to fe.
func namedTemplate(r *Request, lang string, fe *record.FieldErrors) *Template {
	var params []string
	if len(r.NamedParams) > 0 {
		if len(r.Variables) > 0 {
			fe.Add("variables", "cannot go with named parameters: a template takes positional or named ones, as it was approved")
		}
	} else {
		params = positionalParams(r.Variables, r.OTP, fe)
	}
	t := &Template{Name: r.TemplateName, Language: lang, Params: params, NamedParams: r.NamedParams,
		HeaderText: r.HeaderText, HeaderName: r.HeaderName, Buttons: r.Buttons}
	if t.Language == "" {
		t.Language = "en_US"
	}
	t.HeaderURL, t.HeaderKind = r.HeaderURL, headerKind(r.HeaderURL)
	return t
}

// slugCloudTemplate returns the cloud form of r's template_slug, filled
// with vars, from the configured CloudTemplates, in the variant r's
// locale chooses: in lang when r gives one, else the variant's language
// or en_US, with r's header media.
func (c *Channel) slugCloudTemplate(ctx context.Context, acct *notify.Account, r *Request, lang string, vars record.Vars) (*Template, error) {
	t, err := c.cloudTmpl.CloudTemplate(ctx, acct, r.TemplateSlug, r.Locale, vars)
	if err != nil {
		return nil, err
	}
	if lang != "" {
		t.Language = lang
	}
	if t.Language == "" {
		t.Language = "en_US"
	}
	t.HeaderURL, t.HeaderKind = r.HeaderURL, headerKind(r.HeaderURL)
	return t, nil
}

// recipient reads the number to, for acct: in E.164 form, of a country
// the account may send to. Chat accounts may live on any kind of line, so
// the type is not checked. A problem is added to fe and the zero Number
// returned.
func (c *Channel) recipient(fe *record.FieldErrors, acct *notify.Account, to string) phone.Number {
	n, err := phone.ParseAllowed(to, acct.Region, acct.Countries, c.numbers)
	if err != nil {
		fe.Add("to", err.Error())
		return phone.Number{}
	}
	return n
}

// mergeInvalid adds the fields of an InvalidArgument error to fe and
// returns nil, or returns any other error.
func mergeInvalid(err error, fe *record.FieldErrors) error {
	var e *notify.Error
	if errors.As(err, &e) && e.Code == notify.CodeInvalidArgument && len(e.Fields) > 0 {
		*fe = append(*fe, e.Fields...)
		return nil
	}
	return err
}

// slugVars copies the request's variables and fills OTP, ACTION and
// BRAND_NAME from the request's fields unless the variables give them.
// It reports an otp that contradicts variables.OTP.
func slugVars(r *Request, action string, brandGiven bool, brand string) (record.Vars, bool) {
	vars := make(record.Vars, len(r.Variables)+3)
	for k, v := range r.Variables {
		vars[k] = v
	}
	if r.OTP != "" {
		if v, ok := vars["OTP"]; ok && v != "" && v != r.OTP {
			return nil, true
		}
		vars["OTP"] = r.OTP
	}
	if _, ok := vars["ACTION"]; !ok && r.Action != "" {
		vars["ACTION"] = action
	}
	if _, ok := vars["BRAND_NAME"]; !ok && brandGiven {
		vars["BRAND_NAME"] = brand
	}
	return vars, false
}

// positionalParams returns the body parameters of a cloud template from
// variables keyed "1".."n"; with no variables, an otp is the only one.
func positionalParams(vars record.Vars, otp string, fe *record.FieldErrors) []string {
	if len(vars) == 0 {
		if otp != "" {
			return []string{otp}
		}
		return nil
	}
	params := make([]string, len(vars))
	bad := false
	for k, v := range vars {
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 || n > len(vars) || strconv.Itoa(n) != k {
			bad = true
			continue
		}
		if strings.TrimSpace(v) == "" {
			fe.Add("variables."+k, "must not be empty: cloud template parameters need a value")
			continue
		}
		params[n-1] = v
	}
	if bad {
		fe.Add("variables", `template_name takes positional variables, "1", "2", ... without gaps (or a JSON array of values)`)
		return nil
	}
	return params
}

// headerKind tells a template header's media kind from its URL's path.
func headerKind(raw string) MediaKind {
	if raw == "" {
		return ""
	}
	switch extOfURL(raw) {
	case "pdf":
		return MediaDocument
	case "mp4", "3gp":
		return MediaVideo
	}
	return MediaImage
}

// mediaFor builds the media of a message from media_url and file_name.
func mediaFor(raw, name string) *Media {
	urlExt := extOfURL(raw)
	kindExt := urlExt
	if name != "" {
		if e := extOf(name); e != "" {
			kindExt = e
		}
	}
	m := &Media{URL: raw, Kind: MediaDocument, FileName: name}
	if imageMIME(kindExt) != "" {
		m.Kind = MediaImage
	}
	if m.FileName == "" {
		switch {
		case m.Kind == MediaImage:
			m.FileName = "Image." + kindExt
		case urlExt != "pdf" && docMIME(urlExt) != "":
			m.FileName = "Document." + urlExt
			kindExt = urlExt
		default:
			m.FileName, kindExt = "Document.pdf", "pdf"
		}
	}
	m.MIMEType = imageMIME(kindExt)
	if m.MIMEType == "" {
		m.MIMEType = docMIME(kindExt)
	}
	if m.MIMEType == "" {
		m.MIMEType = "application/octet-stream"
	}
	return m
}

// imageMIME returns the MIME type of an extension sent as an image, or
// "" when the extension is not one.
func imageMIME(ext string) string {
	switch ext {
	case "jpg", "jpeg":
		return "image/jpeg"
	case "png":
		return "image/png"
	case "webp":
		return "image/webp"
	}
	return ""
}

// docMIME returns the MIME type of a document extension the channel
// knows, or "".
func docMIME(ext string) string {
	switch ext {
	case "pdf":
		return "application/pdf"
	case "doc":
		return "application/msword"
	case "docx":
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	case "xls":
		return "application/vnd.ms-excel"
	case "xlsx":
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	case "ppt":
		return "application/vnd.ms-powerpoint"
	case "pptx":
		return "application/vnd.openxmlformats-officedocument.presentationml.presentation"
	case "txt":
		return "text/plain"
	case "csv":
		return "text/csv"
	case "mp4":
		return "video/mp4"
	}
	return ""
}

// extOf returns the lower-case extension of a file name, without the dot.
func extOf(name string) string {
	e := path.Ext(name)
	if len(e) < 2 || len(e) > 6 {
		return ""
	}
	return strings.ToLower(e[1:])
}

// extOfURL returns the extension of the last segment of a URL's path.
func extOfURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return extOf(path.Base(u.Path))
}

// normalLanguage accepts "en", "en_US", "en-US", "pt_BR" and returns the
// cloud form, "en_US".
func normalLanguage(s string) (string, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), "-", "_")
	lang, region, hasRegion := strings.Cut(s, "_")
	if len(lang) < 2 || len(lang) > 3 || !letters(lang) {
		return "", false
	}
	lang = strings.ToLower(lang)
	if !hasRegion {
		return lang, true
	}
	if len(region) < 2 || len(region) > 3 || !letters(region) {
		return "", false
	}
	return lang + "_" + strings.ToUpper(region), true
}

func letters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
