package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
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
	// has one. Default: a client of its own with a 30 s timeout.
	HTTPClient *http.Client
	// Name is the provider's name in receipts and per-provider timeouts.
	// Default "gateway".
	Name string
}

// Provider sends envelopes through a remote gateway that serves the API of
// spec/gateway-api.md: the hosted service or another instance of
// examples/gateway. One Provider serves every kind, so it can be the
// provider of the SMS, e-mail and chat channels at once. It is safe for
// concurrent use and keeps no state between sends.
type Provider struct {
	base   string
	auth   string
	client *http.Client
	name   string
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
	p := &Provider{base: base, auth: "Bearer " + key, client: cfg.HTTPClient, name: cfg.Name}
	if p.client == nil {
		p.client = &http.Client{Timeout: 30 * time.Second}
	}
	if p.name == "" {
		p.name = "gateway"
	}
	return p, nil
}

// Name returns Config.Name, default "gateway".
func (p *Provider) Name() string { return p.name }

// Send posts env to the endpoint of its kind (see the package
// documentation for the mapping) with Idempotency-Key set to env.ID, and
// returns the remote message ID as ProviderMessageID. Errors are
// classified from the remote's status and error code; see the package
// documentation.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if env == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: nil envelope")
	}
	path, body, err := request(env)
	if err != nil {
		return nil, err
	}
	var res response
	status, hdr, err := p.do(ctx, http.MethodPost, path, env.ID, body, &res)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK || !res.Success {
		return nil, classify(status, hdr, &res)
	}
	if res.MessageID == "" {
		// The remote says it sent but not under which ID: a protocol
		// mismatch. Retrying is safe (same Idempotency-Key) but will not
		// help, so this is not a temporary code.
		return nil, notify.Errorf(notify.CodeInternal, "gateway: %s answered success without a message_id", path)
	}
	return &notify.Result{
		Provider:          p.name,
		ProviderMessageID: res.MessageID,
		Gateway:           notify.ChatGateway(res.Gateway),
		Note:              res.Note,
	}, nil
}

// Balance returns the remote account's wallet balance (GET /balance).
func (p *Provider) Balance(ctx context.Context) (notify.Balance, error) {
	var res balanceResponse
	status, hdr, err := p.do(ctx, http.MethodGet, "/balance", "", nil, &res)
	if err != nil {
		return notify.Balance{}, err
	}
	if status != http.StatusOK || !res.Success {
		return notify.Balance{}, classify(status, hdr, &res.response)
	}
	d := res.Data
	cur := notify.Currency{Code: d.Currency.Code, Symbol: d.Currency.Symbol, Exponent: d.Currency.Exponent}
	return notify.Balance{Account: d.Account, Name: d.Name, Available: notify.Money{Minor: d.BalanceMinor, Currency: cur}}, nil
}

// CheckHealth implements notify.HealthChecker: the remote must answer GET
// /balance with 200 for the configured key.
func (p *Provider) CheckHealth(ctx context.Context) error {
	_, err := p.Balance(ctx)
	return err
}

// maxResponse bounds the response body read; the gateway's answers are a
// few hundred bytes.
const maxResponse = 1 << 20

// do sends one request and decodes the JSON answer into out. A transport
// failure is CodeUnavailable: safe to retry, as the Idempotency-Key makes
// the remote return the first receipt if the message did go out.
func (p *Provider) do(ctx context.Context, method, path, idemKey string, body []byte, out any) (int, http.Header, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil {
		return 0, nil, notify.Errorf(notify.CodeInternal, "gateway: building the request: %v", err)
	}
	req.Header.Set("Authorization", p.auth)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return 0, nil, cerr
		}
		return 0, nil, notify.Errorf(notify.CodeUnavailable, "gateway: %s %s: %v", method, path, transportError(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return 0, nil, cerr
		}
		return 0, nil, notify.Errorf(notify.CodeUnavailable, "gateway: reading the answer to %s %s: %v", method, path, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		// Not our API's JSON: a proxy's error page, a wrong BaseURL.
		if resp.StatusCode >= 500 {
			return 0, nil, notify.Errorf(notify.CodeUnavailable, "gateway: %s %s: HTTP %d without a JSON body", method, path, resp.StatusCode)
		}
		return 0, nil, notify.Errorf(notify.CodeRejected, "gateway: %s %s: HTTP %d without the API's JSON body; check Config.BaseURL", method, path, resp.StatusCode)
	}
	return resp.StatusCode, resp.Header, nil
}

// transportError keeps the cause of a transport failure but not the URL,
// which *url.Error repeats (harmless, as it holds no key, but noisy).
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// response is the part of every answer the provider reads.
type response struct {
	Success   bool      `json:"success"`
	MessageID string    `json:"message_id"`
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

// classify turns a remote failure into a notify error, by status first
// (the status is the contract, the code says more).
func classify(status int, hdr http.Header, res *response) error {
	code, msg := "", ""
	var fields map[string]string
	var retry time.Duration
	if res.Error != nil {
		code, msg, fields = res.Error.Code, res.Error.Message, res.Error.Fields
		retry = time.Duration(res.Error.RetryAfterSeconds) * time.Second
	}
	if ra := retryAfter(hdr.Get("Retry-After")); ra > 0 {
		retry = ra
	}
	why := fmt.Sprintf("remote %d", status)
	if code != "" {
		why += " " + code
	}
	if msg != "" {
		why += ": " + msg
	}
	e := &notify.Error{Err: errors.New("gateway: " + why)}
	switch {
	case status == http.StatusOK:
		// success:false with 200 breaks the API's contract.
		e.Code = notify.CodeInternal
	case status == http.StatusBadRequest:
		e.Code = notify.CodeInvalidArgument
		for f, m := range fields {
			e.Fields = append(e.Fields, notify.FieldError{Field: f, Message: m})
		}
		sortFields(e.Fields)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Code = notify.CodeRejected
		e.Err = errors.New("gateway: " + why + " (check Config.APIKey and the remote account)")
	case status == http.StatusPaymentRequired:
		// The remote wallet is empty: retrying soon will not help, and
		// passing insufficient_funds on would blame the local wallet.
		e.Code = notify.CodeRejected
		e.Err = errors.New("gateway: " + why + " (the remote account's wallet needs a top-up)")
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusUnsupportedMediaType:
		e.Code = notify.CodeRejected
		e.Err = errors.New("gateway: " + why + " (check Config.BaseURL)")
	case status == http.StatusConflict:
		// Our key is the message ID, unique per message: a conflict means
		// the first attempt is still in flight at the remote. A retry finds
		// its receipt or, if it failed, sends afresh.
		e.Code = notify.CodeUnavailable
	case status == http.StatusTooManyRequests:
		e.Code = notify.CodeRateLimited
		e.RetryAfter = retry
	case status >= 500 && status != http.StatusBadGateway && status != http.StatusNotImplemented:
		e.Code = notify.CodeUnavailable
	default: // 502 (the remote's provider refused), 413, 501, other 4xx
		e.Code = notify.CodeRejected
	}
	return e
}

func sortFields(f []notify.FieldError) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && f[j].Field < f[j-1].Field; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

// retryAfter parses a Retry-After value: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 || s > 86400 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// smsBody, chatBody and emailBody are the JSON of the endpoints, in the
// spec's field names.
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
}

type emailBody struct {
	To       string `json:"to"`
	Subject  string `json:"subject"`
	Message  string `json:"message"`
	FromName string `json:"from_name,omitempty"`
	ReplyTo  string `json:"reply_to,omitempty"`
	Purpose  string `json:"purpose,omitempty"`
	Domain   string `json:"domain,omitempty"`
}

// request maps an envelope to its endpoint and JSON body.
func request(env *notify.Envelope) (string, []byte, error) {
	var path string
	var v any
	switch {
	case env.Kind == notify.KindSMS && env.SMS != nil:
		m := env.SMS
		b := smsBody{To: env.To, Message: m.Text, Route: string(m.Route), SenderID: m.SenderID, Domain: env.Domain}
		switch m.Route {
		case notify.RouteOTP:
			// The remote renders its own OTP text from the code.
			b.Message = m.OTP
		case notify.RouteDLT:
			b.DLTTemplateID, b.DLTEntityID = m.DLTTemplateID, m.DLTEntityID
		}
		if b.Message == "" {
			return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the SMS envelope has no text")
		}
		path, v = "/sms", b
	case env.Kind == notify.KindChat && env.Chat != nil:
		m := env.Chat
		b := chatBody{To: env.To, Gateway: string(m.Gateway), Type: string(m.Type), Domain: env.Domain}
		switch {
		case m.Template != nil:
			t := m.Template
			b.TemplateName, b.Language, b.Variables, b.HeaderURL = t.Name, t.Language, t.Params, t.HeaderURL
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
	case env.Kind == notify.KindEmail && env.Email != nil:
		m := env.Email
		b := emailBody{To: env.To, Subject: m.Subject, Message: m.HTML, FromName: m.FromName,
			ReplyTo: m.ReplyTo, Purpose: string(m.Purpose), Domain: env.Domain}
		if b.Message == "" {
			b.Message = m.Text
		}
		if b.Message == "" {
			return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the e-mail envelope has no body")
		}
		path, v = "/email/send", b
	default:
		return "", nil, notify.Errorf(notify.CodeInvalidArgument, "gateway: the envelope has no content for kind %q", env.Kind)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return "", nil, notify.Errorf(notify.CodeInternal, "gateway: encoding the request: %v", err)
	}
	return path, body, nil
}

// Interface guards
var (
	_ notify.Provider      = (*Provider)(nil)
	_ notify.HealthChecker = (*Provider)(nil)
)
