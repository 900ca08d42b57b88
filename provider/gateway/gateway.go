package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// Config configures a Provider.
type Config struct {
	// BaseURL is the API's base address, ending in /api/v1, such as
	// "https://gateway.example.com/api/v1". A trailing slash is ignored.
	// Required.
	BaseURL string
	// APIKey is the account key at the remote gateway, sent as
	// "Authorization: Bearer <key>". Required.
	APIKey string
	// HTTPClient sends the requests; its Transport decides pooling and TLS.
	// Sends are bounded by their context, and by the client's Timeout if it
	// has one; either ending after the request was written makes the
	// outcome unknown. Default: a client of its own with a 30 s timeout
	// that never follows a redirect (vendorhttp.NewClient), whose idle
	// connections Close releases.
	HTTPClient *http.Client
	// Name is the provider's name in receipts and per-provider timeouts.
	// Default "gateway".
	Name string
}

// Provider sends envelopes through a remote gateway that serves the API of
// docs/api.md: the hosted service or another instance of
// examples/gateway. One Provider serves every kind, so it can be the
// provider of the SMS, e-mail and chat channels at once. It is safe for
// concurrent use and keeps no state between sends.
type Provider struct {
	base string
	auth string
	conn *vendorhttp.Conn
	name string
}

// New returns a Provider for cfg, or an error naming the bad field.
func New(cfg Config) (*Provider, error) {
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	u, err := url.Parse(base)
	switch {
	case base == "":
		return nil, errors.New("gateway: Config.BaseURL is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, errors.New("gateway: Config.BaseURL must be an http or https URL")
	case u.User != nil:
		return nil, errors.New("gateway: Config.BaseURL must not carry credentials; use Config.APIKey")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("gateway: Config.BaseURL must not have a query or fragment")
	case !strings.HasSuffix(u.Path, "/api/v1"):
		return nil, errors.New("gateway: Config.BaseURL must end in /api/v1")
	}
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" || strings.ContainsAny(key, " \t\r\n") {
		return nil, errors.New("gateway: Config.APIKey is required and must not contain spaces")
	}
	p := &Provider{base: base, auth: "Bearer " + key, conn: vendorhttp.NewConn(cfg.HTTPClient, 30*time.Second), name: cfg.Name}
	if p.name == "" {
		p.name = "gateway"
	}
	return p, nil
}

// Name returns Config.Name, default "gateway".
func (p *Provider) Name() string { return p.name }

// Close releases the idle connections of the default HTTP client; a
// client given in Config is left alone. Send keeps working after Close,
// opening new connections.
func (p *Provider) Close() error { return p.conn.Close() }

// Send posts env to the endpoint of its kind (see the package
// documentation for the mapping) with Idempotency-Key set to env.ID, and
// returns the remote message ID as ProviderMessageID.
//
// Every answer is one of notify.Provider's three outcomes; the package
// documentation has the whole table. In short: only HTTP 200 with
// success true and a message_id is accepted; a failure is a certain
// non-acceptance only when nothing was written (the ctx ended or the
// connection failed before the request went out, a bad envelope) or when
// the remote's JSON error body carries a code that proves it did not take
// the message; everything else (202, 409, 500, 504, a proxy's page, a
// lost or unreadable answer, a timeout after the request was written) is
// CodeOutcomeUnknown, which the Notifier never retries.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if env == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: nil envelope")
	}
	path, body, err := request(env)
	if err != nil {
		return nil, err
	}
	what := "POST " + path
	a, err := p.do(ctx, http.MethodPost, path, env.ID, body)
	if err != nil {
		return nil, err
	}
	var res response
	isJSON := json.Unmarshal(a.Body, &res) == nil
	if a.Status == http.StatusOK && isJSON && res.Success {
		if res.MessageID == "" {
			// The remote says it sent but not under which ID.
			return nil, notify.Errorf(notify.CodeOutcomeUnknown, "gateway: %s: remote answered success without a message_id; it may have sent the message", what)
		}
		return &notify.Result{
			Provider:          p.name,
			ProviderMessageID: res.MessageID,
			Route:             res.Gateway,
			Note:              res.Note,
		}, nil
	}
	if isJSON {
		if e := proven(a.Status, a.Header, &res); e != nil {
			return nil, e
		}
	} else if e := proxyRefusal(what, a.Status); e != nil {
		return nil, e
	}
	return nil, unknownAnswer(what, a.Status, isJSON, &res)
}

// proxyRefusal classifies a 4xx that is not the API's JSON: an answer from
// something in front of the remote gateway (a wrong Config.BaseURL, a
// proxy's own limits), which refuses a request before passing it on. 409
// is left unknown (only the gateway itself says it), and so is every
// other status.
func proxyRefusal(what string, status int) error {
	switch {
	case status == http.StatusTooManyRequests:
		return notify.Errorf(notify.CodeRateLimited, "gateway: %s: remote HTTP 429 without the API's JSON body (a proxy's limit)", what)
	case status >= 400 && status < 500 && status != http.StatusConflict:
		return notify.Errorf(notify.CodeRejected, "gateway: %s: remote HTTP %d without the API's JSON body, from something in front of the gateway; check Config.BaseURL", what, status)
	}
	return nil
}

// Balance returns the remote account's wallet balance (GET /balance). A
// read changes nothing at the remote, so an answer that proves nothing is
// CodeUnavailable here, not an unknown outcome.
func (p *Provider) Balance(ctx context.Context) (record.Balance, error) {
	a, err := p.do(ctx, http.MethodGet, "/balance", "", nil)
	if err != nil {
		return record.Balance{}, vendorhttp.ReadOnly(err) // a read sends nothing
	}
	var res balanceResponse
	switch {
	case json.Unmarshal(a.Body, &res) != nil:
		if a.Status < 300 {
			return record.Balance{}, notify.Errorf(notify.CodeRejected, "gateway: GET /balance: HTTP %d without the API's JSON body; check Config.BaseURL", a.Status)
		}
		return record.Balance{}, notify.Errorf(notify.CodeUnavailable, "gateway: GET /balance: HTTP %d without the API's JSON body", a.Status)
	case a.Status != http.StatusOK || !res.Success:
		if e := proven(a.Status, a.Header, &res.response); e != nil {
			return record.Balance{}, e
		}
		return record.Balance{}, notify.Errorf(notify.CodeUnavailable, "gateway: GET /balance: %s", describe(a.Status, &res.response))
	}
	d := res.Data
	cur := record.Currency{Code: d.Currency.Code, Symbol: d.Currency.Symbol, Exponent: d.Currency.Exponent}
	return record.Balance{Account: d.Account, Name: d.Name, Available: notify.Money{Minor: d.BalanceMinor, Currency: cur}}, nil
}

// CheckHealth is the readiness check of notify.Provider: the remote must answer GET
// /balance with 200 for the configured key.
func (p *Provider) CheckHealth(ctx context.Context) error {
	_, err := p.Balance(ctx)
	return err
}

// do sends one request through the vendor kit, which reads the whole
// answer and classifies a failure: CodeUnavailable when the request was
// certainly not written (nothing reached the remote), else
// CodeOutcomeUnknown; either wraps ctx.Err() when ctx ended. idemKey, when
// not empty, is sent as the Idempotency-Key.
func (p *Provider) do(ctx context.Context, method, path, idemKey string, body []byte) (*vendorhttp.Answer, error) {
	h := http.Header{"Authorization": {p.auth}}
	if idemKey != "" {
		h.Set("Idempotency-Key", idemKey)
	}
	return p.conn.Do(ctx, vendorhttp.Request{Name: "gateway: " + method + " " + path, Method: method, URL: p.base + path,
		URLConfig: "Config.BaseURL", Body: body, Header: h})
}

// response is the part of every answer the provider reads.
type response struct {
	Success   bool      `json:"success"`
	MessageID string    `json:"message_id"`
	Status    string    `json:"status"`
	Gateway   string    `json:"gateway"`
	Note      string    `json:"note"`
	Error     *apiError `json:"error"`
}

type apiError struct {
	Code              string            `json:"code"`
	Message           string            `json:"message"`
	Fields            map[string]string `json:"fields"`
	RetryAfterSeconds int64             `json:"retry_after_seconds"`
}

type balanceResponse struct {
	response
	Data struct {
		Account      string `json:"account"`
		Name         string `json:"name"`
		BalanceMinor int64  `json:"balance_minor"`
		Currency     struct {
			Code     string `json:"code"`
			Symbol   string `json:"symbol"`
			Exponent int    `json:"exponent"`
		} `json:"currency"`
	} `json:"data"`
}

// describe is the remote's answer in an error's text: status, error code,
// message and the remote's message ID, as far as they are known.
func describe(status int, res *response) string {
	why := fmt.Sprintf("remote HTTP %d", status)
	if res.Error != nil {
		if res.Error.Code != "" {
			why += " " + res.Error.Code
		}
		if res.Error.Message != "" {
			why += ": " + res.Error.Message
		}
	}
	if res.MessageID != "" {
		why += " (remote message_id " + res.MessageID + ")"
	}
	return why
}

// proven returns the error for a failure answer whose JSON body proves
// that the remote did not take the message: a status of 400 or more,
// success false and an error code that the remote gives only to requests
// it refused before handing them to a provider, or that its provider
// refused for certain. It returns nil for any other answer.
func proven(status int, hdr http.Header, res *response) error {
	if status < 400 || res.Success || res.Error == nil {
		return nil
	}
	why := "gateway: " + describe(status, res)
	e := &notify.Error{}
	switch res.Error.Code {
	case "invalid_argument":
		e.Code = notify.CodeInvalidArgument
		for f, m := range res.Error.Fields {
			e.Fields = append(e.Fields, record.FieldError{Field: f, Message: m})
		}
		sortFields(e.Fields)
	case "unauthenticated", "permission_denied":
		e.Code = notify.CodeRejected
		why += " (check Config.APIKey and the remote account)"
	case "insufficient_funds":
		// The remote wallet is empty: retrying soon will not help, and
		// passing insufficient_funds on would blame the local wallet.
		e.Code = notify.CodeRejected
		why += " (the remote account's wallet needs a top-up)"
	case "not_found", "method_not_allowed", "unsupported_media_type":
		e.Code = notify.CodeRejected
		why += " (check Config.BaseURL)"
	case "request_too_large":
		e.Code = notify.CodeRejected
		why += " (the message is over the remote's size limit)"
	case "request_headers_too_large":
		// The remote refused the head before reading the body.
		e.Code = notify.CodeRejected
		why += " (the request's headers are over the remote's limit)"
	case "rate_limited":
		e.Code = notify.CodeRateLimited
		e.RetryAfter = time.Duration(res.Error.RetryAfterSeconds) * time.Second
		if ra := vendorhttp.RetryAfter(hdr); ra > 0 {
			e.RetryAfter = ra
		}
	case "unavailable":
		e.Code = notify.CodeUnavailable
	case "rejected":
		e.Code = notify.CodeRejected
	default:
		return nil
	}
	e.Err = errors.New(why)
	return e
}

// unknownAnswer is the error of an answer that proves neither acceptance
// nor refusal.
func unknownAnswer(what string, status int, isJSON bool, res *response) error {
	var why string
	switch {
	case !isJSON:
		why = fmt.Sprintf("remote HTTP %d without the API's JSON body (a proxy's answer?)", status)
	case status == http.StatusConflict:
		why = describe(status, res) + "; another request with this Idempotency-Key, this very message, may be in flight there"
	default:
		why = describe(status, res)
	}
	return notify.Errorf(notify.CodeOutcomeUnknown, "gateway: %s: %s; the outcome is unknown, the remote may have sent the message", what, why)
}

func sortFields(f []record.FieldError) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && f[j].Field < f[j-1].Field; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

// smsBody, chatBody and emailBody are the JSON of the endpoints, in the
// HTTP API's field names.
type smsBody struct {
	To            string `json:"to"`
	Message       string `json:"message"`
	Route         string `json:"route,omitempty"`
	SenderID      string `json:"sender_id,omitempty"`
	DLTTemplateID string `json:"dlt_template_id,omitempty"`
	DLTEntityID   string `json:"dlt_entity_id,omitempty"`
	Domain        string `json:"domain,omitempty"`
}

type chatBody struct {
	To           string   `json:"to"`
	Gateway      string   `json:"gateway,omitempty"`
	Type         string   `json:"type,omitempty"`
	Message      string   `json:"message,omitempty"`
	TemplateName string   `json:"template_name,omitempty"`
	Language     string   `json:"language,omitempty"`
	Variables    []string `json:"variables,omitempty"`
	HeaderURL    string   `json:"header_url,omitempty"`
	MediaURL     string   `json:"media_url,omitempty"`
	FileName     string   `json:"file_name,omitempty"`
	Domain       string   `json:"domain,omitempty"`
	// Template carries what positional variables cannot: named
	// parameters, a text header's value and button values.
	Template *templateBody `json:"template,omitempty"`
}

// templateBody is the "template" object of a chat send.
type templateBody struct {
	Named   map[string]string `json:"named,omitempty"`
	Header  *headerBody       `json:"header,omitempty"`
	Buttons []buttonBody      `json:"buttons,omitempty"`
}

type headerBody struct {
	Text string `json:"text,omitempty"`
	Name string `json:"name,omitempty"`
}

type buttonBody struct {
	Index int    `json:"index"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// templateOf returns the "template" object of t, or nil when t has none
// of its values.
func templateOf(t *chat.Template) *templateBody {
	if len(t.NamedParams) == 0 && t.HeaderText == "" && t.HeaderName == "" && len(t.Buttons) == 0 {
		return nil
	}
	b := &templateBody{Named: t.NamedParams}
	if t.HeaderText != "" || t.HeaderName != "" {
		b.Header = &headerBody{Text: t.HeaderText, Name: t.HeaderName}
	}
	for _, bt := range t.Buttons {
		b.Buttons = append(b.Buttons, buttonBody{Index: bt.Index, Type: string(bt.Kind), Value: bt.Value})
	}
	return b
}

type emailBody struct {
	To       string   `json:"to"`
	Subject  string   `json:"subject"`
	Message  string   `json:"message"`
	FromName string   `json:"from_name,omitempty"`
	ReplyTo  string   `json:"reply_to,omitempty"`
	Purpose  string   `json:"purpose,omitempty"`
	Domain   string   `json:"domain,omitempty"`
	Cc       []string `json:"cc,omitempty"`
	Bcc      []string `json:"bcc,omitempty"`
	// Attachments go by URL only: the API takes no file bytes.
	Attachments []attachmentBody `json:"attachments,omitempty"`
}

type attachmentBody struct {
	URL         string `json:"url"`
	FileName    string `json:"file_name,omitempty"`
	ContentType string `json:"content_type,omitempty"`
}

// request maps an envelope to its endpoint and JSON body.
func request(env *notify.Envelope) (string, []byte, error) {
	var path string
	var v any
	switch {
	case env.Kind == sms.Kind && sms.MessageOf(env) != nil:
		m := sms.MessageOf(env)
		b := smsBody{To: env.To, Message: m.Text, Route: string(m.Route), SenderID: m.SenderID, Domain: env.Domain}
		switch m.Route {
		case sms.RouteOTP:
			// The remote renders its own OTP text from the code.
			b.Message = m.OTP
		case sms.RouteDLT:
			b.DLTTemplateID, b.DLTEntityID = m.DLTTemplateID, m.DLTEntityID
		}
		if b.Message == "" {
			return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the SMS envelope has no text")
		}
		path, v = "/sms", b
	case env.Kind == chat.Kind && chat.MessageOf(env) != nil:
		m := chat.MessageOf(env)
		b := chatBody{To: env.To, Gateway: string(m.Gateway), Type: string(m.Type), Domain: env.Domain}
		switch {
		case m.Template != nil:
			t := m.Template
			b.TemplateName, b.Language, b.Variables, b.HeaderURL = t.Name, t.Language, t.Params, t.HeaderURL
			b.Template = templateOf(t)
			if b.TemplateName == "" {
				return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the chat template has no name")
			}
		case m.Media != nil:
			b.MediaURL, b.FileName, b.Message = m.Media.URL, m.Media.FileName, m.Text
			if b.MediaURL == "" {
				return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the chat media has no URL")
			}
		default:
			b.Message = m.Text
			if b.Message == "" {
				return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the chat envelope has no text")
			}
		}
		path, v = "/messenger/send", b
	case env.Kind == email.Kind && email.MessageOf(env) != nil:
		m := email.MessageOf(env)
		b := emailBody{To: env.To, Subject: m.Subject, Message: m.HTML, FromName: m.FromName,
			ReplyTo: m.ReplyTo, Purpose: string(m.Purpose), Domain: env.Domain}
		if b.Message == "" {
			b.Message = m.Text
		}
		if b.Message == "" {
			return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the e-mail envelope has no body")
		}
		b.Cc, b.Bcc = m.Cc, m.Bcc
		for i, a := range m.Attachments {
			if a.URL == "" {
				// Charged per recipient but sent without its file would
				// be worse than refused: the remote API takes URLs only.
				return "", nil, notify.Errorf(notify.CodeInvalidArgument,
					"gateway: attachment %d is bytes, and the gateway's API takes attachments by URL only", i)
			}
			b.Attachments = append(b.Attachments, attachmentBody{URL: a.URL, FileName: a.FileName, ContentType: a.ContentType})
		}
		path, v = "/email/send", b
	default:
		return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the envelope has no content for kind %q", env.Kind)
	}
	body, err := json.Marshal(v)
	if err != nil {
		// Before any I/O, so certainly not sent.
		return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the envelope cannot be encoded as JSON: %v", err)
	}
	return path, body, nil
}

// Interface guards
var (
	_ notify.Provider = (*Provider)(nil)
	_ io.Closer       = (*Provider)(nil)
)
