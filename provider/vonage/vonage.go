package vonage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// Defaults and limits of Config and Send.
const (
	// DefaultBaseURL is Vonage's REST API (the SMS API and the Account
	// API), still under Nexmo's name.
	DefaultBaseURL = "https://rest.nexmo.com"
	// DefaultName is the provider's name when Config.Name is empty.
	DefaultName = "vonage"
	// DefaultTimeout bounds one request of the default HTTP client; the
	// caller's context bounds it too.
	DefaultTimeout = 15 * time.Second
	// MaxClientRef is the longest client-ref Vonage takes, in characters.
	// Send puts notify.MessageRef there when it fits, and leaves it out
	// otherwise.
	MaxClientRef = 100
	// MaxCallbackLen is the longest callback URL Vonage takes, in
	// characters (its status 23 past it).
	MaxCallbackLen = 100
)

// The paths of the two endpoints under Config.BaseURL.
const (
	// SendPath is the SMS API's send endpoint, answering JSON.
	SendPath = "/sms/json"
	// BalancePath is the Account API's balance endpoint.
	BalancePath = "/account/get-balance"
)

// maxAnswer bounds the answers read; Vonage's are well under 2 KB.
const maxAnswer = 64 << 10

// Config configures a Provider.
type Config struct {
	// APIKey is the Vonage account's API key (the dashboard's API
	// settings; eight characters). Required.
	APIKey string
	// APISecret is one of the API key's secrets. It travels in the body
	// of each send and in the Authorization header of the balance query,
	// and never appears in errors. Required.
	APISecret string
	// From is the sender: a number in E.164 (+447700900000, sent
	// without the +), a number or short code of 3 to 15 digits, or an
	// alphanumeric sender ID (1 to 11 of A-Z, a-z, 0-9 and space, with
	// at least one letter). On India's dlt route a message's own SenderID
	// (sms.Message.SenderID, its registered DLT header) goes in its
	// place. Required.
	From string
	// Callback is the absolute http(s) URL, at most MaxCallbackLen
	// characters, to which Vonage sends each message's delivery receipts
	// (Webhook takes them), in place of the account's default delivery
	// receipt webhook. Default: none, the dashboard's webhook.
	Callback string
	// BaseURL is where the API is: an http(s) URL without user info,
	// query or fragment, under which Send posts to SendPath and Balance
	// asks BalancePath. A trailing slash, /sms or /sms/json is ignored.
	// Default DefaultBaseURL (https://rest.nexmo.com).
	BaseURL string
	// HTTPClient sends the requests. Default:
	// vendorhttp.NewClient(DefaultTimeout), whose idle connections Close
	// releases.
	HTTPClient *http.Client
	// Name is the provider's name in receipts, timeouts and delivery
	// reports. Default DefaultName ("vonage").
	Name string
}

// Provider sends SMS envelopes through Vonage's SMS API. Create one with
// New; it is safe for concurrent use and holds no goroutines.
type Provider struct {
	name     string
	key      string
	secret   string
	from     string
	callback string
	send     string // {base}/sms/json
	balance  string // {base}/account/get-balance
	auth     string // Basic, of the key and secret, for the balance query
	conn     *vendorhttp.Conn
}

// New returns a Provider for cfg. It fails, naming the field and never
// repeating a secret, when APIKey or APISecret is missing or holds
// control characters, From is missing or not a sender Vonage takes
// (ValidSender), Callback is not an absolute http(s) URL of at most
// MaxCallbackLen characters, or BaseURL is not an http(s) URL without
// user info, query or fragment.
func New(cfg Config) (*Provider, error) {
	for _, c := range [][2]string{{"APIKey", cfg.APIKey}, {"APISecret", cfg.APISecret}} {
		if err := vendorhttp.CheckSecret("vonage", c[0], c[1]); err != nil {
			return nil, err
		}
	}
	if !ValidSender(cfg.From) {
		return nil, errors.New("vonage: Config.From must be an E.164 number, 3 to 15 digits, or an alphanumeric sender ID (1 to 11 of A-Z, a-z, 0-9 and space, with a letter)")
	}
	if cfg.Callback != "" && !validCallback(cfg.Callback) {
		return nil, fmt.Errorf("vonage: Config.Callback must be an absolute http(s) URL of at most %d characters", MaxCallbackLen)
	}
	base, err := vendorhttp.CheckBaseURL("vonage", cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	base = vendorhttp.TrimEndpoint(base, SendPath, "/sms")
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	return &Provider{
		name:     cfg.Name,
		key:      cfg.APIKey,
		secret:   cfg.APISecret,
		from:     cfg.From,
		callback: cfg.Callback,
		send:     base + SendPath,
		balance:  base + BalancePath,
		auth:     "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.APIKey+":"+cfg.APISecret)),
		conn:     vendorhttp.NewConn(cfg.HTTPClient, DefaultTimeout),
	}, nil
}

// validCallback reports whether s can be the callback parameter.
func validCallback(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" &&
		utf8.RuneCountInString(s) <= MaxCallbackLen && strings.IndexFunc(s, unicode.IsSpace) < 0
}

// Name returns Config.Name.
func (p *Provider) Name() string { return p.name }

// Close releases the idle connections of the default HTTP client; a
// client given in Config is left alone. Send keeps working after Close.
func (p *Provider) Close() error { return p.conn.Close() }

// Send submits the envelope's SMS once and returns the message-id of its
// first part as the ProviderMessageID. A text Vonage splits into several
// parts is still one message: the Result's Note counts the parts and
// names the others. An envelope Vonage could not take (no SMS content, a
// To that is not E.164, an empty text, a dlt-route SenderID that is no
// sender, a dlt-route message without numeric DLT entity and template
// IDs) is CodeInvalidArgument naming the field, and sends nothing; other
// errors are classified as the package documentation describes.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	form, secrets, err := p.form(env)
	if err != nil {
		return nil, err
	}
	ans, err := p.conn.Do(ctx, vendorhttp.Request{Name: "vonage", Method: http.MethodPost, URL: p.send,
		URLConfig: "vonage Config.BaseURL", Body: []byte(form.Encode()),
		ContentType: "application/x-www-form-urlencoded", Limit: maxAnswer})
	if err != nil {
		return nil, err
	}
	sub, err := decodeAnswer(ans.Status, ans.Header, ans.Body, secrets)
	if err != nil {
		return nil, err
	}
	return &notify.Result{Provider: p.name, ProviderMessageID: sub.ids[0], Note: sub.note(secrets)}, nil
}

// form builds the request's parameters for env, and returns the strings
// to keep out of errors (the API secret, the OTP).
func (p *Provider) form(env *notify.Envelope) (url.Values, []string, error) {
	m := sms.MessageOf(env)
	if m == nil {
		return nil, nil, notify.InvalidField("message", "vonage sends SMS envelopes only")
	}
	var fe record.FieldErrors
	if !phone.IsE164(env.To) {
		fe.Add("to", "must be an E.164 number: +, then 7 to 15 digits")
	}
	if strings.TrimSpace(m.Text) == "" {
		fe.Add("message", "is required")
	}
	from := p.from
	// India's DLT scheme sends from the header the template is registered
	// for; anywhere else the sender is the Vonage account's (Config.From),
	// as Twilio's is: an account's header for the Indian vendors would be
	// refused where alphanumeric senders are (the US, Canada).
	if m.Route == sms.RouteDLT && m.SenderID != "" {
		if !ValidSender(m.SenderID) {
			fe.Add("sender_id", "is not a sender Vonage takes: an E.164 number, 3 to 15 digits, or 1 to 11 letters, digits and spaces with a letter")
		}
		from = m.SenderID
	}
	secrets := []string{p.secret, m.OTP, p.callback} // the callback may hold a webhook token
	v := url.Values{"api_key": {p.key}, "api_secret": {p.secret}, "from": {strings.TrimPrefix(from, "+")},
		"to": {strings.TrimPrefix(env.To, "+")}, "text": {m.Text}, "type": {textType(m)}}
	if m.Route == sms.RouteDLT {
		for _, id := range []struct{ field, param, value string }{
			{"dlt_entity_id", "entity-id", m.DLTEntityID}, {"dlt_template_id", "content-id", m.DLTTemplateID},
		} {
			if !validDLTID(id.value) {
				fe.Add(id.field, "is required on the dlt route, as the digits of the DLT registration (Vonage's "+id.param+")")
			}
			v.Set(id.param, id.value)
		}
		if env.CarriesOTP {
			secrets = append(secrets, m.DLTValues...)
		}
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, nil, err
	}
	if ref := clientRef(env); ref != "" {
		v.Set("client-ref", ref)
	}
	if p.callback != "" {
		v.Set("callback", p.callback)
	}
	return v, secrets, nil
}

// textType is the type parameter of m: unicode for a UCS-2 text (by the
// channel's count, or by the text itself when the message has none),
// else text (the GSM 03.38 alphabet).
func textType(m *sms.Message) string {
	enc := m.Encoding
	if enc == "" {
		enc, _, _ = sms.Segments(m.Text)
	}
	if enc == sms.UCS2 {
		return "unicode"
	}
	return "text"
}

// validDLTID reports whether s is a DLT ID: digits, at most 30 (India's
// are 19).
func validDLTID(s string) bool { return len(s) <= 30 && rules.Digits(s) }

// clientRef is the envelope's notify.MessageRef, or "" when the envelope
// names no account and ID or the reference is over MaxClientRef.
func clientRef(env *notify.Envelope) string {
	if env.Account == nil || env.Account.ID == "" || env.ID == "" {
		return ""
	}
	ref := notify.MessageRef(env.Account.ID, env.ID)
	if utf8.RuneCountInString(ref) > MaxClientRef {
		return ""
	}
	return ref
}

// Balance returns the Vonage account's balance in euros (EUR), read from
// the Account API's get-balance: what Vonage will still send. Digits past
// the cent are cut, never rounded up. It sends nothing, so no failure is
// of unknown outcome: a network failure, a 5xx or a 2xx that is not
// Vonage's balance is CodeUnavailable, a 429 CodeRateLimited, refused
// credentials and any other 4xx (a wrong BaseURL's 404) CodeRejected,
// and a balance that is not a decimal amount CodeInternal. It is safe to
// repeat.
func (p *Provider) Balance(ctx context.Context) (notify.Money, error) {
	ans, err := p.conn.Do(ctx, vendorhttp.Request{Name: "vonage", Method: http.MethodGet, URL: p.balance,
		URLConfig: "vonage Config.BaseURL", Header: http.Header{"Authorization": {p.auth}}, Limit: maxAnswer})
	if err != nil {
		return notify.Money{}, vendorhttp.ReadOnly(err)
	}
	switch {
	case ans.Status == http.StatusUnauthorized || ans.Status == http.StatusForbidden:
		return notify.Money{}, notify.Errorf(notify.CodeRejected,
			"vonage: get-balance: HTTP %d: Vonage refused the credentials (check vonage Config.APIKey and APISecret)", ans.Status)
	case ans.Status != http.StatusOK:
		return notify.Money{}, vendorhttp.ReadOnly(vendorhttp.Foreign("vonage", ans.Status, ans.Header, "is not a balance"))
	}
	var out struct {
		Value *json.Number `json:"value"`
	}
	dec := json.NewDecoder(bytes.NewReader(ans.Body))
	dec.UseNumber()
	if dec.Decode(&out) != nil || out.Value == nil {
		return notify.Money{}, vendorhttp.ReadOnly(vendorhttp.Foreign("vonage", ans.Status, ans.Header, "has no balance value"))
	}
	m, err := vendorhttp.Amount(out.Value.String(), wallet.EUR()) // Vonage keeps balances in euros
	if err != nil {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "vonage: get-balance: %v", err)
	}
	return m, nil
}

// CheckHealth is the readiness check of notify.Provider: Vonage is
// healthy when it answers the balance query with the account's balance.
// A balance too low to send is not reported here; watch Balance for
// that.
func (p *Provider) CheckHealth(ctx context.Context) error {
	_, err := p.Balance(ctx)
	return err
}

// ValidSender reports whether s is a from Vonage takes: an E.164 number
// (sent without its +), a number or short code of 3 to 15 digits, or an
// alphanumeric sender ID of 1 to 11 of A-Z, a-z, 0-9 and space, with at
// least one letter and no space at either end. Whether the account may
// send from it to a country is Vonage's to say (its status 15).
func ValidSender(s string) bool {
	if phone.IsE164(s) || len(s) >= 3 && len(s) <= 15 && rules.Digits(s) {
		return true
	}
	if s == "" || len(s) > 11 || strings.TrimSpace(s) != s {
		return false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
			letter = true
		case c >= '0' && c <= '9', c == ' ':
		default:
			return false
		}
	}
	return letter
}

// Interface guards
var (
	_ notify.Provider = (*Provider)(nil)
	_ io.Closer       = (*Provider)(nil)
)
