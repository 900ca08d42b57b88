package httpapi

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/fingerprint"
	"github.com/notifykit/notify/record"
)

// value is one JSON field decoded leniently: decoding never fails on it, so
// that one bad field cannot hide the others; check reports what was wrong.
type value struct {
	s    string
	kind byte // 0 absent or null, 's' string, 'n' integer, 'f' other number, 'x' other
	what string
}

// UnmarshalJSON implements json.Unmarshaler. The decoder has already
// checked that b is valid JSON, so only the shape matters here.
func (v *value) UnmarshalJSON(b []byte) error {
	*v = value{}
	if len(b) == 0 {
		return nil
	}
	switch c := b[0]; {
	case c == 'n':
		return nil
	case c == '"':
		v.kind = 's'
		if plainString(b) {
			v.s = string(b[1 : len(b)-1])
			return nil
		}
		return json.Unmarshal(b, &v.s)
	case c >= '0' && c <= '9':
		v.s = string(b)
		v.kind = 'n'
		for i := 0; i < len(b); i++ {
			if b[i] < '0' || b[i] > '9' {
				v.kind = 'f'
				break
			}
		}
	case c == '-':
		v.kind = 'f'
	case c == '{':
		v.kind, v.what = 'x', "an object"
	case c == '[':
		v.kind, v.what = 'x', "an array"
	default:
		v.kind, v.what = 'x', "a boolean"
	}
	return nil
}

// plainString reports whether the JSON string literal b needs no
// unescaping and no UTF-8 repair: the common case, decoded without help.
func plainString(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	for _, c := range b[1 : len(b)-1] {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// str returns the field as a string; numeric says whether an integer
// literal is accepted (numbers, OTP codes and numeric IDs). Bad shapes are
// recorded in fe under name and give "". Values are never echoed: they may
// be OTP codes.
func (v *value) str(fe *record.FieldErrors, name string, numeric bool) string {
	switch v.kind {
	case 0:
		return ""
	case 's':
		return v.s
	case 'n':
		if numeric {
			return v.s
		}
		fe.Add(name, "must be a string, not a number")
	case 'f':
		if numeric {
			fe.Add(name, "must be a string or a whole number without sign, fraction or exponent (send it as a string)")
		} else {
			fe.Add(name, "must be a string, not a number")
		}
	default:
		fe.Add(name, "must be a string, not "+v.what)
	}
	return ""
}

// vars holds the "variables" field; its decoding error is kept for the
// field list instead of failing the whole body.
type vars struct {
	v   record.Vars
	err error
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *vars) UnmarshalJSON(b []byte) error {
	v.err = v.v.UnmarshalJSON(b)
	return nil
}

func (v *vars) get(fe *record.FieldErrors) record.Vars {
	if v.err != nil {
		msg := v.err.Error()
		msg = strings.TrimPrefix(msg, "variables: ")
		fe.Add("variables", msg)
		return nil
	}
	return v.v
}

// alias resolves a field and its alias: either may be given; both with
// different non-empty values is an error naming both. same compares two
// values (nil: exact equality).
func alias(fe *record.FieldErrors, name string, a *value, aliasName string, b *value, numeric bool, same func(x, y string) bool) string {
	x := a.str(fe, name, numeric)
	y := b.str(fe, aliasName, numeric)
	switch {
	case x == "":
		return y
	case y == "" || x == y:
		return x
	case same != nil && same(x, y):
		return x
	}
	msg := `"` + name + `" and its alias "` + aliasName + `" differ: send one of them, or both with the same value`
	fe.Add(name, msg)
	fe.Add(aliasName, msg)
	return x
}

// sameNumber reports whether two spellings name the same mobile number,
// so that "+91 98765 43210" and 9876543210 do not conflict.
func sameNumber(x, y string) bool {
	return fingerprint.Mobile(x) == fingerprint.Mobile(y)
}

// Header is what a send request's HTTP headers say, trimmed: the
// Idempotency-Key and X-Domain headers. The built-in decoders use them
// where the body leaves the idempotency key or the domain out (a key in
// both must agree); a Decoder of your own should do the same.
type Header struct {
	IdempotencyKey string
	Domain         string
}

// Decoder decodes the JSON body of a send endpoint into the request it
// sends, for the account the request's API key named (set it as the
// request's account). A bad body is an InvalidArgument *notify.Error
// naming every bad field (record.FieldErrors), which the handler answers
// as it answers the built-in endpoints; the body is at most the
// handler's WithMaxBodyBytes and is not retained by the handler after
// the decoder returns, so a decoder must copy what it keeps. Decoders are
// called concurrently.
type Decoder func(body []byte, account string, h Header) (notify.Request, error)

// maxIdempotencyKey bounds the Idempotency-Key; longer keys are refused
// rather than stored.
const maxIdempotencyKey = 255

// common resolves the fields every endpoint shares: the domain (body
// domain/website, else X-Domain) and the idempotency key (header or body
// idempotency_key).
func common(fe *record.FieldErrors, m Header, domain, website, key *value) (dom, idem string) {
	dom = alias(fe, "domain", domain, "website", website, false, nil)
	if dom == "" {
		dom = m.Domain
	}
	body := key.str(fe, "idempotency_key", true)
	switch {
	case body == "":
		idem = m.IdempotencyKey
	case m.IdempotencyKey == "" || m.IdempotencyKey == body:
		idem = body
	default:
		fe.Add("idempotency_key", "differs from the Idempotency-Key header: send one of them, or both with the same value")
		return dom, ""
	}
	if len(idem) > maxIdempotencyKey {
		fe.Addf("idempotency_key", "must be at most %d characters", maxIdempotencyKey)
		return dom, ""
	}
	for i := 0; i < len(idem); i++ {
		if idem[i] < 0x21 || idem[i] > 0x7e {
			fe.Add("idempotency_key", "must be printable ASCII without spaces")
			return dom, ""
		}
	}
	return dom, idem
}

// smsBody is the JSON of POST /sms and /sms/send.
type smsBody struct {
	To      value `json:"to"`
	Numbers value `json:"numbers"`
	smsText
}

// smsText is the JSON an SMS body has besides its recipients: POST /sms
// and POST /sms/bulk (bulkBody) share it.
type smsText struct {
	Message         value `json:"message"`
	VariablesValues value `json:"variables_values"`
	SenderID        value `json:"sender_id"`
	Route           value `json:"route"`
	Rout            value `json:"rout"`
	DLTTemplateID   value `json:"dlt_template_id"`
	DLTEntityID     value `json:"dlt_entity_id"`
	Brand           value `json:"brand"`
	BrandName       value `json:"brand_name"`
	TemplateSlug    value `json:"template_slug"`
	Variables       vars  `json:"variables"`
	Domain          value `json:"domain"`
	Website         value `json:"website"`
	Category        value `json:"category"`
	Locale          value `json:"locale"`
	IdempotencyKey  value `json:"idempotency_key"`
	SendAt          value `json:"send_at"`
}

// fill sets every field of r but To from w, for the account, naming each
// bad field in fe, and returns the body's send_at (zero when absent).
func (w *smsText) fill(fe *record.FieldErrors, r *sms.Request, account string, m Header) time.Time {
	r.Account = account
	r.Message = alias(fe, "message", &w.Message, "variables_values", &w.VariablesValues, true, nil)
	r.SenderID = w.SenderID.str(fe, "sender_id", true)
	r.Route = sms.Route(alias(fe, "route", &w.Route, "rout", &w.Rout, false, nil))
	r.DLTTemplateID = w.DLTTemplateID.str(fe, "dlt_template_id", true)
	r.DLTEntityID = w.DLTEntityID.str(fe, "dlt_entity_id", true)
	r.Brand = alias(fe, "brand_name", &w.BrandName, "brand", &w.Brand, false, nil)
	r.TemplateSlug = w.TemplateSlug.str(fe, "template_slug", false)
	r.Variables = w.Variables.get(fe)
	r.Category = w.Category.str(fe, "category", false)
	r.Locale = w.Locale.str(fe, "locale", false)
	r.Domain, r.IdempotencyKey = common(fe, m, &w.Domain, &w.Website, &w.IdempotencyKey)
	return sendAt(fe, &w.SendAt)
}

// otpBody is the JSON of POST /send-otp.
type otpBody struct {
	To             value `json:"to"`
	OTP            value `json:"otp"`
	BrandName      value `json:"brand_name"`
	Brand          value `json:"brand"`
	Action         value `json:"action"`
	Domain         value `json:"domain"`
	Website        value `json:"website"`
	Category       value `json:"category"`
	Locale         value `json:"locale"`
	IdempotencyKey value `json:"idempotency_key"`
	SendAt         value `json:"send_at"`
}

// emailBody is the JSON of POST /email/send.
type emailBody struct {
	To             value `json:"to"`
	Subject        value `json:"subject"`
	Message        value `json:"message"`
	TemplateSlug   value `json:"template_slug"`
	Variables      vars  `json:"variables"`
	FromName       value `json:"from_name"`
	ReplyTo        value `json:"reply_to"`
	Purpose        value `json:"purpose"`
	Domain         value `json:"domain"`
	Website        value `json:"website"`
	Category       value `json:"category"`
	Locale         value `json:"locale"`
	IdempotencyKey value `json:"idempotency_key"`
	SendAt         value `json:"send_at"`
	// Cc, Bcc and Attachments are kept raw and decoded by emailList and
	// emailAttachments, which name each bad element.
	Cc          json.RawMessage `json:"cc"`
	Bcc         json.RawMessage `json:"bcc"`
	Attachments json.RawMessage `json:"attachments"`
}

// chatBody is the JSON of POST /messenger/send and its aliases.
type chatBody struct {
	To           value `json:"to"`
	OTP          value `json:"otp"`
	Action       value `json:"action"`
	Brand        value `json:"brand"`
	BrandName    value `json:"brand_name"`
	TemplateSlug value `json:"template_slug"`
	Variables    vars  `json:"variables"`
	Message      value `json:"message"`
	Type         value `json:"type"`
	Gateway      value `json:"gateway"`
	TemplateName value `json:"template_name"`
	Language     value `json:"language"`
	HeaderURL    value `json:"header_url"`
	// Template holds a template_name template's named parameters, header
	// text and button values (chattemplate.go), kept raw for its decoder.
	Template       json.RawMessage `json:"template"`
	MediaURL       value           `json:"media_url"`
	FileName       value           `json:"file_name"`
	Domain         value           `json:"domain"`
	Website        value           `json:"website"`
	Category       value           `json:"category"`
	Locale         value           `json:"locale"`
	IdempotencyKey value           `json:"idempotency_key"`
	SendAt         value           `json:"send_at"`
	// Fallback is the timed fallback chain of /messenger/send and
	// /send-messenger (fallback.go), kept raw for its steps' decoders.
	Fallback json.RawMessage `json:"fallback"`
}

// unmarshal decodes a request body, which must be one JSON object whose
// keys are matched exactly against known (see checkStrict). Errors are
// InvalidArgument *notify.Error values.
func unmarshal(body []byte, dst any, known []string) error {
	return unmarshalKeys(body, dst, known, false)
}

// unmarshalKeys is unmarshal; closed also refuses a key that is not in
// known (checkStrictKeys).
func unmarshalKeys(body []byte, dst any, known []string, closed bool) error {
	i := 0
	for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r') {
		i++
	}
	if i == len(body) {
		return notify.Errorf(notify.CodeInvalidArgument, "the request body is empty: send a JSON object")
	}
	switch body[i] {
	case '{':
	case '[':
		return notify.Errorf(notify.CodeInvalidArgument, "the request body is a JSON array: send one JSON object")
	default:
		if !json.Valid(body) {
			return notify.Errorf(notify.CodeInvalidArgument, "malformed JSON: the body must be a JSON object")
		}
		return notify.Errorf(notify.CodeInvalidArgument, "the request body must be a JSON object")
	}
	if err := json.Unmarshal(body, dst); err != nil {
		// Only syntax errors remain: every field decodes leniently.
		return notify.Errorf(notify.CodeInvalidArgument, "malformed JSON: %s", jsonErrorText(err))
	}
	// After json.Unmarshal, so that a syntax error is reported as one; on
	// a body it accepted, this is one more pass over the bytes.
	return checkStrictKeys(body, known, closed)
}

// jsonErrorText describes a JSON syntax error with its byte offset.
func jsonErrorText(err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		return strings.TrimPrefix(se.Error(), "json: ") + " at byte " + itoa(se.Offset)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func itoa(n int64) string {
	var b [20]byte
	return string(appendInt(b[:0], n))
}

// decodeSMS decodes the body of POST /sms and /sms/send, leaving out its
// send_at (decodeSMSAt).
func decodeSMS(body []byte, account string, m Header) (*sms.Request, error) {
	r, _, err := decodeSMSAt(body, account, m)
	return r, err
}

// decodeSMSAt decodes the body of POST /sms and /sms/send and its send_at
// (zero when absent).
func decodeSMSAt(body []byte, account string, m Header) (*sms.Request, time.Time, error) {
	var w smsBody
	if err := unmarshal(body, &w, smsKeys); err != nil {
		return nil, time.Time{}, err
	}
	var fe record.FieldErrors
	r := &sms.Request{To: alias(&fe, "to", &w.To, "numbers", &w.Numbers, true, sameNumber)}
	at := w.fill(&fe, r, account, m)
	if err := notify.InvalidFields(fe); err != nil {
		return nil, time.Time{}, err
	}
	return r, at, nil
}

// decodeOTP decodes the body of POST /send-otp. A send_at is a field
// error: a one-time code cannot be scheduled (noSendAt).
func decodeOTP(body []byte, account string, m Header) (*otp.Request, error) {
	var w otpBody
	if err := unmarshal(body, &w, otpKeys); err != nil {
		return nil, err
	}
	var fe record.FieldErrors
	r := &otp.Request{
		Account:   account,
		To:        w.To.str(&fe, "to", true),
		OTP:       w.OTP.str(&fe, "otp", true),
		BrandName: alias(&fe, "brand_name", &w.BrandName, "brand", &w.Brand, false, nil),
		Action:    w.Action.str(&fe, "action", false),
		Category:  w.Category.str(&fe, "category", false),
		Locale:    w.Locale.str(&fe, "locale", false),
	}
	r.Domain, r.IdempotencyKey = common(&fe, m, &w.Domain, &w.Website, &w.IdempotencyKey)
	noSendAt(&fe, &w.SendAt)
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeEmail decodes the body of POST /email/send, leaving out its
// send_at (decodeEmailAt).
func decodeEmail(body []byte, account string, m Header) (*email.Request, error) {
	r, _, err := decodeEmailAt(body, account, m)
	return r, err
}

// decodeEmailAt decodes the body of POST /email/send and its send_at
// (zero when absent).
func decodeEmailAt(body []byte, account string, m Header) (*email.Request, time.Time, error) {
	var w emailBody
	if err := unmarshal(body, &w, emailKeys); err != nil {
		return nil, time.Time{}, err
	}
	var fe record.FieldErrors
	r := &email.Request{
		Account:      account,
		To:           w.To.str(&fe, "to", false),
		Subject:      w.Subject.str(&fe, "subject", false),
		Message:      w.Message.str(&fe, "message", false),
		TemplateSlug: w.TemplateSlug.str(&fe, "template_slug", false),
		Variables:    w.Variables.get(&fe),
		FromName:     w.FromName.str(&fe, "from_name", false),
		ReplyTo:      w.ReplyTo.str(&fe, "reply_to", false),
		Purpose:      email.Purpose(w.Purpose.str(&fe, "purpose", false)),
		Cc:           emailList(&fe, "cc", w.Cc),
		Bcc:          emailList(&fe, "bcc", w.Bcc),
		Attachments:  emailAttachments(&fe, w.Attachments),
		Category:     w.Category.str(&fe, "category", false),
		Locale:       w.Locale.str(&fe, "locale", false),
	}
	r.Domain, r.IdempotencyKey = common(&fe, m, &w.Domain, &w.Website, &w.IdempotencyKey)
	at := sendAt(&fe, &w.SendAt)
	if err := notify.InvalidFields(fe); err != nil {
		return nil, time.Time{}, err
	}
	return r, at, nil
}

// maxEmailListLen bounds the elements of cc, bcc and attachments that
// are decoded: the channel refuses more anyway (email.MaxRecipients,
// email.MaxAttachments), and a huge array should cost nothing more.
const maxEmailListLen = 1000

// emailList decodes cc or bcc: absent, null or an array of strings,
// each element's shape reported as "cc[1]". The addresses are the
// channel's to check.
func emailList(fe *record.FieldErrors, name string, raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var vs []value
	if raw[0] != '[' || json.Unmarshal(raw, &vs) != nil {
		fe.Add(name, "must be an array of e-mail addresses")
		return nil
	}
	if len(vs) > maxEmailListLen {
		fe.Addf(name, "must be at most %d addresses", email.MaxRecipients)
		return nil
	}
	out := make([]string, len(vs))
	for i := range vs {
		out[i] = vs[i].str(fe, name+"["+itoa(int64(i))+"]", false)
	}
	return out
}

// emailAttachmentKeys are the keys of an attachment object; the HTTP API
// takes files by URL only.
var emailAttachmentKeys = []string{"url", "file_name", "content_type"}

// emailAttachments decodes attachments: absent, null or an array of
// objects with the keys emailAttachmentKeys, each string-valued; any
// other key is refused, naming it ("attachments[0].data").
func emailAttachments(fe *record.FieldErrors, raw json.RawMessage) []email.Attachment {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var objs []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &objs) != nil {
		fe.Add("attachments", `must be an array of objects such as {"url": "https://..."}`)
		return nil
	}
	if len(objs) > maxEmailListLen {
		fe.Addf("attachments", "must be at most %d files", email.MaxAttachments)
		return nil
	}
	out := make([]email.Attachment, len(objs))
	for i, o := range objs {
		at := "attachments[" + itoa(int64(i)) + "]"
		var fields map[string]value
		if len(o) == 0 || o[0] != '{' || json.Unmarshal(o, &fields) != nil {
			fe.Add(at, `must be an object such as {"url": "https://..."}`)
			continue
		}
		var unknown []string
		for k := range fields {
			if !slices.Contains(emailAttachmentKeys, k) {
				unknown = append(unknown, k)
			}
		}
		slices.Sort(unknown) // one order of errors for one body
		for _, k := range unknown {
			fe.Add(at+"."+k, "is not a field of an attachment: url, file_name, content_type")
		}
		u, name, ct := fields["url"], fields["file_name"], fields["content_type"]
		out[i] = email.Attachment{
			URL:         u.str(fe, at+".url", false),
			FileName:    name.str(fe, at+".file_name", false),
			ContentType: ct.str(fe, at+".content_type", false),
		}
	}
	return out
}

// decodeChat decodes the body of POST /messenger/send and its aliases,
// leaving out its send_at (decodeChatAt).
func decodeChat(body []byte, account string, m Header) (*chat.Request, error) {
	r, _, err := decodeChatAt(body, account, m, false)
	if err != nil {
		return nil, err
	}
	if wf, ok := r.(*withFallback); ok {
		r = wf.Request
	}
	return r.(*chat.Request), nil
}

// decodeChatAt decodes the body of POST /messenger/send and its aliases
// and its send_at (zero when absent); for otpRoute (/messenger/send-otp)
// a send_at is a field error instead (noSendAt).
func decodeChatAt(body []byte, account string, m Header, otpRoute bool) (notify.Request, time.Time, error) {
	var w chatBody
	if err := unmarshal(body, &w, chatKeys); err != nil {
		return nil, time.Time{}, err
	}
	var fe record.FieldErrors
	r := &chat.Request{
		Account:      account,
		To:           w.To.str(&fe, "to", true),
		OTP:          w.OTP.str(&fe, "otp", true),
		Action:       w.Action.str(&fe, "action", false),
		Brand:        alias(&fe, "brand", &w.Brand, "brand_name", &w.BrandName, false, nil),
		TemplateSlug: w.TemplateSlug.str(&fe, "template_slug", false),
		Variables:    w.Variables.get(&fe),
		Message:      w.Message.str(&fe, "message", true),
		Type:         chat.Type(w.Type.str(&fe, "type", false)),
		Gateway:      chat.Gateway(w.Gateway.str(&fe, "gateway", false)),
		TemplateName: w.TemplateName.str(&fe, "template_name", false),
		Language:     w.Language.str(&fe, "language", false),
		HeaderURL:    w.HeaderURL.str(&fe, "header_url", false),
		MediaURL:     w.MediaURL.str(&fe, "media_url", false),
		FileName:     w.FileName.str(&fe, "file_name", false),
		Category:     w.Category.str(&fe, "category", false),
		Locale:       w.Locale.str(&fe, "locale", false),
	}
	if tv := decodeTemplate(&fe, w.Template); tv.given() {
		switch {
		case r.TemplateName == "":
			fe.Add("template", "goes with template_name: its values fill a cloud template")
		case len(tv.named) > 0 && len(r.Variables) > 0:
			const msg = "template.named and variables cannot go together: a template takes named or positional parameters, as it was approved"
			fe.Add("template.named", msg)
			fe.Add("variables", msg)
		}
		if tv.headerText != "" && r.HeaderURL != "" {
			fe.Add("template.header", "cannot go with header_url: a template has a text or a media header, not both")
		}
		r.NamedParams, r.HeaderText, r.HeaderName, r.Buttons = tv.named, tv.headerText, tv.header, tv.buttons
	}
	r.Domain, r.IdempotencyKey = common(&fe, m, &w.Domain, &w.Website, &w.IdempotencyKey)
	var at time.Time
	if otpRoute {
		noSendAt(&fe, &w.SendAt)
	} else {
		at = sendAt(&fe, &w.SendAt)
	}
	var req notify.Request = r
	if given := len(w.Fallback) > 0 && string(w.Fallback) != "null"; given && otpRoute {
		fe.Add("fallback", "cannot be given here: send a one-time code as a dual OTP (/send-otp)")
	} else if given {
		req = chained(&fe, w.Fallback, r, r.To, r.Category, r.Domain, at)
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, time.Time{}, err
	}
	return req, at, nil
}
