package smsgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// Defaults of Config.
const (
	DefaultBaseURL = "https://www.fast2sms.com"
	DefaultName    = "smsgateway"
	// DefaultTimeout bounds one request of the default HTTP client; the
	// caller's context bounds it too.
	DefaultTimeout = 15 * time.Second
	// DefaultMaxBatch is how many numbers one request carries at most in
	// SendBatch. The vendor documents no bound; a thousand keeps a request
	// near 11 KB.
	DefaultMaxBatch = 1000
)

// The vendor's paths under BaseURL.
const (
	sendPath   = "/dev/bulkV2"
	walletPath = "/dev/wallet"
)

// maxBody bounds the vendor answers read; real ones are a few hundred bytes.
const maxBody = 64 << 10

// spamRetryAfter is how long the vendor's spam check (995) is assumed to
// last: it publishes no figure, and a minute is longer than the Notifier
// waits, so the send fails at once and the caller learns when to retry.
const spamRetryAfter = time.Minute

// Config configures a Provider.
type Config struct {
	// APIKey is the vendor's authorization key, sent in the authorization
	// header. It never appears in errors. Required.
	APIKey string
	// BaseURL is where the vendor's API is, in either of two forms:
	//
	//   - the base URL, such as https://www.fast2sms.com, under which the
	//     provider calls /dev/bulkV2 (Send) and /dev/wallet (Balance,
	//     CheckHealth);
	//   - the bulk SMS endpoint itself, as the vendor documents it, such as
	//     https://www.fast2sms.com/dev/bulkV2: Send calls exactly that URL,
	//     and the wallet call goes to /dev/wallet beside it.
	//
	// A trailing slash makes no difference, and the endpoint's path is
	// recognised in any letter case. It must be an http or https URL
	// without user info, query or fragment (the key goes in APIKey, never in the
	// URL). Default DefaultBaseURL (https://www.fast2sms.com).
	BaseURL string
	// HTTPClient sends the requests. Default:
	// vendorhttp.NewClient(DefaultTimeout): 15s per whole request and
	// nothing shorter for the answer, bounded dial and TLS handshake, no
	// redirects followed, on a transport of its own whose idle
	// connections Close releases.
	HTTPClient *http.Client
	// Name is the provider's name in receipts and timeouts. Default
	// DefaultName ("smsgateway").
	Name string
	// Flash sends every message as a flash SMS (shown at once, not
	// stored). Default false.
	Flash bool
	// MaxBatch is the most numbers SendBatch puts in one request. Default
	// DefaultMaxBatch (1000); lower it if the vendor refuses long lists.
	MaxBatch int
}

// Provider sends SMS envelopes through the bulk API. Create one with New;
// it is safe for concurrent use and holds no goroutines.
type Provider struct {
	name     string
	base     string
	key      string
	flash    int
	maxBatch int
	conn     *vendorhttp.Conn
}

// New returns a Provider for cfg. It fails when APIKey is missing or holds
// control characters (a pasted line break), or BaseURL is not an http(s)
// URL without user info, query or fragment.
func New(cfg Config) (*Provider, error) {
	if err := vendorhttp.CheckSecret("smsgateway", "APIKey", cfg.APIKey); err != nil {
		return nil, err
	}
	base, err := vendorhttp.CheckBaseURL("smsgateway", cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	cfg.BaseURL = base
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.MaxBatch, err = vendorhttp.MaxBatch("smsgateway", cfg.MaxBatch, DefaultMaxBatch); err != nil {
		return nil, err
	}
	p := &Provider{
		name:     cfg.Name,
		base:     vendorhttp.TrimEndpoint(cfg.BaseURL, sendPath),
		key:      cfg.APIKey,
		maxBatch: cfg.MaxBatch,
		conn:     vendorhttp.NewConn(cfg.HTTPClient, DefaultTimeout),
	}
	if cfg.Flash {
		p.flash = 1
	}
	return p, nil
}

// Name returns Config.Name.
func (p *Provider) Name() string { return p.name }

// Close releases the idle connections of the default HTTP client; a client
// given in Config is left alone. Send keeps working after Close, opening
// new connections.
func (p *Provider) Close() error { return p.conn.Close() }

// sendRequest is the JSON body of a send; empty fields are left out, as
// each route takes its own.
type sendRequest struct {
	Route           string `json:"route"`
	SenderID        string `json:"sender_id,omitempty"`
	Message         string `json:"message,omitempty"`
	Language        string `json:"language,omitempty"`
	VariablesValues string `json:"variables_values,omitempty"`
	TemplateID      string `json:"template_id,omitempty"`
	EntityID        string `json:"entity_id,omitempty"`
	Flash           int    `json:"flash"`
	Numbers         string `json:"numbers"`
}

// Send sends env as one SMS, once, and returns the vendor's request_id as
// the ProviderMessageID. Errors are classified as the package
// documentation describes; an envelope the vendor could not take (no SMS
// content, a number that is not 10 digits starting 6-9, a route's missing
// field) is CodeInvalidArgument and sends nothing.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	body, err := p.body(env)
	if err != nil {
		return nil, err
	}
	id, err := p.post(ctx, body)
	if err != nil {
		return nil, err
	}
	return &notify.Result{Provider: p.name, ProviderMessageID: id}, nil
}

// post sends one request and returns the vendor's request_id.
func (p *Provider) post(ctx context.Context, body *sendRequest) (string, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return "", notify.Errorf(notify.CodeInvalidArgument, "smsgateway: the envelope cannot be encoded as a request: %v", err)
	}
	var out response
	if err := p.call(ctx, sendPath, data, &out); err != nil {
		return "", err
	}
	if out.RequestID == "" {
		return "", vendorhttp.Unknownf("smsgateway", "the vendor reported success without a request_id")
	}
	return out.RequestID, nil
}

// MaxBatch implements sms.BatchSender: Config.MaxBatch.
func (p *Provider) MaxBatch() int { return p.maxBatch }

// SendBatch implements sms.BatchSender: it sends envs, the same SMS to
// several numbers, in one request whose numbers are comma-separated, as
// the vendor takes them, and returns the vendor's request_id as every
// envelope's ProviderMessageID (its delivery reports tell the numbers
// apart). Envelopes whose content differs, more than MaxBatch of them, or
// a number given twice are CodeInvalidArgument, with nothing sent; errors
// are otherwise Send's, for the whole batch.
func (p *Provider) SendBatch(ctx context.Context, envs []*notify.Envelope) ([]*notify.Result, error) {
	batch, err := vendorhttp.NewBatch("smsgateway", len(envs), p.maxBatch)
	if err != nil {
		return nil, err
	}
	var body *sendRequest
	numbers := make([]string, len(envs))
	for i, env := range envs {
		b, err := p.body(env)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			body = b
		}
		same := *b
		same.Numbers = body.Numbers
		if err := batch.Add(i, b.Numbers, same == *body); err != nil {
			return nil, err
		}
		numbers[i] = b.Numbers
	}
	body.Numbers = strings.Join(numbers, ",")
	id, err := p.post(ctx, body)
	if err != nil {
		return nil, err
	}
	return batch.Results(p.name, id), nil
}

// body builds the request for env's route.
func (p *Provider) body(env *notify.Envelope) (*sendRequest, error) {
	if env == nil || sms.MessageOf(env) == nil {
		return nil, notify.InvalidField("message", "smsgateway sends SMS envelopes only")
	}
	m := sms.MessageOf(env)
	var fe record.FieldErrors
	number, err := indianNumber(env.To)
	if err != nil {
		fe.Add("to", err.Error())
	}
	req := &sendRequest{Flash: p.flash, Numbers: number}
	switch {
	case m.Route == sms.RouteSMS || m.Route == "":
		req.Route = "q"
		if strings.TrimSpace(m.Text) == "" {
			fe.Add("message", "is required")
		}
		req.Message = m.Text
		req.Language = language(m)
	case m.Route == sms.RouteOTP:
		req.Route = "otp"
		if !rules.ValidOTP(m.OTP) {
			fe.Add("message", "the otp route needs a numeric OTP of 4-8 digits")
		}
		req.VariablesValues = m.OTP
	case m.Route == sms.RouteDLT && m.DLTMessageIDFor(p.name) != "":
		// The vendor's own DLT route: the template by its Message ID in
		// the vendor's DLT manager, and its values.
		req.Route, req.SenderID, req.Message = "dlt", m.SenderID, m.DLTMessageIDFor(p.name)
		if m.SenderID == "" {
			fe.Add("sender_id", "is required on the dlt route")
		}
		for i, v := range m.DLTValues {
			if strings.Contains(v, "|") {
				fe.Addf("message", "DLT value %d holds '|', which the vendor's dlt route uses to separate values", i+1)
			}
		}
		req.VariablesValues = strings.Join(m.DLTValues, "|")
	case m.Route == sms.RouteDLT:
		req.Route = "dlt_manual"
		req.SenderID, req.Message = m.SenderID, m.Text
		req.TemplateID, req.EntityID = m.DLTTemplateID, m.DLTEntityID
		if m.SenderID == "" {
			fe.Add("sender_id", "is required on the dlt route")
		}
		if strings.TrimSpace(m.Text) == "" {
			fe.Add("message", "is required")
		}
		if m.DLTTemplateID == "" {
			fe.Add("dlt_template_id", "is required on the dlt route")
		}
		if m.DLTEntityID == "" {
			fe.Add("dlt_entity_id", "is required on the dlt route")
		}
	default:
		fe.Addf("route", "smsgateway cannot send route %q", m.Route)
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	return req, nil
}

// indianNumber returns the 10-digit national form of to, which the vendor
// takes: it sends to Indian numbers only.
func indianNumber(to string) (string, error) {
	n, err := phone.Parse(to, phone.DefaultRegion, nil)
	if err != nil {
		return "", err
	}
	return n.National(), nil
}

// language is the vendor's name for the encoding the text needs.
func language(m *sms.Message) string {
	enc := m.Encoding
	if enc == "" {
		enc, _, _ = sms.Segments(m.Text)
	}
	if enc == sms.UCS2 {
		return "unicode"
	}
	return "english"
}

// response is every field the vendor's answers carry. Message is a string
// in errors and a list in successes, so it is decoded by hand. Return is
// nil when the answer has no "return".
type response struct {
	Return     *bool           `json:"return"`
	RequestID  string          `json:"request_id"`
	StatusCode int             `json:"status_code"`
	Message    json.RawMessage `json:"message"`
	Wallet     json.RawMessage `json:"wallet"`
}

// message returns the vendor's message as one line.
func (r *response) message() string {
	var s string
	if json.Unmarshal(r.Message, &s) == nil {
		return vendorhttp.CleanText(s, 200)
	}
	var list []string
	if json.Unmarshal(r.Message, &list) == nil {
		return vendorhttp.CleanText(strings.Join(list, " "), 200)
	}
	return ""
}

// call POSTs data to path and decodes a successful ("return": true) answer
// into out; every failure comes back classified (provider/vendorhttp for
// the transport: CodeUnavailable only when the request was certainly not
// written, CodeOutcomeUnknown once it may have been).
func (p *Provider) call(ctx context.Context, path string, data []byte, out *response) error {
	ans, err := p.conn.Do(ctx, vendorhttp.Request{Name: "smsgateway", Method: http.MethodPost,
		URL: p.base + path, URLConfig: "smsgateway Config.BaseURL", Body: data, Limit: maxBody,
		Header: http.Header{"Authorization": {p.key}, "Cache-Control": {"no-cache"}}})
	if err != nil {
		return err
	}
	return decodeAnswer(ans.Status, ans.Header, ans.Body, out)
}

// decodeAnswer decodes the vendor's answer into out and returns nil when
// it says "return": true; otherwise the classified error. The vendor's
// own error body ("return": false, or a status_code) is a certain refusal
// whatever the HTTP status; only an answer that is not the vendor's leaves
// the outcome unknown.
func decodeAnswer(status int, header http.Header, raw []byte, out *response) error {
	if err := json.Unmarshal(raw, out); err != nil {
		return vendorhttp.Foreign("smsgateway", status, header, "is not the vendor's JSON")
	}
	switch {
	case out.Return != nil && *out.Return:
		return nil
	case out.Return != nil || out.StatusCode != 0:
		return vendorError(status, header, out.StatusCode, out.message())
	}
	return vendorhttp.Foreign("smsgateway", status, header, "has no \"return\"")
}

// vendorError classifies the vendor's own error answer. The vendor formed
// it and took nothing, so it is a certain refusal whatever the HTTP
// status: a code the vendor documents says which; one it does not
// document, or none, is temporary on an HTTP 5xx (CodeUnavailable: the
// vendor sheds load, as {"status_code": 503, "message": "busy"}), a rate
// limit on a 429 and CodeRejected otherwise.
func vendorError(httpStatus int, header http.Header, code int, msg string) error {
	if msg == "" {
		msg = "no message"
	}
	e := notify.Errorf(notify.CodeRejected, "smsgateway: vendor status %d: %s", code, msg)
	if code == 0 {
		e = notify.Errorf(notify.CodeRejected, "smsgateway: the vendor refused the message (HTTP %d): %s", httpStatus, msg)
	}
	switch code {
	case 412, 413:
		e.Err = fmt.Errorf("%w (check smsgateway.Config.APIKey)", e.Err)
	case 416:
		e.Code = notify.CodeUnavailable
		e.Err = fmt.Errorf("%w (the vendor wallet needs a top-up)", e.Err)
	case 995:
		e.Code = notify.CodeRateLimited
		e.RetryAfter = spamRetryAfter
	case 409, 414, 415, 996, 998, 999:
		e.Err = fmt.Errorf("%w (the vendor account's settings)", e.Err)
	case 401, 402, 403, 404, 405, 406, 407, 408, 410, 411, 417, 424, 425, 426, 500, 990, 997:
	default:
		e.Code = vendorhttp.RefusalCode(httpStatus)
		if e.Code == notify.CodeRateLimited {
			e.RetryAfter = vendorhttp.RetryAfter(header)
		}
		if httpStatus >= 500 && code != 0 {
			e.Err = fmt.Errorf("%w (HTTP %d)", e.Err, httpStatus)
		}
	}
	return e
}

// Balance returns the vendor wallet's balance, in rupees (INR): what the
// vendor will still send. Digits past the paisa are cut, never rounded up.
// Errors are classified as for Send (a wrong key is CodeRejected), except
// that the call sends nothing, so a failure whose outcome would be unknown
// for a send is CodeUnavailable, and an answer without a readable wallet
// figure is CodeInternal. It is safe to repeat.
func (p *Provider) Balance(ctx context.Context) (notify.Money, error) {
	var out response
	if err := p.call(ctx, walletPath, []byte("{}"), &out); err != nil {
		// The wallet call sends nothing: no outcome is unknown.
		return notify.Money{}, vendorhttp.ReadOnly(err)
	}
	m, err := parseWallet(out.Wallet)
	if err != nil {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "smsgateway: wallet: %v", err)
	}
	return m, nil
}

// parseWallet reads the wallet figure, a JSON string ("1234.5000") or
// number, exactly.
func parseWallet(raw json.RawMessage) (notify.Money, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return notify.Money{}, errors.New("the answer has no wallet figure")
	}
	if s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return notify.Money{}, errors.New("the wallet figure is not a string or a number")
		}
		s = strings.TrimSpace(s)
	}
	m, err := vendorhttp.Amount(s, record.INR())
	if err != nil {
		return notify.Money{}, fmt.Errorf("the wallet %w", err)
	}
	return m, nil
}

// CheckHealth is the readiness check of notify.Provider: the vendor is healthy when
// it answers the wallet call. A wallet too low to send is not reported
// here; watch Balance for that.
func (p *Provider) CheckHealth(ctx context.Context) error {
	_, err := p.Balance(ctx)
	return err
}

// Interface guards
var (
	_ sms.BatchSender = (*Provider)(nil)
	_ notify.Provider = (*Provider)(nil)
	_ io.Closer       = (*Provider)(nil)
)
